"""What a platform plugin declares about itself, and what it gets back.

A plugin describes its limits once, in a :class:`Platform`; the delivery
core reads them to pace, split and budget. The plugin itself never needs to
know how pacing works.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Literal, Mapping, Sequence

from .media import MediaLimits

#: How a platform counts a message's length: characters, UTF-16 code units (Telegram), UTF-8 bytes (Matrix).
LengthUnit = Literal["chars", "utf16", "bytes"]


@dataclass(frozen=True, slots=True)
class RateBudget:
    """A token bucket: ``rate`` calls per second on average, ``burst`` at once.

    Telegram allows about 1 message/s in a private chat, so
    ``RateBudget(rate=1.0, burst=1)``; a group gets 20/min,
    ``RateBudget(rate=20 / 60, burst=3)``.
    """

    rate: float
    burst: int = 1

    def __post_init__(self) -> None:
        if self.rate <= 0:
            raise ValueError("RateBudget.rate must be > 0 calls per second")
        if self.burst < 1:
            raise ValueError("RateBudget.burst must be >= 1")


DEFAULT_BUDGET = RateBudget(rate=1.0, burst=1)


@dataclass(frozen=True, slots=True)
class MessageRef:
    """Identifies one message a plugin sent, so the core can edit it later."""

    chat_id: str
    message_id: str
    thread_id: str | None = None


@dataclass(frozen=True)
class Platform:
    """A platform's name and limits, plus optional inbound start/stop.

    ``budgets`` maps a chat kind (``"private"``, ``"group"``, ...) to the
    per-chat rate budget; ``"default"`` covers any kind not listed. Every
    call into one chat (previews, final sends, typing) is charged to it.
    ``bot_budget``, when set, is the limit across all chats of the bot
    (Telegram: about 30 messages per second); every call is charged to it too.

    ``append_only``: the platform's native streaming can only append text
    to a message (Slack's ``chat.appendStream``). The core then keeps every
    ``on_delta`` text of a message an exact prefix of the next one and of
    its final text (no cursor, no tool line, no code fence closed only for
    the preview), so the plugin sends just the new part (see
    :func:`appended`). When the final text does not extend what the message
    shows (after a ``StreamReset``, or post-processing changed it),
    ``on_stream_end`` carries the whole final text and the plugin replaces
    the message's content.

    ``typing_interval``: the least time between two typing indicators on
    this platform (WhatsApp's lasts 25 s, so 20 there); the core refreshes
    typing at ``conversation.typing_interval`` or this, whichever is longer,
    so a refresh the platform does not need costs no call and no budget.

    ``media``: what the plugin's ``on_media`` hook can send (kinds, size
    limits, caption length); None = no attachments: every media item of a
    reply is shown as one line of text instead (its link or file name).

    ``keep_whole(text)``: for a platform whose plugin renders the text
    (Markdown into its own formatting), the ``(start, end)`` character
    ranges of ``text`` a split must not cut: a bold phrase, a link, a code
    block. The core then cuts before such a range, which moves whole into
    the next message; a range longer than a message is cut inside as usual
    (a code fence is closed and reopened). ``text`` is the rest of the reply
    from where the next message starts (behind the reopened fence, when it
    starts inside a code block). Called only when a reply is too long for
    one message, so its cost is paid once per split, never per delta.

    ``rendered_length(text)``: the length the platform counts for a message
    once the plugin has rendered ``text`` (Markdown markers and link targets
    removed), in ``length_unit``; it must never exceed the text's own length,
    except where the plugin lays out a Markdown table (a padded grid,
    repeated headers: see :func:`hermes_gateway.rewrite_tables`); the core
    measures any text with a table as rendered.
    The core then fills a message up to the limit of what the platform
    counts, not of the Markdown. It is only called for a text near or past
    the limit (see ``delivery.measure.RenderedMeasure``).

    ``free_previews(stream)``: True when this stream's previews (``on_delta``)
    cost the chat nothing (a native draft a platform does not count): they
    take no token from the chat's budget and do not wait for one, though a
    429 still blocks them. The bot-wide budget is still charged. A client
    may define a ``free_previews(stream)`` method instead (an answer that
    depends on its settings); it wins over this field.

    ``command_prefix``: what starts a chat command on this platform (``/new``, ``/help``): ``"/"`` by
    default; ``"!"`` where the platform's own clients take ``/`` for themselves (Element, on Matrix). The
    core recognises commands with it and ``/help`` lists them with it. One to three characters, none a
    letter, a digit or a space.

    ``settings``: the dataclass type of the platform's ``platforms.<name>``
    section (see :func:`hermes_gateway.secret`); the core parses the section
    into it, names unknown keys, and masks every secret field. None: the
    section holds only the core's keys (``enabled``, ``allowed_chats``,
    ``allowed_users``, ``require_mention``).

    ``client``: the platform's one lifecycle, ``client(settings, context)``
    → the running client (see :class:`hermes_gateway.PlatformClient`), built
    once per gateway for an enabled platform, before the listener starts
    (the only moment it may mount routes with ``context.add_route``); its
    ``start()`` begins receiving once the listener is up, its ``stop()``
    ends it. The client's stream methods (``on_delta`` ...) serve this
    platform's replies; a stream hook the client does not define is
    taken from the plugin object. None: a send-only platform whose plugin
    implements the stream hooks itself.

    ``doctor``: for ``hermes-gateway doctor``, ``await doctor(settings)`` checks
    the parsed settings against the platform's API (the token accepted, a
    webhook set where configured) and returns ``(ok, text)`` pairs, one line
    each; a failing text says what to fix. The core bounds it in time and
    masks secrets in what it prints. None: doctor checks only that the
    section parses.
    """

    name: str
    max_message_length: int = 4096
    length_unit: LengthUnit = "chars"
    edit_interval: float = 1.5
    budgets: Mapping[str, RateBudget] = field(default_factory=lambda: {"default": DEFAULT_BUDGET})
    bot_budget: RateBudget | None = None
    append_only: bool = False
    typing_interval: float = 0.0
    keep_whole: Callable[[str], Iterable[tuple[int, int]]] | None = None
    rendered_length: Callable[[str], int] | None = None
    free_previews: Callable[["Stream"], bool] | None = None
    description: str = ""
    media: MediaLimits | None = None
    settings: type | None = None
    client: Callable[[Any, Any], Any] | None = None
    command_prefix: str = "/"
    doctor: Callable[[Any], Awaitable[Sequence[tuple[bool, str]]]] | None = None

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"Platform name {self.name!r} must be a non-empty identifier")
        if self.max_message_length < 16:
            raise ValueError(f"Platform {self.name}: max_message_length must be >= 16")
        if self.length_unit not in ("chars", "utf16", "bytes"):
            raise ValueError(f"Platform {self.name}: length_unit must be 'chars', 'utf16' or 'bytes'")
        if self.typing_interval < 0:
            raise ValueError(f"Platform {self.name}: typing_interval must be >= 0")
        if self.edit_interval < 0:
            raise ValueError(f"Platform {self.name}: edit_interval must be >= 0")
        prefix = self.command_prefix
        if not isinstance(prefix, str) or not 1 <= len(prefix) <= 3 \
                or any(ch.isalnum() or ch.isspace() or ch == "@" for ch in prefix):
            raise ValueError(f"Platform {self.name}: command_prefix must be 1 to 3 characters, none a letter, a "
                             f"digit, a space or @ (e.g. '/' or '!'), got {prefix!r}")
        if self.settings is not None:
            _check_settings_type(self.settings, self.name)

    def budget_for(self, chat_kind: str | None) -> RateBudget:
        """The per-chat budget for this kind of chat (falls back to ``default``)."""
        if chat_kind and chat_kind in self.budgets:
            return self.budgets[chat_kind]
        return self.budgets.get("default", DEFAULT_BUDGET)


@dataclass(frozen=True, slots=True)
class StreamSettings:
    """The effective streaming settings for one reply on one platform.

    ``typing_interval``: while nothing visible happens (before the first
    text, while a tool runs, the whole reply when previews are off), the
    typing indicator (``on_stream_start``) is refreshed this often.
    """

    enabled: bool = False
    edit_interval: float = 1.5
    min_tokens: int = 20
    cursor: str = " ▌"
    typing_interval: float = 4.5
    transport: str | None = None  # ``streaming.<platform>.transport``: how previews are shown, the platform's word


@dataclass
class Stream:
    """One reply being delivered into one chat; handed to every stream hook.

    ``state`` is the plugin's own per-stream scratch space (a draft id, a
    Slack stream ts...). The core never reads it.
    """

    platform: Platform
    chat_id: str
    thread_id: str | None = None
    chat_kind: str | None = None
    settings: StreamSettings = field(default_factory=StreamSettings)
    reply_to: str | None = None
    state: dict[str, Any] = field(default_factory=dict)


#: Keys the core itself reads in every platform's section (who may talk, group mention gating,
#: ``home_chat``: the chat ``send --chat home`` and a schedule's ``chat: home`` mean, ``platform``: the plugin's
#: platform an account uses, ``rate_limits``: budgets over the declared ones).
CORE_KEYS = ("enabled", "allowed_chats", "allowed_channels", "allowed_users", "require_mention", "home_chat",
             "platform", "rate_limits")


def _check_settings_type(settings_type: Any, platform: str) -> None:
    """Refuse a ``Platform(settings=...)`` that is not a dataclass type (a plugin bug, found at registration)."""
    if not (isinstance(settings_type, type) and dataclasses.is_dataclass(settings_type)):
        raise ValueError(f"Platform {platform}: settings must be a dataclass type, got {settings_type!r}")
    clash = [f.name for f in dataclasses.fields(settings_type) if f.name in CORE_KEYS]
    if clash:
        raise ValueError(f"Platform {platform}: settings field(s) {', '.join(clash)} are read by the core; "
                         f"rename them")


def appended(shown: str, text: str) -> str | None:
    """For append-only platforms: the part of ``text`` after ``shown``, or None if it does not extend it.

    A plugin keeps what it last sent per message (``stream.state``) and,
    in ``on_delta``, appends ``appended(shown, text)``; in
    ``on_stream_end`` a None means the message must be replaced whole::

        new = appended(stream.state.get(message.message_id, ""), text)
        if new is None:
            await client.update(message.message_id, text)      # repair
        elif new:
            await client.append(message.message_id, new)
        stream.state[message.message_id] = text
    """
    return text[len(shown):] if text.startswith(shown) else None
