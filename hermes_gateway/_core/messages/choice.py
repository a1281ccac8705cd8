"""The plugin contract for buttons: a :class:`Choice` the core asks a platform to show, a :class:`ChoiceAnswer` back.

A platform that can show buttons gives its client two optional methods::

    async def offer_choice(self, stream: Stream, choice: Choice) -> MessageRef: ...
    async def close_choice(self, stream: Stream, ref: MessageRef, text: str) -> None: ...

``offer_choice`` sends ``choice.prompt`` with one button per option (the
button's payload is ``choice.payload(option)``, short enough for every
platform's limit); ``close_choice`` replaces that message's text with the
outcome and removes the buttons. When someone presses a button, the client
calls ``context.choose(ChoiceAnswer(...))`` and shows the returned line to
the person who pressed it only (a toast, an ephemeral message), or nothing
for None. A platform without these methods gets the prompt as text with
``/allow ID`` and ``/deny ID`` to type.

The core makes both calls through the chat's budget and 429 handling
(``Delivery.call``), like every call into a chat: a client raises
``RateLimited`` on a 429 and never sleeps or retries itself.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Separates the choice's id from the option in a button's payload (``hgc:ID:approve``).
PAYLOAD_PREFIX = "hgc"


@dataclass(frozen=True)
class ChoiceOption:
    """One button: ``value`` is what comes back in :attr:`ChoiceAnswer.option`, ``label`` what people read.

    ``style``: ``"primary"``, ``"danger"`` or ``"default"`` (platforms without colours ignore it).
    """

    value: str
    label: str
    style: str = "default"


@dataclass(frozen=True)
class Choice:
    """A question with buttons, shown in one chat; ``choice_id`` is short (a few letters and digits)."""

    choice_id: str
    prompt: str
    options: tuple[ChoiceOption, ...]

    def payload(self, option: ChoiceOption | str) -> str:
        """The button's data, e.g. ``hgc:k3f9a2:approve`` (under Telegram's 64 bytes, Discord's 100 characters)."""
        value = option.value if isinstance(option, ChoiceOption) else option
        return f"{PAYLOAD_PREFIX}:{self.choice_id}:{value}"


@dataclass(frozen=True)
class ChoiceAnswer:
    """Someone pressed a button of a :class:`Choice`: the inbound event a client hands to ``context.choose``.

    Build it with :meth:`from_payload` when the platform gives back the button's data.
    """

    platform: str
    chat_id: str
    user_id: str
    choice_id: str
    option: str

    @classmethod
    def from_payload(cls, platform: str, chat_id: str, user_id: str, payload: str) -> "ChoiceAnswer | None":
        """The answer a button's payload stands for; None when the payload is not one of ours."""
        prefix, sep, rest = (payload or "").partition(":")
        choice_id, sep2, option = rest.partition(":")
        if prefix != PAYLOAD_PREFIX or not sep or not sep2 or not choice_id or not option:
            return None
        return cls(platform, str(chat_id), str(user_id), choice_id, option)
