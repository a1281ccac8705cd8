"""``StreamSession``: one reply streaming into one chat.

The agent feeds text deltas synchronously (``feed`` never blocks and never
awaits: generation runs at model speed whatever the platform does). A
single worker task beside it turns the newest text into as few platform
calls as the platform's limits allow. Each guarantee lives in one module:

* :mod:`.preview` — what each message shows while the reply grows
  (nothing before ``min_tokens`` deltas; overflow freezes into finished
  messages, each ended with ``on_stream_end``; append-only prefixes);
* :mod:`.pacing` — when a call may be made: at most one call per
  ``edit_interval`` per message for previews, every call from the chat's
  (and the bot's) budget, nothing while a 429 blocks; updates meanwhile
  coalesce, because the worker always renders the newest text;
* :mod:`.final` — the end: the post-processed reply reconciled against the
  ledger (:mod:`.ledger`) so the person sees it exactly once, without a
  cursor, whatever failed;
* this module — the worker, the typing indicator, and the one place a
  platform hook is called.

The worker is the only caller of the platform, so calls into a chat from
one reply never overlap.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from ..errors import DeliveryError, RateLimited
from ..media import Media
from ..media_dir import MediaDirectory
from ..platform import MessageRef, Stream
from ..reasoning import postprocess_reply
from ..telemetry import final as traced_final, platform_call
from .budget import ChatBudget
from .calls import RATE_LIMITED, WITHDRAWN, call_into_chat
from .final import Finisher
from .hooks import PlatformHooks
from .ledger import Ledger, LedgerEntry
from .measure import measure_for_platform
from .observer import NO_OBSERVER, ReplyObserver
from .media import MediaSender, with_lines
from .pacing import Pacer
from .queue import FINAL, PREVIEW, PROMPT
from .preview import STATUS_GAP, Draft, clean_preview
from .split import Piece
from ..messages.shown import ShownMessage

log = logging.getLogger(__name__)

__all__ = ["STATUS_GAP", "DeliveryPolicy", "DeliveryReport", "ReplyJournal", "StreamSession"]


class ReplyJournal(Protocol):
    """Where a reply in flight is recorded for crash recovery (``recovery.journal.InFlightJournal``).

    The session tells it what each message shows after every platform call
    (and, before an edit that adds text, what it is about to show), and asks
    it before showing a cursor: a message shows the cursor only once
    the store holds its id, so a crash at any moment leaves no cursor that
    recovery cannot find. (The first send of each message goes out without
    the cursor; it appears with the next preview after the record is written.)
    """

    async def begun(self) -> None: ...

    def shown(self, messages: tuple[ShownMessage, ...]) -> None: ...

    async def intend(self, messages: tuple[ShownMessage, ...]) -> None: ...

    def recorded(self, message_id: str) -> bool: ...


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
    cut_deadline: float = 2.5            # a reply cut at shutdown is over within this, whatever the platform does
    cleanup_deadline: float = 60.0       # removing a cursor gets this long after the text is safe, past any deadline
    typing_delay: float = 1.0            # the first typing call waits this long: text that comes sooner needs none


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
    stuck: list[MessageRef] = field(default_factory=list)  # messages that refused every edit (a cursor may stay)
    media: list[MessageRef] = field(default_factory=list)  # the reply's attachments (and fallback lines sent alone)
    media_notes: list[str] = field(default_factory=list)   # one line per item shown as text instead of attached
    media_uncertain: int = 0  # items whose upload may have landed (a timeout): never sent again
    text_uncertain: int = 0   # messages of the text whose send may have landed (a timeout): never sent again
    #: previews whose first send may have landed (a timeout): the core never learned the message's id, so the
    #: final text was sent anew and the chat may show a partial copy (with its cursor) above the reply
    preview_uncertain: int = 0
    model_error: str | None = None  # the model failed (the chat was told so): a ``failed`` status reaction


class StreamSession:
    """Deliver one reply into one chat. Create it through ``Delivery.session``."""

    def __init__(self, hooks: PlatformHooks, stream: Stream, budget: ChatBudget, *,
                 bot_budget: ChatBudget | None = None, policy: DeliveryPolicy | None = None,
                 reasoning_starts_open: bool = False, shared: Any = None,
                 observer: ReplyObserver | None = None,
                 media_directory: MediaDirectory | None = None,
                 journal: ReplyJournal | None = None) -> None:
        self.hooks = hooks
        #: told what the reply's messages show after each platform call; gates the cursor (crash recovery)
        self._journal = journal
        self._observer = observer or NO_OBSERVER  # /metrics: told of the start, every platform call, the end
        self.stream = stream
        self.policy = policy or DeliveryPolicy()
        platform = hooks.platform
        settings = stream.settings
        self._limit = platform.max_message_length
        self._measure = measure_for_platform(platform)
        self._free = hooks.free_previews()  # the client's or Platform.free_previews, or None (looked up once: it runs per preview)
        self._interval = max(settings.edit_interval, platform.edit_interval)
        self._min_tokens = settings.min_tokens
        self._previews_wanted = settings.enabled
        self._previews_on = False        # decided once the plugin says whether it can edit
        self._edits_known = False        # ... which it has said
        self._ledger = Ledger()
        self._starts_open = reasoning_starts_open
        self._draft = Draft(platform, settings, self._ledger, self._measure,
                            reasoning_starts_open=reasoning_starts_open,
                            cursor_allowed=journal.recorded if journal is not None else None)
        self._pacer = Pacer(budget, bot_budget, backoff_base=self.policy.backoff_base,
                            backoff_cap=self.policy.backoff_cap, shared=shared)
        self._shown_version = -1
        self._reserve_tokens = self._pacer.preview_reserve()
        self._preview_failures = 0
        self._typing_interval = settings.typing_interval
        self._typing_at = float("inf")   # when the typing indicator is next due
        self._typing_failures = 0
        self._report = DeliveryReport()
        self._final: str | None = None
        self._media: tuple[Media, ...] = ()
        self._media_sender = MediaSender(hooks, stream, self._pacer, directory=media_directory,
                                         measure=self._measure, max_retries=self.policy.max_retries,
                                         max_rate_limits=self.policy.max_rate_limits,
                                         label=f"{platform.name}/{stream.chat_id}", observer=self._observer)
        self._interrupted = False
        self._task: asyncio.Task[DeliveryReport] | None = None
        self._finisher: Finisher | None = None
        self._cut_at: float | None = None    # cut(): the reply is over by then, whatever it is doing
        self._abandoned = False              # cut(): the bound passed and the worker was stopped mid-call
        #: An interrupted reply ends with this line when it returns one (an edit superseded the reply).
        self.interrupt_note: Callable[[], str | None] | None = None
        #: Unix time the worker started (None before ``start``): the dashboard's "running for" (issue 27)
        self.started_at: float | None = None

    @property
    def budget(self) -> ChatBudget:
        return self._pacer.budget

    @property
    def bot_budget(self) -> ChatBudget | None:
        return self._pacer.bot_budget

    # ------------------------------------------------------------------ producer side (sync)

    def start(self) -> None:
        """Start the worker; called implicitly by the first ``feed``."""
        if self._task is None:
            self.started_at = time.time()
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"stream:{self.stream.chat_id}")

    def feed(self, delta: str) -> None:
        """Take one text delta from the model. Never blocks."""
        if self._task is None:
            self.start()
        pacer = self._pacer
        if pacer.ending or not delta:
            return
        # the hot path of the whole core (once per model token): the Draft's fields, written inline
        draft = self._draft
        draft.raw.append(delta)
        visible = draft.scrubber.feed(delta)
        if not visible:
            return
        if draft.leading:
            visible = visible.lstrip()
            if not visible:
                return
            draft.leading = False
        draft.parts.append(visible)
        draft.version += 1
        draft.tokens += 1
        if pacer.wake_on_change and draft.tokens >= self._min_tokens:
            pacer.wake()

    def tool_started(self, name: str) -> None:
        """Show tool progress in the preview (never in the final text); typing is refreshed meanwhile."""
        self._draft.set_status(f"🔧 {name}…")
        self._pacer.wake()  # a preview or a typing refresh may be due

    def set_status(self, status: str) -> None:
        """Show ``status`` in the preview's progress line (e.g. waiting for approval); "" clears it."""
        self._draft.set_status(status)
        self._pacer.wake()

    def tool_finished(self, name: str) -> None:
        if self._draft.status:
            self._draft.set_status("")

    def reset(self) -> None:
        """The text so far is being replaced (an upstream retry). Previews stop; the final reconciles."""
        self._draft.reset()

    def callback(self, delta: str | None) -> None:
        """The seed's ``stream_callback``: text deltas, then None at the end of a stream."""
        if delta is not None:
            self.feed(delta)

    # ------------------------------------------------------------------ ending

    async def finish(self, final: str | None = None, media: Sequence[Media] = ()) -> DeliveryReport:
        """Deliver the final reply (``final`` is post-processed; default: what was fed), then its ``media``.

        Media is sent after the text (:mod:`.media`); what the platform cannot
        attach is one line of text at the end of the reply instead.
        """
        if self._task is None:
            self.start()
        if not self._pacer.ending:
            self._final = final
            self._media = tuple(media)
            self._pacer.ending = True
            self._observer.finishing()
            self._pacer.wake()
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def interrupt(self) -> DeliveryReport:
        """End a cancelled reply: what was shown stays, without cursor; nothing new is sent."""
        self._interrupted = True
        return await self.finish(None)

    def cut(self, within: float | None = None) -> None:
        """End this reply the way an interrupt does, and be done within ``within`` seconds (the gateway stops).

        Whatever the worker is doing — previewing, sending the pieces of a
        long final text, waiting out a 429, or stuck in a platform call that
        does not answer — no new message is sent from now on; the messages
        already on screen get their last edit (no cursor) while time is
        left. When ``within`` (default ``policy.cut_deadline``) has passed,
        the worker is stopped where it is: a call still in progress is
        abandoned and the report lists the messages not ended in ``stuck``.
        Returns at once; ``interrupt()``/``finish()`` return the report.
        """
        if self._task is not None and self._task.done():
            return
        within = self.policy.cut_deadline if within is None else within
        loop = asyncio.get_running_loop()
        at = loop.time() + max(within, 0.0)
        if self._cut_at is not None and self._cut_at <= at:
            return
        self._cut_at = at
        self._interrupted = True
        if self._finisher is not None:
            self._finisher.cut(at)
        if self._task is None:
            self.start()
        if not self._pacer.ending:
            self._final = None
            self._media = ()
            self._pacer.ending = True
            self._observer.finishing()
        self._pacer.wake()
        loop.call_at(at, self._abandon)

    def _abandon(self) -> None:
        """The cut's bound passed: stop the worker where it is (a platform call that never answers)."""
        task = self._task
        if task is not None and not task.done():
            self._abandoned = True
            task.cancel()

    @property
    def done(self) -> bool:
        """Whether the reply's delivery is over (its report is final)."""
        return self._task is not None and self._task.done()

    @property
    def calls(self) -> int:
        """Platform calls this reply made so far (typing, previews, final messages, media)."""
        return self._pacer.calls

    @property
    def shows_text(self) -> bool:
        """Some of the reply's text is on screen (a preview or a message was shown)."""
        return self._shown_version >= 0 or bool(self._ledger.refs)

    @property
    def preview_interval(self) -> float:
        """The least time between two previews of the reply (the chat's edit interval or its budget's rate)."""
        return max(self._interval, 1.0 / self._pacer.budget.budget.rate)

    @property
    def tokens_may_wait(self) -> bool:
        """No token of the reply would show the moment it arrives any more: nothing shows before the end (previews
        off, or the platform cannot edit), or ``min_tokens`` are in, so the text shows once per preview interval
        (or when the bot's budget allows) whatever arrived in between. The conversation then batches the upstream's
        reads; before that, the token that completes ``min_tokens`` may start the first text at once."""
        return (not self._previews_wanted or (self._edits_known and not self._previews_on)
                or self._draft.tokens >= self._min_tokens)

    @property
    def text(self) -> str:
        """The visible text fed so far (think blocks scrubbed)."""
        return self._draft.text

    # ------------------------------------------------------------------ the worker

    async def _run(self) -> DeliveryReport:
        pacer = self._pacer
        self._observer.started()
        try:
            if self._previews_wanted:
                self._previews_on = await self.hooks.supports_edit(self.stream)
            self._edits_known = True
            if self.hooks.implements["on_stream_start"]:
                now = pacer.now()
                spare = pacer.spare_tokens(now) >= 2  # typing now leaves a token for the first text
                self._typing_at = now if spare else now + self.policy.typing_delay
            while not pacer.ending:
                if self._previews_on and self._preview_due():
                    await self._preview_step()
                elif self._typing_due(pacer.now()):
                    await self._typing()
                else:
                    await self._idle()
            now = pacer.now()
            limit = self.policy.interrupt_deadline if self._interrupted else self.policy.final_deadline
            deadline = now + limit if self._cut_at is None else min(now + limit, self._cut_at)
            await traced_final(self._deliver_final(deadline))  # telemetry: the span "final" (as is when off)
            self._report.delivered = True
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not self._abandoned or task is None or task.cancelling() > 1:
                self._report.error = "cancelled"
                raise
            task.uncancel()  # cut at shutdown: the bound passed; this is the reply's end, not a failure
            self._report.error = "cut: the platform did not answer in time"
            self._report.stuck = [e.ref for e in self._ledger.entries
                                  if e.ref is not None and (e.uncertain or not e.ended)]
            log.warning("a reply to %s/%s was cut at shutdown with a platform call still unanswered "
                        "(a cursor may stay)", self.hooks.platform.name, self.stream.chat_id)
        except DeliveryError as exc:
            self._report.error = str(exc) or type(exc).__name__
            log.warning("delivery to %s/%s failed: %s", self.hooks.platform.name, self.stream.chat_id,
                        self._report.error)
        finally:
            self._report.messages = self._ledger.refs
            self._report.interrupted = self._interrupted
            self._report.calls = pacer.calls
            self._report.rate_limited = pacer.rate_limited_count
            entries = self._media_sender.entries
            self._report.media = self._media_sender.refs
            self._report.media_notes = [e.note for e in entries if e.note]
            self._report.media_uncertain = sum(e.state == "uncertain" for e in entries)
            self._observer.ended(self._report)
        return self._report

    async def _idle(self) -> None:
        """Nothing to show now: sleep until new text (when previewing), a typing refresh, or the end."""
        now = self._pacer.now()
        wanted = self._typing_wanted()
        delay = max(self._typing_at - now, 0.0) if wanted and self._typing_at != float("inf") else None
        if wanted and delay == 0.0:  # due but the budget is not ready: try again when it is
            delay = max(self._pacer.ready_at(now) - now, 1e-3)
        await self._pacer.sleep(delay, on_change=self._previews_on)

    # ------------------------------------------------------------------ typing

    def _typing_wanted(self) -> bool:
        """Whether nothing visible is happening, so the typing indicator should be kept alive."""
        if self._typing_failures >= 2 or not self.hooks.implements["on_stream_start"]:
            return False
        if not self._previews_on or self._draft.was_reset:
            return True   # nothing is shown until the final text
        if self._draft.status:
            return True   # a tool runs
        # before the first text; once text is arriving, the first preview needs the token, not typing
        return self._draft.tokens == 0 and not self._ledger.refs

    def _typing_due(self, now: float) -> bool:
        return self._typing_at <= now and self._typing_wanted() and self._pacer.ready_at(now) <= now

    async def _typing(self) -> None:
        """Show (refresh) the typing indicator: one call from the chat's budget, never retried."""
        pacer = self._pacer
        self._typing_at = pacer.now() + self._typing_interval
        # the one path of calls into a chat, one attempt: a 429 blocks the chat (the next refresh waits it
        # out), a failure is not retried (the indicator is refreshed anyway while it is wanted)
        outcome = await call_into_chat(
            pacer, lambda: self._observer.call("on_stream_start", "",
                                               self.hooks.call("on_stream_start", stream=self.stream)),
            what="on_stream_start", label=f"{self.hooks.platform.name}/{self.stream.chat_id}",
            max_retries=0, max_rate_limits=0, priority=PREVIEW, withdraw_on_text=True)
        if outcome.ok:
            self._typing_failures = 0
        elif outcome.failure not in (RATE_LIMITED, WITHDRAWN):  # a failed typing indicator must not cost the reply
            self._typing_failures += 1

    # ------------------------------------------------------------------ previews

    def _preview_due(self) -> bool:
        draft = self._draft
        idle = draft.tokens < self._min_tokens and not (draft.status and not draft.append_only)
        return not (draft.was_reset or idle or draft.version == self._shown_version)

    async def _preview_step(self) -> None:
        pacer = self._pacer
        entry, _ = self._draft.plan()
        if entry is None:
            self._shown_version = self._draft.version
            return
        floor = entry.last_call + self._interval if entry.ref is not None else float("-inf")
        charged = entry.frozen or self._free is None or not self._free_previews()
        reserve = self._reserve(entry)
        if not await pacer.until(lambda now: pacer.ready_at(now, floor, charged, reserve), interruptible=True):
            return  # finishing: the final delivery takes over
        # the bot's token, behind every final and first text waiting (a reply's first text goes ahead of previews)
        if not await pacer.bot_slot(PROMPT if not self._ledger.refs else PREVIEW, interruptible=True):
            return  # finishing (or a tool's line to show): the token went to the next waiter
        try:
            await self._preview_call()
        finally:
            pacer.refund()  # the preview was not made after all: the bot's token goes to the next waiter

    async def _preview_call(self) -> None:
        """The preview, now that the bot's budget granted its token: the newest text, if still due."""
        pacer = self._pacer
        version = self._draft.version
        entry, text = self._draft.plan()  # the newest text: updates coalesce here
        if entry is None:
            self._shown_version = version
            return
        now = pacer.now()
        charged = entry.frozen or self._free is None or not self._free_previews()
        if pacer.ready_at(now, entry.last_call + self._interval if entry.ref is not None else float("-inf"),
                          charged, self._reserve(entry)) > now:
            return  # the plan moved to a message that is not due yet
        try:
            # a frozen message's text is final: it ends now, with on_stream_end
            await self._show(entry, text, entry.frozen, self._draft.text)
            if entry is self._ledger.live:
                self._shown_version = version
            self._preview_failures = 0
        except RateLimited as exc:
            pacer.rate_limited(exc)
        except DeliveryError as exc:
            self._preview_failed(entry, exc)

    def _reserve(self, entry: LedgerEntry) -> float:
        """Tokens this preview must leave for the end of the reply (:meth:`Pacer.preview_reserve`).

        None for the reply's first text (it is never held back) and none for a
        frozen message's end (``on_stream_end``: its text is final, it is one of
        the calls the reserve is kept for).
        """
        if entry.frozen or not self._ledger.refs:
            return 0.0
        return self._reserve_tokens

    def _free_previews(self) -> bool:
        """Whether this stream's previews cost the chat nothing (``Platform.free_previews``)."""
        free = self._free
        return free is not None and bool(free(self.stream))

    def _preview_failed(self, entry: LedgerEntry, exc: DeliveryError) -> None:
        self._preview_failures += 1
        if exc.maybe_delivered:
            entry.uncertain = True
        if entry.ref is None and exc.maybe_delivered:
            # a send that may have landed cannot be edited later: stop previewing
            self._previews_on = False
            self._report.preview_uncertain += 1
            log.warning("a preview on %s/%s may have landed unseen (%s): the chat may show a partial copy above "
                        "the reply", self.hooks.platform.name, self.stream.chat_id, exc)
        if not exc.retryable or self._preview_failures >= self.policy.preview_failures_before_fallback:
            log.info("previews on %s/%s stop after %s; the final text is sent whole",
                     self.hooks.platform.name, self.stream.chat_id, exc)
            self._previews_on = False
        self._pacer.back_off(self._preview_failures)

    # ------------------------------------------------------------------ the final text

    def _final_document(self) -> str:
        if self._interrupted:
            shown = self.text.strip()  # cut off: a held-back partial tag is not text yet
            note = self.interrupt_note() if self.interrupt_note is not None and shown else None
            return f"{shown}\n\n{note}" if note else shown
        if self._final is not None:
            return self._final.strip()
        return postprocess_reply("".join(self._draft.raw), starts_open=self._starts_open).strip()

    async def _deliver_final(self, deadline: float) -> None:
        doc = self._final_document()
        media = await self._media_sender.plan(self._media if not self._interrupted else ())
        doc = with_lines(doc, media.lines)  # what cannot be attached is shown as text, once, with the reply
        self._report.text = doc
        plan = self._ledger.plan_final(doc, self.text, self._limit, self._measure, reset=self._draft.was_reset,
                                       interrupted=self._interrupted, min_end=self._append_min_end(doc),
                                       keep=self.hooks.platform.keep_whole)
        finisher = Finisher(self._pacer, self._show, limit=self._limit, measure=self._measure,
                            max_retries=self.policy.max_retries, max_rate_limits=self.policy.max_rate_limits,
                            edit_floor=self.hooks.platform.edit_interval,
                            label=f"{self.hooks.platform.name}/{self.stream.chat_id}",
                            keep=self.hooks.platform.keep_whole)
        if self._cut_at is not None:
            finisher.cut(self._cut_at)
        self._finisher = finisher
        try:
            await finisher.run(doc, plan, deadline=deadline, cleanup_grace=self.policy.cleanup_deadline,
                               interrupted=self._interrupted)
        finally:  # the ledger lists the messages as they now stand on screen, in order
            self._finisher = None
            self._ledger.entries = [entry for entry, _ in finisher.done + finisher.todo]
            self._report.stuck = [ref for ref in finisher.stuck if ref is not None]
            self._report.text_uncertain = sum(e.ref is None and e.maybe_sent is not None
                                              for e in self._ledger.entries)
        if self._cut_at is None:
            await self._media_sender.send(media, deadline=deadline)  # after the text, each item once

    def _append_min_end(self, doc: str) -> int | None:
        """Append-only: the live message keeps at least what it shows, when that is still the reply's text."""
        live = self._ledger.live
        if not self._draft.append_only or live is None or live.seen is None or live.ref is None:
            return None
        seen, text = live.seen
        return seen.end if doc[seen.start:seen.end] == text else None

    # ------------------------------------------------------------------ one platform call

    async def _show(self, entry: LedgerEntry, text: str, final: bool, doc: str) -> None:
        """One call: edit ``entry`` to ``text``, or send it as a new message. Updates the ledger.

        ``final``: the message's text is final, so ``on_stream_end`` (else a
        preview, ``on_delta``). ``doc`` is the reply text the message's piece
        points into, to remember which part of the reply it shows.
        """
        hook = "on_stream_end" if final else "on_delta"
        if self._journal is not None and entry.ref is None:
            await self._journal.begun()  # a crash after this send finds the reply's record
        elif self._journal is not None:
            await self._intend(entry, text)
        try:
            await self._pacer.bot_slot(FINAL if final else PREVIEW, interruptible=False)  # (previews hold it already)
            async with self._pacer.turn():  # one call into the chat at a time (a reaction, a question, a reply)
                await self._pacer.acquire(chat=final or self._free is None or not self._free_previews())
                entry.last_call = self._pacer.now()
                ref = await self._observer.call(hook, text, platform_call(
                    self.hooks.call(hook, stream=self.stream, message=entry.ref, text=text), hook))
        except RateLimited:
            raise
        except DeliveryError as exc:
            if exc.maybe_delivered and entry.ref is not None:
                entry.shown, entry.uncertain = text, True
            elif exc.maybe_delivered and final:  # a message's final text may be on screen: never sent again
                entry.maybe_sent = text
            raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a plugin bug is a failed call, not a crashed reply
            raise DeliveryError(f"{hook} raised {type(exc).__name__}: {exc}", retryable=False) from exc
        finally:
            self._pacer.refund()  # granted but not charged (cancelled in the chat's turn): back to the queue
        if entry.ref is None:
            if not isinstance(ref, MessageRef):
                raise DeliveryError(f"{hook} sent a message but returned {ref!r}, not a MessageRef", retryable=False)
            entry.ref = ref
        entry.shown, entry.uncertain, entry.ended = text, False, final
        if doc:  # remember which part of the reply it now shows (a failed final edit keeps that much)
            piece = entry.piece
            end = piece.end if final else entry.pending_end
            entry.seen = (Piece(piece.start, end, piece.opener), doc[piece.start:end])
        if self._journal is not None:
            self._journal.shown(self.shown_messages())

    def shown_messages(self, about_to: tuple[LedgerEntry, str] | None = None) -> tuple[ShownMessage, ...]:
        """The reply's messages as the person sees them now, without cursor or tool line (for recovery).

        ``about_to``: one message's text (already without cursor) as it is about to be (an edit's intent),
        the others as they are.
        """
        cursor = self._draft.cursor
        return tuple(ShownMessage(e.ref.message_id, e.ref.chat_id, e.ref.thread_id,
                                  about_to[1] if about_to is not None and e is about_to[0]
                                  else e.shown if e.ended else clean_preview(e.shown, cursor), e.ended)
                     for e in self._ledger.entries if e.ref is not None and e.shown is not None)

    async def _intend(self, entry: LedgerEntry, text: str) -> None:
        """Before an edit that adds text to a message, the journal records the text first (see
        :meth:`ReplyJournal.intend`): a crash then never leaves a record shorter than the screen."""
        assert self._journal is not None
        if entry.ended or entry.shown is None:
            return
        cursor = self._draft.cursor
        now, after = clean_preview(entry.shown, cursor), clean_preview(text, cursor)
        if after == now or not after.startswith(now):
            return  # nothing added (or text taken away: recorded once the edit is on screen)
        await self._journal.intend(self.shown_messages(about_to=(entry, after)))
