"""Block Kit buttons in the Slack emulator: buttons on a bot's message, a press, the ephemeral answer.

Slack's rules that matter here: an ``actions`` block holds at most 25
elements; a button needs ``text`` (plain_text, at most 75 characters) and an
``action_id`` of at most 255; ``chat.update`` with ``blocks`` replaces them
(``[]`` removes them), without keeps them. A press is a ``block_actions``
interaction: an ``interactive`` envelope over Socket Mode (to be acked), or
a signed form POST (``payload=...``) to the interactivity Request URL.
``chat.postEphemeral`` shows a line to one person only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


class BlockError(ValueError):
    """Blocks Slack would refuse (``invalid_blocks``)."""


@dataclass
class Blocks:
    """Buttons per message ts, and the ephemeral lines the bot showed."""

    buttons: dict[str, list[dict[str, Any]]] = field(default_factory=dict)   # ts -> button elements
    ephemeral: list[tuple[str, str, str]] = field(default_factory=list)      # (channel, user, text)

    def set(self, ts: str, blocks: Any, *, updating: bool) -> None:
        """Keep the buttons ``blocks`` holds for message ``ts`` (None on an update: unchanged)."""
        if blocks is None:
            if not updating:
                self.buttons.pop(ts, None)
            return
        found = self.parse(blocks)
        if found:
            self.buttons[ts] = found
        else:
            self.buttons.pop(ts, None)

    @staticmethod
    def parse(blocks: Any) -> list[dict[str, Any]]:
        """The button elements of ``blocks``; refuses what Slack refuses."""
        if blocks is None:
            return []
        if isinstance(blocks, str):
            try:
                blocks = json.loads(blocks)
            except ValueError:
                raise BlockError("invalid_blocks_format") from None
        if not isinstance(blocks, list):
            raise BlockError("invalid_blocks_format")
        found: list[dict[str, Any]] = []
        for block in blocks:
            if not isinstance(block, dict) or "type" not in block:
                raise BlockError("invalid_blocks")
            if block["type"] == "actions":
                elements = block.get("elements")
                if not isinstance(elements, list) or not 1 <= len(elements) <= 25:
                    raise BlockError("invalid_blocks")
                for element in elements:
                    text = (element.get("text") or {}) if isinstance(element, dict) else {}
                    action_id = element.get("action_id") if isinstance(element, dict) else None
                    if element.get("type") != "button" or text.get("type") != "plain_text" \
                            or not 1 <= len(text.get("text", "")) <= 75 \
                            or not isinstance(action_id, str) or not 1 <= len(action_id) <= 255:
                        raise BlockError("invalid_blocks")
                    found.append(element)
        return found

    def labels(self, ts: str) -> list[str]:
        """The buttons a person sees under one message."""
        return [b["text"]["text"] for b in self.buttons.get(ts, [])]

    def button(self, ts: str, label: str) -> dict[str, Any]:
        for element in self.buttons.get(ts, []):
            if element["text"]["text"] == label:
                return element
        raise LookupError(f"no button {label!r} under message {ts} (it shows {self.labels(ts)})")
