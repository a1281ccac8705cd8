"""What a message shares, in words the model reads: a location, a venue, a contact, a poll, a die; who it was forwarded from.

A person who shares where they are ("what is open near me?"), a contact or a
poll with the bot expects it to be heard; these came to nothing before. Each
becomes one bracketed line, the message's text for the core (a caption, where
Telegram allows one, follows it). Stickers stay unanswered: people send them
as a reaction more than as a question. Every value is Telegram's, bounded
(names and options are cut), so a hostile message stays a short line.

A forwarded message's words are someone else's: they reach the model quoted
under ``[forwarded message from NAME]`` (:func:`forwarded`), as Discord's and
Slack's forwards do, so the model does not take them for the person's own
(and a forwarded ``/command`` is not a command).
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import forwarded_text, location_text

#: Longest name, address, question or option kept (Telegram's own limits are lower or close).
MAX_PART = 300
#: Most poll options listed (Telegram allows 10; 12 leaves room for a future rise).
MAX_OPTIONS = 12


def describe(message: Any) -> str | None:
    """The line for what ``message`` shares (a PTB ``Message``), or None when it shares none of these."""
    venue = message.venue
    if venue is not None:
        return location_text(venue.location.latitude, venue.location.longitude,
                             f"{_cut(venue.title)}, {_cut(venue.address)}")
    location = message.location
    if location is not None:
        return location_text(location.latitude, location.longitude,
                             live=bool(getattr(location, "live_period", None)))
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


def _cut(value: Any) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= MAX_PART else text[:MAX_PART - 1] + "…"


def forwarded(message: Any, text: str) -> str:
    """``text`` quoted under who it was forwarded from, when ``message`` is a forward; else ``text``."""
    origin = getattr(message, "forward_origin", None)
    if origin is None or not text:
        return text
    return forwarded_text(text, _origin_name(origin))


def _origin_name(origin: Any) -> str:
    """The sender as the forward names it: a person, a hidden person's name, a group's or a channel's title."""
    user = getattr(origin, "sender_user", None)
    if user is not None:
        return _cut(getattr(user, "full_name", None) or getattr(user, "username", None))
    chat = getattr(origin, "sender_chat", None) or getattr(origin, "chat", None)
    if chat is not None:
        return _cut(getattr(chat, "title", None) or getattr(chat, "username", None))
    return _cut(getattr(origin, "sender_user_name", None))
