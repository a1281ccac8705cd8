"""Approval buttons on Matrix: the question is a message, its buttons are reactions the bot puts under it.

Matrix has no buttons, but every client shows reactions and lets a person
click one to add the same: :func:`emoji_for` gives each option its emoji
(✅ approve, ❌ deny, digits for others) and the bot reacts with each, so a
click is one ``m.reaction`` with that key on the question. The receiving
loop hands such a reaction to :meth:`Questions.press`, which turns it into
the option's payload for ``context.choose``. The core's typed ``!allow ID``
/ ``!deny ID`` keep working beside it (a client that cannot react).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: An option's value → its emoji; the rest are numbered.
KNOWN = {"approve": "✅", "allow": "✅", "yes": "✅", "deny": "❌", "reject": "❌", "no": "❌", "always": "♾️"}
NUMBERED = ("1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣")


def emoji_for(options: Any) -> dict[str, str]:
    """Each option's emoji (``{emoji: option value}``), distinct."""
    found: dict[str, str] = {}
    numbers = iter(NUMBERED)
    for option in options:
        emoji = KNOWN.get(option.value.lower())
        if emoji is None or emoji in found:
            emoji = next(numbers, option.value[:8])
        found[emoji] = option.value
    return found


@dataclass
class Offer:
    """One question: its event once sent, and the reactions already put under it."""

    choice: Any
    chat_id: str
    event_id: str | None = None
    seeded: list[str] = field(default_factory=list)

    @property
    def options(self) -> dict[str, str]:
        return emoji_for(self.choice.options)


class Questions:
    """The open questions of this client, by choice id and by the event that shows them."""

    def __init__(self) -> None:
        self.by_choice: dict[str, Offer] = {}
        self.by_event: dict[str, Offer] = {}

    def offer(self, chat_id: str, choice: Any) -> Offer:
        """The offer for ``choice`` (made again after a 429 it goes on where it stopped)."""
        offer = self.by_choice.get(choice.choice_id)
        if offer is None:
            offer = self.by_choice[choice.choice_id] = Offer(choice, chat_id)
        return offer

    def shown(self, offer: Offer, event_id: str) -> None:
        offer.event_id = event_id
        self.by_event[event_id] = offer

    def close(self, event_id: str) -> None:
        offer = self.by_event.pop(event_id, None)
        if offer is not None:
            self.by_choice.pop(offer.choice.choice_id, None)

    def press(self, event_id: str, key: str) -> str | None:
        """The payload a reaction ``key`` on ``event_id`` stands for (None: not a button of an open question)."""
        offer = self.by_event.get(event_id)
        if offer is None:
            return None
        value = offer.options.get(key)
        return offer.choice.payload(value) if value is not None else None
