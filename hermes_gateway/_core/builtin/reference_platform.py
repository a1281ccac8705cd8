"""An in-memory platform with a screen, strict limits and injectable faults.

Production code: the built-in ``reference`` platform (:mod:`.reference`) is
one, and ``hermes-gateway ask`` shows its screen. The test kit re-exports it
(``from hermes_gateway.testing import ReferencePlatform``).

It behaves like a strict real platform: it enforces its own per-chat rate
budget (answering with ``RateLimited`` when exceeded), rejects messages
over its length limit (in chars or UTF-16 units), treats an edit to
identical text as "not modified", and can be told to fail in the ways real
platforms fail. Tests then assert on :attr:`ReferenceChat.screen`, the
messages a person would see, in order, and on :attr:`ReferenceChat.calls`,
which hook made each call (``on_stream_end`` must be every message's last).

``media=MediaLimits(...)`` lets it take attachments (``on_media``): an
attachment shows on the screen as ``[image: qr.png] caption`` after the
reply's text, its bytes in :attr:`ScreenMessage.media`; sending a kind it
did not declare, a file over its limit or a caption too long is a violation.

``append_only=True`` models a platform whose streaming can only append
(Slack's ``chat.appendStream``): an ``on_delta`` whose text does not extend
what the message shows is a violation; an ``on_stream_end`` that does not
is a repair (counted in :attr:`ReferenceChat.repairs`).

Use it to test the core, or as the model for your own platform plugin::

    ref = ReferencePlatform(budgets={"default": RateBudget(rate=20 / 60, burst=3)})
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    ...
    assert ref.chat("42").screen == ["Hello, world"]
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

from ..delivery.budget import ChatBudget
from ..delivery.measure import measure_for
from ..errors import DeliveryError, RateLimited
from ..hookspecs import hookimpl
from ..media import Media, MediaLimits
from ..platform import LengthUnit, MessageRef, Platform, RateBudget, Stream
from ..platform_context import PlatformClient

CallKind = Literal["typing", "send", "edit", "upload"]
#: Seconds a typing indicator stays on screen after one call (Telegram's figure; most platforms are close).
TYPING_SHOWS = 5.0
Hook = Literal["on_stream_start", "on_delta", "on_stream_end", "on_media"]
FaultTarget = Literal["any", "send", "edit", "typing", "upload"]


@dataclass(frozen=True)
class Fault:
    """One injected failure of one platform call.

    ``rate_limited``: a 429 with ``retry_after``. ``error``: a failure with no
    effect. ``timeout``: the request times out; with ``landed=True`` its
    effect happened anyway (the dangerous, ambiguous case). ``deleted``: the
    person deleted the message being edited; the edit fails for good.
    """

    kind: Literal["rate_limited", "error", "timeout", "deleted"]
    retry_after: float = 0.0
    retryable: bool = True
    landed: bool = False
    on: FaultTarget = "any"

    @classmethod
    def rate_limited(cls, retry_after: float, on: FaultTarget = "any") -> "Fault":
        return cls("rate_limited", retry_after=retry_after, on=on)

    @classmethod
    def error(cls, retryable: bool = True, on: FaultTarget = "any") -> "Fault":
        return cls("error", retryable=retryable, on=on)

    @classmethod
    def deleted(cls) -> "Fault":
        return cls("deleted", retryable=False, on="edit")

    @classmethod
    def timeout(cls, landed: bool, on: FaultTarget = "any") -> "Fault":
        return cls("timeout", landed=landed, on=on)

    def applies_to(self, kind: CallKind) -> bool:
        return self.on == "any" or self.on == kind


@dataclass
class ScreenMessage:
    """One message as a person sees it, with every text it showed."""

    id: str
    text: str
    history: list[str] = field(default_factory=list)
    media: "SentMedia | None" = None  # an attachment: what the person received


@dataclass(frozen=True)
class SentMedia:
    """An attachment as the person received it: its kind, name, caption and bytes."""

    kind: str
    filename: str
    caption: str
    data: bytes
    mime: str

    @property
    def label(self) -> str:
        """How the screen shows it: ``[image: qr.png] caption``."""
        return f"[{self.kind}: {self.filename}]" + (f" {self.caption}" if self.caption else "")


@dataclass(frozen=True)
class Call:
    """One call the core made into a chat, and how the platform answered."""

    at: float
    kind: CallKind
    message_id: str | None
    text: str
    outcome: str
    hook: Hook = "on_delta"


@dataclass
class ReferenceChat:
    """One chat: its screen, its call log, its pending faults and what went wrong."""

    chat_id: str
    messages: list[ScreenMessage] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    schedule: dict[int, Fault] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    blocked_until: float = float("-inf")
    budget: ChatBudget | None = None
    typing: int = 0
    said: list[str] = field(default_factory=list)
    repairs: int = 0
    deleted: set[str] = field(default_factory=set)  # ids of messages the person deleted

    @property
    def last_hooks(self) -> dict[str, str]:
        """For each message, the hook of the last call that it took effect from (or "not modified")."""
        last: dict[str, str] = {}
        for call in self.calls:
            if call.message_id is not None and call.outcome in ("ok", "not_modified", "timeout_landed") \
                    and call.kind != "typing":
                last[call.message_id] = call.hook
        return last

    @property
    def screen(self) -> list[str]:
        """The texts of the messages, top to bottom."""
        return [m.text for m in self.messages]

    @property
    def throttled(self) -> int:
        """How many calls the platform answered with 429."""
        return sum(1 for c in self.calls if c.outcome == "rate_limited")

    @property
    def wasted(self) -> int:
        """Edits that changed nothing (the platform's "message is not modified")."""
        return sum(1 for c in self.calls if c.outcome == "not_modified")

    def blank_before_first_text(self, typing_shows: float = TYPING_SHOWS) -> float:
        """Seconds before the first text was sent with neither text nor a typing indicator on screen.

        Each typing call shows the indicator for ``typing_shows`` seconds (Telegram's 5 s) or until the
        first text, whichever comes first; overlapping indicators count once.
        """
        first = next(c.at for c in self.calls if c.kind == "send")
        shown, until = 0.0, 0.0
        for at in (c.at for c in self.calls if c.kind == "typing" and c.at < first):
            start, end = max(at, until), min(at + typing_shows, first)
            shown += max(end - start, 0.0)
            until = max(until, end)
        return first - shown

    def fail_next(self, fault: Fault, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` calls it applies to."""
        self.faults.extend([fault] * times)


class ReferencePlatform:
    """A platform plugin (register it with ``make_plugins(extra=[...])``) backed by memory.

    ``budgets`` is what the platform declares to the core; ``enforce`` is
    what it actually enforces (default: the same), so a test can model a
    platform stricter than its documentation.
    """

    def __init__(self, name: str = "reference", *, max_message_length: int = 4096,
                 length_unit: LengthUnit = "chars", edit_interval: float = 0.0,
                 budgets: Mapping[str, RateBudget] | None = None,
                 enforce: Mapping[str, RateBudget] | None = None, bot_budget: RateBudget | None = None,
                 supports_edit: bool = True, append_only: bool = False, media: MediaLimits | None = None,
                 on_call: Callable[["ReferenceChat", Call], None] | None = None,
                 keep_whole: Callable[[str], Iterable[tuple[int, int]]] | None = None,
                 free_previews: Callable[[Stream], bool] | None = None,
                 rendered_length: Callable[[str], int] | None = None) -> None:
        """``keep_whole``/``free_previews``/``rendered_length`` as on :class:`Platform`. With
        ``free_previews``, the previews it names are not counted against the chat here either (they
        still meet its 429s); with ``rendered_length``, the length limit is enforced on it."""
        self.platform = Platform(
            name=name, max_message_length=max_message_length, length_unit=length_unit,
            edit_interval=edit_interval, budgets=dict(budgets or {"default": RateBudget(rate=1.0, burst=1)}),
            bot_budget=bot_budget, append_only=append_only, media=media, keep_whole=keep_whole,
            free_previews=free_previews, rendered_length=rendered_length,
            description="in-memory reference platform (hermes_gateway.testing)",
            client=self._connect,
        )
        self.enforced = dict(enforce or self.platform.budgets)
        self.bot_bucket: ChatBudget | None = None  # the limit across all chats, enforced like the per-chat one
        self.bot_throttled = 0
        self.bot_blocked_until = float("-inf")  # a bot-wide 429: every chat waits
        self._bot_faults: list[float] = []
        self.can_edit = supports_edit
        self.chats: dict[str, ReferenceChat] = {}
        self.on_call = on_call
        self._measure = rendered_length or measure_for(length_unit)
        self._next_id = 0
        self._context: Any = None
        self._standalone: ReferenceClient | None = None
        self._hook: Hook = "on_delta"   # the hook of the call being handled, for the call log
        self.__name__ = f"reference:{name}"

    def fail_bot_next(self, retry_after: float) -> None:
        """The next call into any chat answers a bot-wide 429 (``scope="bot"``): every chat must wait."""
        self._bot_faults.append(retry_after)

    def chat(self, chat_id: str) -> ReferenceChat:
        chat_id = str(chat_id)
        if chat_id not in self.chats:
            self.chats[chat_id] = ReferenceChat(chat_id)
        return self.chats[chat_id]

    # ---------------------------------------------------------------- the inbound side

    def _connect(self, settings: Any, context: Any) -> "ReferenceClient":
        """``Platform.client``: the gateway hands over its context; the client calls back into this object."""
        return ReferenceClient(self, context)

    async def say(self, chat_id: str, text: str, *, chat_kind: str | None = None,
                  thread_id: str | None = None, attachments: Sequence[Any] = ()) -> Any:
        """A person types ``text`` into the chat (with ``attachments``, files sent with it as ``Attachment``
        values); returns when the bot's reply is delivered."""
        if self._context is None:
            raise RuntimeError(f"platform {self.platform.name!r} is not started: run it inside a Gateway")
        from ..messages.incoming import Incoming

        self.chat(chat_id).said.append(text)
        incoming = Incoming(self.platform.name, str(chat_id), text,
                            thread_id=None if thread_id is None else str(thread_id), attachments=tuple(attachments))
        if chat_kind is not None:
            incoming = replace(incoming, chat_kind=chat_kind)
        return await self._context.receive(incoming)

    # ---------------------------------------------------------------- the plugin hook, and what its client calls

    @property
    def client(self) -> "ReferenceClient":
        """A client of this platform for the delivery core used alone (``Delivery(plugins, clients=...)``),
        with no gateway: it sends and edits, and receives nothing."""
        if self._standalone is None:
            self._standalone = ReferenceClient(self, None)
        return self._standalone

    @hookimpl
    def register_platforms(self, register: Callable[[Platform], None]) -> None:
        register(self.platform)

    def supports_edit(self, stream: Stream) -> bool:
        return self.can_edit

    async def on_stream_start(self, stream: Stream) -> None:
        chat = self._admit(stream, "typing", None, "", "on_stream_start")
        chat.typing += 1
        self._log(chat, "typing", None, "", "ok", "on_stream_start")

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return self._show(stream, message, text, "on_delta")

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return self._show(stream, message, text, "on_stream_end")

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        return self._upload(stream, media)

    # ---------------------------------------------------------------- behaviour

    def _upload(self, stream: Stream, media: Media) -> MessageRef:
        """An attachment: checked against what the platform declared, then shown as a message of its own."""
        label = f"[{media.kind}: {media.filename}]"
        chat = self._admit(stream, "upload", None, label, "on_media",
                           landed=lambda chat: self._attach(chat, stream, media))  # a timeout that landed
        return self._attach(chat, stream, media, log=True)

    def _attach(self, chat: ReferenceChat, stream: Stream, media: Media, log: bool = False) -> MessageRef:
        kind = media.kind
        assert kind is not None, "Media fills in its kind when it is made"
        label = f"[{kind}: {media.filename}]"
        limits = self.platform.media
        problem = None
        if limits is None:
            problem = "an attachment on a platform that declared no media"
        elif media.kind not in limits.kinds:
            problem = f"a {media.kind} on a platform that sends {', '.join(sorted(limits.kinds))}"
        elif media.url is not None and not limits.urls:
            problem = "a link to fetch on a platform that takes uploads only"
        elif self._measure(media.caption) > limits.caption_length:
            problem = f"a caption of {self._measure(media.caption)} units over {limits.caption_length}"
        data = b""
        if problem is None and media.path is not None:
            data = media.read()
            limit = limits.limit_for(kind) if limits is not None else None
            if limit is not None and len(data) > limit:
                problem = f"a {media.kind} of {len(data)} bytes over {limit}"
        if problem is not None:
            chat.violations.append(problem)
            if log:
                self._log(chat, "upload", None, label, "error")
            raise DeliveryError(f"Bad Request: {problem}", retryable=False)
        sent = SentMedia(kind, media.filename, media.caption, data, media.mime)
        self._next_id += 1
        shown = ScreenMessage(str(self._next_id), sent.label, [sent.label], media=sent)
        chat.messages.append(shown)
        if log:
            self._log(chat, "upload", shown.id, sent.label, "ok")
        return MessageRef(chat.chat_id, shown.id, stream.thread_id)

    def _show(self, stream: Stream, message: MessageRef | None, text: str, hook: Hook) -> MessageRef:
        kind: CallKind = "send" if message is None else "edit"
        chat = self._admit(stream, kind, message, text, hook)
        if self._measure(text) > self.platform.max_message_length:
            chat.violations.append(f"{kind} of {self._measure(text)} units over the limit")
            self._log(chat, kind, message.message_id if message else None, text, "too_long")
            raise DeliveryError("Bad Request: message is too long", retryable=False)
        if not text.strip():
            chat.violations.append(f"{kind} of an empty text")
            self._log(chat, kind, message.message_id if message else None, text, "empty")
            raise DeliveryError("Bad Request: message text is empty", retryable=False)
        if message is None:
            self._next_id += 1
            shown = ScreenMessage(str(self._next_id), text, [text])
            chat.messages.append(shown)
            self._log(chat, kind, shown.id, text, "ok")
            return MessageRef(chat.chat_id, shown.id, stream.thread_id)
        if not self.can_edit:
            chat.violations.append("edit on a platform that cannot edit")
            raise DeliveryError("this platform cannot edit messages", retryable=False)
        target = next((m for m in chat.messages if m.id == message.message_id), None)
        if target is None:
            if message.message_id not in chat.deleted:
                chat.violations.append(f"edit of unknown message {message.message_id}")
            self._log(chat, kind, message.message_id, text, "error")
            raise DeliveryError("Bad Request: message to edit not found", retryable=False)
        if self.platform.append_only and not text.startswith(target.text):
            if hook == "on_delta":
                chat.violations.append(f"append-only preview of message {target.id} does not extend "
                                       f"{target.text[-20:]!r}: {text[-20:]!r}")
            else:
                chat.repairs += 1
        if target.text == text:
            self._log(chat, kind, target.id, text, "not_modified")
            return message  # "message is not modified" is success
        target.text = text
        target.history.append(text)
        self._log(chat, kind, target.id, text, "ok")
        return message

    def _admit(self, stream: Stream, kind: CallKind, message: MessageRef | None, text: str,
               hook: Hook, landed: Callable[[ReferenceChat], Any] | None = None) -> ReferenceChat:
        """Enforce the rate budget and the fault plan before any effect; raise like a real platform."""
        self._hook = hook
        chat = self.chat(stream.chat_id)
        now = asyncio.get_running_loop().time()
        index = len(chat.calls)
        message_id = message.message_id if message else None
        if now < chat.blocked_until:
            chat.violations.append(f"{kind} at {now:.3f}s while rate-limited until {chat.blocked_until:.3f}s")
        if now < self.bot_blocked_until:
            chat.violations.append(f"{kind} at {now:.3f}s while the bot is rate-limited until "
                                   f"{self.bot_blocked_until:.3f}s")
            self._log(chat, kind, message_id, text, "rate_limited")
            raise RateLimited(self.bot_blocked_until - now, "Too Many Requests (global)", scope="bot")
        if self._bot_faults:
            retry_after = self._bot_faults.pop(0)
            self.bot_blocked_until = now + retry_after
            self._log(chat, kind, message_id, text, "rate_limited")
            raise RateLimited(retry_after, f"Too Many Requests (global): retry after {retry_after:g}", scope="bot")
        if chat.budget is None:
            chat.budget = ChatBudget(self._enforced_for(stream.chat_kind), updated=now)
        if self.platform.bot_budget is not None and self.bot_bucket is None:
            self.bot_bucket = ChatBudget(self.platform.bot_budget, updated=now)
        ready = chat.budget.ready_at(now)
        if self.bot_bucket is not None and self.bot_bucket.ready_at(now) > now + 1e-9:
            self.bot_throttled += 1
            retry_after = self.bot_bucket.ready_at(now) - now
            self.bot_blocked_until = max(self.bot_blocked_until, now + retry_after)
            self._log(chat, kind, message_id, text, "rate_limited")
            raise RateLimited(retry_after, f"Too Many Requests (global): retry after {retry_after:.3f}", scope="bot")
        free = hook == "on_delta" and self.platform.free_previews is not None and self.platform.free_previews(stream)
        if free:
            ready = max(now, chat.blocked_until)
        if ready > now + 1e-9:
            retry_after = ready - now
            chat.blocked_until = max(chat.blocked_until, now + retry_after)
            self._log(chat, kind, message_id, text, "rate_limited")
            raise RateLimited(retry_after, f"Too Many Requests: retry after {retry_after:.3f}")
        if not free:
            chat.budget.take(now)
        if self.bot_bucket is not None:
            self.bot_bucket.take(now)
        fault = chat.schedule.pop(index, None)
        if fault is None or not fault.applies_to(kind):
            fault = next((f for f in chat.faults if f.applies_to(kind)), None)
            if fault is not None:
                chat.faults.remove(fault)
        if fault is None:
            return chat
        if fault.kind == "rate_limited":
            chat.blocked_until = max(chat.blocked_until, now + fault.retry_after)
            self._log(chat, kind, message_id, text, "rate_limited")
            raise RateLimited(fault.retry_after, f"Too Many Requests: retry after {fault.retry_after:g}")
        if fault.kind == "error":
            self._log(chat, kind, message_id, text, "error")
            raise DeliveryError("injected failure", retryable=fault.retryable)
        if fault.kind == "deleted":
            chat.messages = [m for m in chat.messages if m.id != message_id]
            chat.deleted.add(message_id or "")
            self._log(chat, kind, message_id, text, "error")
            raise DeliveryError("Bad Request: message to edit not found", retryable=False)
        if fault.landed and kind == "upload" and landed is not None:
            landed(chat)
        elif fault.landed and kind != "typing":
            self._apply_silently(chat, stream, message, text)
        self._log(chat, kind, message_id, text, "timeout_landed" if fault.landed and kind != "typing" else "timeout")
        raise DeliveryError("timed out", retryable=True, maybe_delivered=True)

    def _apply_silently(self, chat: ReferenceChat, stream: Stream, message: MessageRef | None, text: str) -> None:
        """A timed-out call whose effect landed: the screen changes, the caller never hears."""
        if self._measure(text) > self.platform.max_message_length or not text.strip():
            return
        if message is None:
            self._next_id += 1
            chat.messages.append(ScreenMessage(str(self._next_id), text, [text]))
            return
        target = next((m for m in chat.messages if m.id == message.message_id), None)
        if target is not None and target.text != text:
            target.text = text
            target.history.append(text)

    def _enforced_for(self, chat_kind: str | None) -> RateBudget:
        if chat_kind and chat_kind in self.enforced:
            return self.enforced[chat_kind]
        return self.enforced.get("default", RateBudget(rate=1.0, burst=1))

    def _log(self, chat: ReferenceChat, kind: CallKind, message_id: str | None, text: str, outcome: str,
             hook: Hook | None = None) -> None:
        call = Call(asyncio.get_running_loop().time(), kind, message_id, text, outcome, hook or self._hook)
        chat.calls.append(call)
        if self.on_call is not None:
            self.on_call(chat, call)


class ReferenceClient(PlatformClient):
    """The reference platform's running client, written as every platform's is (``PlatformClient``).

    It lets :meth:`ReferencePlatform.say` reach the gateway, and its stream
    methods are the platform's: the screens and call logs live on the
    :class:`ReferencePlatform`, shared by every client a test's gateways build.
    """

    def __init__(self, platform: ReferencePlatform, context: Any) -> None:
        super().__init__(None, context)
        self.platform = platform

    async def start(self) -> None:
        self.platform._context = self.context

    async def stop(self) -> None:
        if self.platform._context is self.context:
            self.platform._context = None

    def supports_edit(self, stream: Stream) -> bool:
        return self.platform.supports_edit(stream)

    async def on_stream_start(self, stream: Stream) -> None:
        await self.platform.on_stream_start(stream)

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self.platform.on_delta(stream, message, text)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self.platform.on_stream_end(stream, message, text)

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        return await self.platform.on_media(stream, media)
