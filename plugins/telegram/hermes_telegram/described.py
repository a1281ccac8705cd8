"""What a message without text or file shares, in words the model reads: a location, a venue, a contact, a poll, a die.

A person who shares where they are ("what is open near me?"), a contact or a
poll with the bot expects it to be heard; these came to nothing before. Each
becomes one bracketed line, the message's text for the core (a caption, where
Telegram allows one, follows it). Stickers stay unanswered: people send them
as a reaction more than as a question. Every value is Telegram's, bounded
(names and options are cut), so a hostile message stays a short line.
"""

from __future__ import annotations

from typing import Any

#: Longest name, address, question or option kept (Telegram's own limits are lower or close).
MAX_PART = 300
#: Most poll options listed (Telegram allows 10; 12 leaves room for a future rise).
MAX_OPTIONS = 12


def describe(message: Any) -> str | None:
    """The line for what ``message`` shares (a PTB ``Message``), or None when it shares none of these."""
    venue = message.venue
    if venue is not None:
        return (f"[a place: {_cut(venue.title)}, {_cut(venue.address)} "
                f"({_coordinates(venue.location)})]")
    location = message.location
    if location is not None:
        live = " (live)" if getattr(location, "live_period", None) else ""
        return f"[a location{live}: {_coordinates(location)}]"
    contact = message.contact
    if contact is not None:
        name = " ".join(part for part in (contact.first_name, contact.last_name) if part)
        return f"[a contact: {_cut(name) or 'no name'}, {_cut(contact.phone_number)}]"
    poll = message.poll
    if poll is not None:
        options = " / ".join(_cut(o.text) for o in list(poll.options or ())[:MAX_OPTIONS])
        return f"[a poll: {_cut(poll.question)} — {options}]"
    dice = message.dice
    if dice is not None:
        return f"[a {dice.emoji} thrown: {dice.value}]"
    return None


def _coordinates(location: Any) -> str:
    return f"{float(location.latitude):.6f}, {float(location.longitude):.6f}"


def _cut(value: Any) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= MAX_PART else text[:MAX_PART - 1] + "…"
