"""Interactive reply buttons in the Cloud API emulator: what Meta accepts, and a person tapping one.

Meta's rules that matter here: ``type: interactive`` with ``interactive.type:
button`` has a ``body.text`` of at most 1024 characters and 1-3 buttons,
each ``{"type": "reply", "reply": {"id", "title"}}`` with an id of at most
256 characters (unique) and a title of at most 20. A tap comes back as an
``interactive`` message whose ``button_reply`` carries the id and title,
with ``context`` naming the message tapped. A sent message cannot be edited.
"""

from __future__ import annotations

from typing import Any


def check_buttons(body: Any) -> tuple[str, list[tuple[str, str]]]:
    """``(body text, [(id, title)])`` of an interactive button message; ValueError says what Meta would."""
    interactive = body.get("interactive") if isinstance(body, dict) else None
    if not isinstance(interactive, dict) or interactive.get("type") != "button":
        raise ValueError("only interactive messages of type button are emulated")
    text = (interactive.get("body") or {}).get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > 1024:
        raise ValueError("interactive['body']['text'] is required, at most 1024 characters")
    buttons = (interactive.get("action") or {}).get("buttons")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= 3:
        raise ValueError("interactive['action']['buttons'] must hold 1-3 buttons")
    found: list[tuple[str, str]] = []
    for button in buttons:
        reply = button.get("reply") if isinstance(button, dict) and button.get("type") == "reply" else None
        reply_id, title = (reply or {}).get("id"), (reply or {}).get("title")
        if not isinstance(reply_id, str) or not 1 <= len(reply_id) <= 256 or reply_id in [i for i, _ in found]:
            raise ValueError("each button needs a unique reply id of 1-256 characters")
        if not isinstance(title, str) or not 1 <= len(title) <= 20:
            raise ValueError("a button title must be 1-20 characters")
        found.append((reply_id, title))
    return text, found


def tap(sender: str, wamid: str, tapped: str, buttons: list[tuple[str, str]], title: str,
        phone_number: str) -> dict[str, Any]:
    """The message Meta sends when ``sender`` taps the button ``title`` under message ``tapped``."""
    reply_id = next((i for i, t in buttons if t == title), None)
    if reply_id is None:
        raise LookupError(f"no button {title!r} under {tapped} (it shows {[t for _, t in buttons]})")
    return {"from": sender, "id": wamid, "timestamp": "0", "type": "interactive",
            "context": {"from": phone_number, "id": tapped},
            "interactive": {"type": "button_reply", "button_reply": {"id": reply_id, "title": title}}}
