"""``StreamSession``: one reply streaming into one chat.

The agent feeds text deltas synchronously (``feed`` never blocks and never
awaits: generation runs at model speed whatever the platform does). A
single worker task beside it turns the newest text into as few platform
calls as the platform's limits allow:

* nothing is shown before ``min_tokens`` deltas;
* at most one call per ``edit_interval`` per message, and every call takes
  a token from the chat's shared budget (:mod:`.budget`);
* after ``RateLimited`` nothing goes into the chat until ``retry_after``;
  updates meanwhile coalesce, because the worker always renders the newest
  text when it is allowed to call again;
* text past the platform's limit freezes into one message and continues in
  the next (:mod:`.split`);
* at the end the post-processed reply is reconciled against the ledger
  (:mod:`.ledger`) so the person sees it exactly once, without cursor.

The worker is the only caller of the platform, so calls into a chat from
one reply never overlap.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import DeliveryError, RateLimited
from ..platform import MessageRef, Stream
from .budget import ChatBudget
from .hooks import PlatformHooks
from .ledger import Ledger, LedgerEntry
from .measure import measure_for
from .split import Piece, fence_after, render, split_text
from ..reasoning import ReasoningFilter, postprocess_reply

log = logging.getLogger(__name__)

#: Between a preview's text and its tool progress line.
STATUS_GAP = "\n\n"

@dataclass(frozen=True)
class DeliveryPolicy:
    """How hard the core tries before it gives up on a call; the defaults suit real platforms."""

    max_retries: int = 5                 # per call, for retryable failures
    max_rate_limits: int = 20            # 429s tolerated for one final call
    backoff_base: float = 1.0            # seconds; doubles per retry
    backoff_cap: float = 30.0
    preview_failures_before_fallback: int = 3
    final_deadline: float = 900.0        # give up on the final text after this long
    interrupt_deadline: float = 10.0     # a cancelled reply's clean-up gives up sooner


@dataclass
class DeliveryReport:
    """What happened to one reply: where it landed, and whether all of it did."""

    text: str = ""
    messages: list[MessageRef] = field(default_factory=list)
    delivered: bool = False
    interrupted: bool = False
    calls: int = 0
    rate_limited: int = 0
    error: str | None = None


class StreamSession:
    """Deliver one reply into one chat. Create it through ``Delivery.session``."""

    def __init__(self, hooks: PlatformHooks, stream: Stream, budget: ChatBudget, *,
                 bot_budget: ChatBudget | None = None, policy: DeliveryPolicy | None = None,
                 reasoning_starts_open: bool = False) -> None:
        self.hooks = hooks
        self.stream = stream
        self.budget = budget
        self.bot_budget = bot_budget  # the platform's limit across all chats, if it declares one
        self.policy = policy or DeliveryPolicy()
        platform = hooks.platform
        settings = stream.settings
        self._limit = platform.max_message_length
        self._measure = measure_for(platform.length_unit)
        self._interval = max(settings.edit_interval, platform.edit_interval)
        self._min_tokens = settings.min_tokens
        self._cursor = settings.cursor
        self._previews_wanted = settings.enabled
        self._previews_on = False        # decided once the plugin says whether it can edit
        self._starts_open = reasoning_starts_open  # model.reasoning_starts_open: replies open inside reasoning
        self._scrubber = ReasoningFilter(starts_open=reasoning_starts_open, on_retract=self._reasoning_shown)
        self._parts: list[str] = []
        self._joined = ""
        self._joined_parts = 0
        self._raw: list[str] = []
        self._leading = True             # still skipping leading whitespace
        self._tokens = 0
        self._version = 0                # bumps on every visible change
        self._shown_version = -1
        self._status = ""                # tool progress line, previews only
        self._reset = False
        self._preview_failures = 0
        self._ledger = Ledger()
        self._report = DeliveryReport()
        self._final: str | None = None
        self._finishing = False
        self._interrupted = False
        self._waiter: asyncio.Future[None] | None = None
        self._wake_on_change = False
        self._task: asyncio.Task[DeliveryReport] | None = None
        self._retry_at = float("-inf")      # back-off after a failed call
        self._rate_limit_waits = 0.0        # seconds the platform told us to wait, in all

    # ------------------------------------------------------------------ producer side (sync)

    def start(self) -> None:
        """Start the worker; called implicitly by the first ``feed``."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"stream:{self.stream.chat_id}")

    def feed(self, delta: str) -> None:
        """Take one text delta from the model. Never blocks."""
        if self._task is None:
            self.start()
        if self._finishing or not delta:
            return
        self._raw.append(delta)
        visible = self._scrubber.feed(delta)
        if not visible:
            return
        if self._leading:
            visible = visible.lstrip()
            if not visible:
                return
            self._leading = False
        self._parts.append(visible)
        self._tokens += 1
        self._version += 1
        if self._wake_on_change and self._tokens >= self._min_tokens:
            self._wake()

    def tool_started(self, name: str) -> None:
        """Show tool progress in the preview (never in the final text)."""
        self._status = f"🔧 {name}…"
        self._version += 1
        if self._wake_on_change:
            self._wake()

    def tool_finished(self, name: str) -> None:
        if self._status:
            self._status = ""
            self._version += 1

    def reset(self) -> None:
        """The text so far is being replaced (an upstream retry). Previews stop; the final reconciles."""
        self._parts.clear()
        self._joined, self._joined_parts = "", 0
        self._raw.clear()
        self._scrubber = ReasoningFilter(starts_open=self._starts_open, on_retract=self._reasoning_shown)
        self._leading = True
        self._reset = True
        self._version += 1

    def _reasoning_shown(self) -> None:
        """A lone closing tag: the text shown so far was reasoning (see ``ReasoningFilter``). Drop it now."""
        self._parts.clear()
        self._joined, self._joined_parts = "", 0
        self._version += 1
        if any(entry.frozen for entry in self._ledger.entries):
            self._reset = True  # overflowed messages hold reasoning: the final text replaces them all

    def callback(self, delta: str | None) -> None:
        """The seed's ``stream_callback``: text deltas, then None at the end of a stream."""
        if delta is not None:
            self.feed(delta)

    # ------------------------------------------------------------------ ending

    async def finish(self, final: str | None = None) -> DeliveryReport:
        """Deliver the final reply (``final`` is post-processed; default: what was fed)."""
        if self._task is None:
            self.start()
        if not self._finishing:
            self._final = final
            self._finishing = True
            self._wake()
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def interrupt(self) -> DeliveryReport:
        """End a cancelled reply: what was shown stays, without cursor; nothing new is sent."""
        self._interrupted = True
        return await self.finish(None)

    @property
    def text(self) -> str:
        """The visible text fed so far (think blocks scrubbed)."""
        if len(self._parts) > self._joined_parts:  # join only what arrived since the last call
            self._joined += "".join(self._parts[self._joined_parts:])
            self._joined_parts = len(self._parts)
        return self._joined

    # ------------------------------------------------------------------ the worker

    async def _run(self) -> DeliveryReport:
        loop = asyncio.get_running_loop()
        try:
            await self._call_start()
            if self._previews_wanted:
                self._previews_on = await self.hooks.supports_edit(self.stream)
            while not self._finishing and self._previews_on:
                await self._preview_step()
            while not self._finishing:  # no previews: just wait for the end of the reply
                await self._sleep(None, on_change=False)
            limit = self.policy.interrupt_deadline if self._interrupted else self.policy.final_deadline
            deadline = loop.time() + limit
            await self._deliver_final(deadline)
            self._report.delivered = True
        except asyncio.CancelledError:
            self._report.error = "cancelled"
            raise
        except DeliveryError as exc:
            self._report.error = str(exc) or type(exc).__name__
            log.warning("delivery to %s/%s failed: %s", self.hooks.platform.name, self.stream.chat_id,
                        self._report.error)
        finally:
            self._report.messages = self._ledger.refs
            self._report.interrupted = self._interrupted
        return self._report

    async def _call_start(self) -> None:
        """Typing indicator / native draft set-up; one call from the chat's budget, never retried."""
        if not self.hooks.implements["on_stream_start"]:
            return
        await self._until(lambda now: self._ready_at(None, now), interruptible=False)
        self._charge()
        try:
            await self.hooks.call("on_stream_start", stream=self.stream)
        except RateLimited as exc:
            self._rate_limited(exc)
        except Exception as exc:  # a failed typing indicator must not cost the reply
            log.info("on_stream_start failed on %s: %s", self.hooks.platform.name, exc)

    # ------------------------------------------------------------------ previews

    async def _preview_step(self) -> None:
        idle = self._tokens < self._min_tokens and not self._status
        if self._reset or idle or self._version == self._shown_version:
            await self._sleep(None, on_change=True)
            return
        entry, _ = self._plan_preview()
        if entry is None:
            self._shown_version = self._version
            return
        target = entry if entry.ref is not None else None
        if not await self._until(lambda now: self._ready_at(target, now), interruptible=True):
            return  # finishing: the final delivery takes over
        version = self._version
        entry, text = self._plan_preview()  # the newest text: updates coalesce here
        if entry is None:
            self._shown_version = version
            return
        if entry.ref is not None and self._ready_at(entry, self._now()) > self._now():
            return  # the plan moved to a message that is not due yet
        try:
            await self._show(entry, text, final=False)
            if entry is self._ledger.live:
                self._shown_version = version
            self._preview_failures = 0
        except RateLimited as exc:
            self._rate_limited(exc)
        except DeliveryError as exc:
            self._preview_failed(entry, exc)

    def _plan_preview(self) -> tuple[LedgerEntry | None, str]:
        """Freeze overflowing text, then pick the first message whose preview is out of date."""
        doc = self.text
        self._freeze_overflow(doc)
        pending = self._next_unsynced_frozen()
        if pending is not None:
            return pending, pending.text or ""
        live = self._ledger.live
        if live is None:
            start, opener = self._after_frozen(doc)
            live = LedgerEntry(Piece(start, len(doc), opener))
            self._ledger.entries.append(live)
        live.piece = Piece(live.piece.start, len(doc), live.piece.opener)
        body = render(doc, live.piece, limit=self._limit - self._preview_reserve(), measure=self._measure)
        status = STATUS_GAP + self._status if self._status and body else self._status
        text = body + status + self._cursor
        if not body and not self._status:
            return None, ""
        return (live, text) if live.needs(text) else (None, "")

    def _freeze_overflow(self, doc: str) -> None:
        live = self._ledger.live
        start, opener = (live.piece.start, live.piece.opener) if live else self._after_frozen(doc)
        pieces = split_text(doc, self._limit, self._measure, start=start, opener=opener,
                            reserve=self._preview_reserve())
        if len(pieces) == 1:
            return
        if live is not None:
            self._ledger.entries.pop()
        for piece in pieces[:-1]:
            entry = live if live is not None else LedgerEntry(piece)
            live = None
            entry.piece, entry.frozen, entry.text = piece, True, render(doc, piece, limit=self._limit,
                                                                         measure=self._measure)
            self._ledger.entries.append(entry)
        self._ledger.entries.append(LedgerEntry(pieces[-1]))

    def _preview_reserve(self) -> int:
        """Room a preview keeps free after the text: the cursor, and the tool progress line."""
        status = self._measure(STATUS_GAP + self._status) if self._status else 0
        return self._measure(self._cursor) + status

    def _after_frozen(self, doc: str) -> tuple[int, str | None]:
        """Where the text after the frozen messages starts, and the code fence open there."""
        frozen = [e for e in self._ledger.entries if e.frozen]
        if not frozen:
            return 0, None
        last = frozen[-1].piece
        return last.end, fence_after(doc[last.start:last.end], last.opener)

    def _next_unsynced_frozen(self) -> LedgerEntry | None:
        for entry in self._ledger.entries:
            if not entry.frozen:
                return None
            if entry.needs(entry.text or ""):
                return entry
        return None

    def _preview_failed(self, entry: LedgerEntry, exc: DeliveryError) -> None:
        self._preview_failures += 1
        if exc.maybe_delivered:
            entry.uncertain = True
        if entry.ref is None and exc.maybe_delivered:
            # a send that may have landed cannot be edited later: stop previewing
            self._previews_on = False
        if not exc.retryable or self._preview_failures >= self.policy.preview_failures_before_fallback:
            log.info("previews on %s/%s stop after %s; the final text is sent whole",
                     self.hooks.platform.name, self.stream.chat_id, exc)
            self._previews_on = False
        self._retry_at = self._now() + self._backoff(self._preview_failures)

    # ------------------------------------------------------------------ the final text

    def _final_document(self) -> str:
        if self._interrupted:
            return self.text.strip()  # cut off: a held-back partial tag is not text yet
        if self._final is not None:
            return self._final.strip()
        return postprocess_reply("".join(self._raw), starts_open=self._starts_open).strip()

    async def _deliver_final(self, deadline: float) -> None:
        doc = self._final_document()
        self._report.text = doc
        plan = self._ledger.plan_final(doc, self.text, self._limit, self._measure,
                                       reset=self._reset, interrupted=self._interrupted)
        for index, (entry, text) in enumerate(plan):
            if entry.needs(text):
                await self._final_call(entry, text, deadline, plan[index + 1:])

    async def _final_call(self, entry: LedgerEntry, text: str, deadline: float,
                          later: list[tuple[LedgerEntry, str]]) -> None:
        """Show ``text`` in ``entry`` for good: retry, back off, and fall back to a new message."""
        failures = rate_limits = 0
        fell_back = False
        while True:
            # time spent waiting out 429s does not count: a known wait is not a failure
            if self._now() > deadline + self._rate_limit_waits:
                raise DeliveryError("gave up delivering the final text (deadline passed)", retryable=False)
            await self._until(lambda now: self._ready_at(entry if entry.ref else None, now), interruptible=False)
            try:
                await self._show(entry, text, final=True)
                return
            except RateLimited as exc:
                self._rate_limited(exc)
                rate_limits += 1
                if rate_limits > self.policy.max_rate_limits:
                    raise
                continue
            except DeliveryError as exc:
                failures += 1
                if exc.retryable and failures <= self.policy.max_retries:
                    self._retry_at = self._now() + self._backoff(failures)
                    continue
                if entry.ref is None or fell_back:
                    raise
                # this message cannot be edited: send its text anew, and everything after it, in order
                log.info("final edit failed (%s); sending the text as a new message", exc)
                fell_back, failures = True, 0
                for stale in [entry] + [e for e, _ in later]:
                    stale.ref, stale.shown, stale.uncertain = None, None, False

    # ------------------------------------------------------------------ one platform call

    async def _show(self, entry: LedgerEntry, text: str, *, final: bool) -> None:
        """One call: edit ``entry`` to ``text``, or send it as a new message. Updates the ledger."""
        hook = "on_stream_end" if final else "on_delta"
        self._charge()
        entry.last_call = self._now()
        try:
            ref = await self.hooks.call(hook, stream=self.stream, message=entry.ref, text=text)
        except RateLimited:
            raise
        except DeliveryError as exc:
            if exc.maybe_delivered and entry.ref is not None:
                entry.shown, entry.uncertain = text, True
            raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a plugin bug is a failed call, not a crashed reply
            raise DeliveryError(f"{hook} raised {type(exc).__name__}: {exc}", retryable=False) from exc
        if entry.ref is None:
            if not isinstance(ref, MessageRef):
                raise DeliveryError(f"{hook} sent a message but returned {ref!r}, not a MessageRef", retryable=False)
            entry.ref = ref
        entry.shown, entry.uncertain = text, False

    # ------------------------------------------------------------------ time and budget

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _charge(self) -> None:
        now = self._now()
        self.budget.take(now)
        if self.bot_budget is not None:
            self.bot_budget.take(now)
        self._report.calls += 1

    def _rate_limited(self, exc: RateLimited) -> None:
        self.budget.block(self._now(), exc.retry_after)
        self._report.rate_limited += 1
        self._rate_limit_waits += max(exc.retry_after, 0.0)

    def _ready_at(self, entry: LedgerEntry | None, now: float) -> float:
        at = max(self.budget.ready_at(now), self._retry_at)
        if self.bot_budget is not None:
            at = max(at, self.bot_budget.ready_at(now))
        if entry is not None:
            at = max(at, entry.last_call + self._interval)
        return at

    def _backoff(self, failures: int) -> float:
        return min(self.policy.backoff_cap, self.policy.backoff_base * 2 ** max(failures - 1, 0))

    async def _until(self, ready_at: Callable[[float], float], *, interruptible: bool) -> bool:
        """Sleep until ``ready_at(now) <= now``. False if interrupted by ``finish``."""
        while True:
            now = self._now()
            at = ready_at(now)
            if at <= now:
                return True
            if interruptible and self._finishing:
                return False
            await self._sleep(at - now, on_change=False, interruptible=interruptible)
            if interruptible and self._finishing:
                return False

    async def _sleep(self, delay: float | None, *, on_change: bool, interruptible: bool = True) -> None:
        """Wait ``delay`` seconds (None: until woken). ``finish`` wakes it; so do deltas if ``on_change``."""
        if interruptible and self._finishing:
            return
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        handle = loop.call_later(delay, _resolve, waiter) if delay is not None else None
        self._waiter = waiter if interruptible else None
        self._wake_on_change = on_change
        try:
            await waiter
        finally:
            self._waiter = None
            self._wake_on_change = False
            if handle is not None:
                handle.cancel()

    def _wake(self) -> None:
        if self._waiter is not None:
            _resolve(self._waiter)


def _resolve(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_result(None)
