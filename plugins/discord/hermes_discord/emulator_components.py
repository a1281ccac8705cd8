"""Message components in the Discord emulator: buttons on a bot's message, a press, the bot's answer.

Discord's rules that matter here: buttons come in action rows (type 1) of
at most 5 buttons (type 2), each with a ``custom_id`` of 1-100 characters
and a label of at most 80; an edit that sends ``components: []`` removes
them, an edit that sends none keeps them; a press is an ``INTERACTION_CREATE``
(type 3, component) over the gateway, and the bot must answer it with
``POST /interactions/{id}/{token}/callback`` — each interaction once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ComponentError(ValueError):
    """Components Discord would refuse (400 Invalid Form Body)."""


@dataclass
class Components:
    """Buttons per message, open interactions and the answers the bot gave them."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)   # message id -> action rows
    open: dict[str, tuple[str, str]] = field(default_factory=dict)        # interaction id -> (token, user id)
    answers: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (user id, callback body)

    def set(self, message_id: str, components: Any, *, editing: bool) -> None:
        if components is None:
            if not editing:
                self.rows.pop(message_id, None)
            return  # an edit without components keeps them
        if not isinstance(components, list) or len(components) > 5:
            raise ComponentError("components must be a list of at most 5 action rows")
        for row in components:
            buttons = row.get("components") if isinstance(row, dict) else None
            if row.get("type") != 1 or not isinstance(buttons, list) or not 1 <= len(buttons) <= 5:
                raise ComponentError("an action row (type 1) holds 1-5 components")
            for button in buttons:
                custom_id, label = button.get("custom_id"), button.get("label") or ""
                if button.get("type") != 2 or not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 100 \
                        or len(label) > 80:
                    raise ComponentError("a button (type 2) needs a custom_id of 1-100 characters, a label <= 80")
        if components:
            self.rows[message_id] = components
        else:
            self.rows.pop(message_id, None)

    def labels(self, message_id: str) -> list[str]:
        """The buttons a person sees under one message."""
        return [b.get("label", "") for row in self.rows.get(message_id, []) for b in row["components"]]

    def custom_id(self, message_id: str, label: str) -> str:
        for row in self.rows.get(message_id, []):
            for button in row["components"]:
                if button.get("label") == label:
                    return button["custom_id"]
        raise LookupError(f"no button {label!r} under message {message_id} (it shows {self.labels(message_id)})")

    def answer(self, interaction_id: str, token: str, body: Any) -> None:
        """The bot's callback; refuses a second answer and a wrong token like Discord does."""
        if self.open.get(interaction_id, ("", ""))[0] != token or not token:
            raise ComponentError("Unknown interaction")
        _, user = self.open.pop(interaction_id)
        self.answers.append((user, body if isinstance(body, dict) else {}))

    def toasts(self) -> list[tuple[str, str]]:
        """(user id, text) of every ephemeral answer: what only the presser saw."""
        return [(user, body.get("data", {}).get("content", "")) for user, body in self.answers
                if body.get("data", {}).get("flags", 0) & 64]
