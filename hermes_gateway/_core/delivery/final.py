"""The end of a reply: every message shows its final text, exactly once, without cursor.

The ledger's plan (:meth:`.ledger.Ledger.plan_final`) says which message
ends with which text; each is ended with ``on_stream_end`` — retried,
429s waited out, and paced by the chat's budget only (the preview
``edit_interval`` no longer applies: the last word should not wait).

When a message's final edit cannot be made (edits keep failing, or fail
for good), two promises still hold:

* **the text is not lost**: the part of it the message does not already
  show is sent anew, with everything after it, in order;
* **no cursor stays**: the message is ended with what it already showed,
  minus cursor and tool line (or, when what it showed is not part of the
  final reply, with :data:`MOVED`). That clean-up is retried after the
  text is safe, whatever failed before, for ``cleanup_grace`` seconds even
  past the final deadline. A message that refuses edits for good twice in
  a row is gone (deleted) or can never be edited again: its whole text is
  sent anew, and the report lists it in ``stuck`` (a cursor may stay on a
  message nothing can edit).

A **send that may have landed** (a timeout after the request went out:
``maybe_delivered``) is never made again: the message may be on screen
already, under an id the core will never learn, so a second send could
show the text twice. Like an attachment in that case (:mod:`.media`), the
piece is marked (``LedgerEntry.maybe_sent``, counted in
``DeliveryReport.text_uncertain``) and the reply goes on with the next piece. If it did not land, that piece is
missing: the report and the log say so.

A reply **cut** at shutdown (:meth:`Finisher.cut`) sends no new message
from then on: the messages already on screen still get their last edit
while time is left, and no deadline reaches past the cut's.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Awaitable, Callable

from ..errors import DeliveryError, RateLimited
from .ledger import LedgerEntry
from .measure import Measure
from .pacing import Pacer
from .split import KeepWhole, Piece, fence_after, render, split_text

log = logging.getLogger(__name__)

#: A message whose text had to be sent anew further down, when it cannot show a part of the reply.
MOVED = "(continued below)"

Show = Callable[[LedgerEntry, str, bool, str], Awaitable[None]]
Plan = list[tuple[LedgerEntry, str]]


class Finisher:
    """Carries out a final plan for one reply."""

    def __init__(self, pacer: Pacer, show: Show, *, limit: int, measure: Measure, max_retries: int,
                 max_rate_limits: int, edit_floor: float, label: str, keep: KeepWhole | None = None) -> None:
        self.pacer = pacer
        self.show = show
        self.limit = limit
        self.measure = measure
        self.keep = keep                # Platform.keep_whole
        self.max_retries = max_retries
        self.max_rate_limits = max_rate_limits
        self.edit_floor = edit_floor    # the platform's own minimum between edits of one message
        self.label = label
        self.cleanups: list[tuple[LedgerEntry, str, int]] = []  # message, text to end with, refusals so far
        self.doc = ""
        self.done: Plan = []    # messages ended (or cleaned up), in screen order
        self.todo: Plan = []    # messages still to end
        self.stuck: list = []   # refs of messages that could not be ended (a cursor may stay)
        self.cut_at: float | None = None  # cut(): nothing new is sent; every deadline ends by then

    def cut(self, at: float) -> None:
        """The gateway stops: send nothing new, only end the messages on screen, and be done by ``at``."""
        self.cut_at = at if self.cut_at is None else min(self.cut_at, at)

    def _bound(self, deadline: float) -> float:
        return deadline if self.cut_at is None else min(deadline, self.cut_at)

    async def run(self, doc: str, plan: Plan, *, deadline: float, cleanup_grace: float,
                  interrupted: bool) -> Plan:
        """End every message of ``plan``; returns the messages as they now stand, in screen order."""
        self.doc = doc
        done: Plan = []
        todo: Plan = list(plan)
        self.done, self.todo = done, todo
        try:
            while todo:
                if self.cut_at is not None:  # cut: the messages not sent yet never will be
                    todo[:] = [(entry, text) for entry, text in todo if entry.ref is not None]
                    interrupted = True
                    if not todo:
                        break
                entry, text = todo.pop(0)
                done.append((entry, text))
                if not entry.needs_end(text) or await self._final_call(entry, text, deadline):
                    continue
                log.info("final edit of %s failed; its text is sent anew", self.label)
                kept_text, orphans, replacement = await self._fall_back(doc, entry, todo, interrupted)
                done[-1] = (entry, kept_text)
                done.extend((orphan, MOVED) for orphan in orphans)
                todo[:0] = replacement
                # the text must not be lost: sending it anew gets the clean-up's time, past the deadline
                deadline = max(deadline, self.pacer.now() + cleanup_grace)
        except DeliveryError:
            await self._clean_up(self._bound(max(deadline, self.pacer.now() + cleanup_grace)))
            raise
        await self._clean_up(self._bound(max(deadline, self.pacer.now() + cleanup_grace)))
        return done

    # ------------------------------------------------------------------ one final call

    async def _final_call(self, entry: LedgerEntry, text: str, deadline: float) -> bool:
        """Show ``text`` in ``entry`` for good. False: an existing message that cannot be edited."""
        failures = rate_limits = 0
        while True:
            # time spent waiting out 429s does not count: a known wait is not a failure (unless cut)
            if self.pacer.now() > self._bound(deadline + self.pacer.rate_limit_waits):
                if entry.ref is not None:
                    return False
                raise DeliveryError("gave up delivering the final text (deadline passed)", retryable=False)
            floor = entry.last_call + self.edit_floor if entry.ref is not None else float("-inf")
            await self.pacer.until(partial(self.pacer.ready_at, not_before=floor), interruptible=False)
            try:
                await self.show(entry, text, True, self.doc)
                return True
            except RateLimited as exc:
                self.pacer.rate_limited(exc)
                rate_limits += 1
                if rate_limits > self.max_rate_limits:
                    if entry.ref is not None:
                        return False
                    raise
            except DeliveryError as exc:
                if entry.ref is None and exc.maybe_delivered:
                    # on screen or not, nobody can say; sent again it could show twice: never sent again
                    entry.maybe_sent = text
                    log.warning("a message of %s may not have arrived (%s after sending); not sent again, "
                                "so it cannot show twice", self.label, exc)
                    return True
                failures += 1
                if exc.retryable and failures <= self.max_retries:
                    self.pacer.back_off(failures)
                    continue
                if entry.ref is None:
                    raise
                return False

    # ------------------------------------------------------------------ when an edit cannot be made

    async def _fall_back(self, doc: str, entry: LedgerEntry, later: Plan,
                         interrupted: bool) -> tuple[str, list[LedgerEntry], Plan]:
        """The final edit of ``entry`` cannot be made: keep what it shows, send the rest (and later messages) anew.

        First one edit to what the message already shows of the reply, minus
        the cursor (or :data:`MOVED`). If that works, or fails in a way that
        may pass, the message keeps that part and only the rest is sent anew
        (a clean-up keeps retrying it). If it fails for good, the message is
        gone (deleted) or refuses every edit: its whole text is sent anew,
        and the clean-up tries once more to mark it :data:`MOVED`. Returns
        the text ``entry`` ends with, the messages below it that had to move
        (cleaned up to :data:`MOVED`), and what is sent anew.
        """
        piece = entry.piece
        kept = self._kept_prefix(doc, entry)
        keep_text = render(doc, Piece(piece.start, kept, piece.opener), limit=self.limit,
                           measure=self.measure) if kept is not None else MOVED
        outcome = await self._try_once(entry, keep_text) if entry.needs_end(keep_text) else "ok"
        if outcome == "gone":
            # deleted, or never editable again: its whole text is sent anew; one more try to mark it moved
            log.info("a message of %s refuses edits (deleted?); its whole text is sent anew", self.label)
            keep_text, kept = MOVED, None
            self.cleanups.append((entry, MOVED, 1))
            rest_start, rest_opener = piece.start, piece.opener
        elif kept is not None:
            entry.piece = Piece(piece.start, kept, piece.opener)
            rest_start, rest_opener = kept, fence_after(doc[piece.start:kept], piece.opener)
        else:
            rest_start, rest_opener = piece.start, piece.opener
        if outcome == "retry":
            self.cleanups.append((entry, keep_text, 0))
        replacement: Plan = []
        if not interrupted and rest_start < piece.end:
            for part in split_text(doc[:piece.end], self.limit, self.measure, start=rest_start, opener=rest_opener,
                                   keep=self.keep):
                text = render(doc, part, limit=self.limit, measure=self.measure)
                if text.strip():  # the whitespace at a cut is no message of its own
                    replacement.append((LedgerEntry(part, frozen=True), text))
        orphans = []
        for stale, _ in later:  # messages below it must now come after the new ones
            if stale.ref is not None:
                orphan = _orphan(stale)
                orphans.append(orphan)
                self.cleanups.append((orphan, MOVED, 0))
                stale.ref, stale.shown, stale.uncertain, stale.ended, stale.seen = None, None, False, False, None
        return keep_text, orphans, replacement

    async def _try_once(self, entry: LedgerEntry, text: str) -> str:
        """One paced attempt to end ``entry`` with ``text``: "ok", "retry" (may pass later) or "gone"."""
        floor = entry.last_call + self.edit_floor
        await self.pacer.until(partial(self.pacer.ready_at, not_before=floor), interruptible=False)
        try:
            await self.show(entry, text, True, self.doc)
        except RateLimited as exc:
            self.pacer.rate_limited(exc)
            return "retry"
        except DeliveryError as exc:
            return "retry" if exc.retryable else "gone"
        return "ok"

    @staticmethod
    def _kept_prefix(doc: str, entry: LedgerEntry) -> int | None:
        """Where the reply text ``entry`` already shows ends (None: it shows nothing of the final reply)."""
        if entry.seen is None:  # uncertain is fine: the clean-up edit overwrites whatever it shows
            return None
        seen, text = entry.seen
        if seen.start != entry.piece.start or seen.opener != entry.piece.opener or seen.end > entry.piece.end:
            return None
        if seen.end <= seen.start or doc[seen.start:seen.end] != text or not text.strip():
            return None
        end = seen.end
        if end < len(doc) and not doc[end].isspace() and not doc[end - 1].isspace():
            space = max(text.rfind(" "), text.rfind("\n"))  # the preview stopped mid-word: cut before it
            if space > 0 and text[:space].strip():
                end = seen.start + space + 1
        while end < entry.piece.end and doc[end].isspace():
            end += 1  # the whitespace at the cut ends this message, as at any split
        return end

    # ------------------------------------------------------------------ no cursor left behind

    async def _clean_up(self, deadline: float) -> None:
        """End every message that lost its place with text it can keep; retried, whatever failed before."""
        cleanups, self.cleanups = self.cleanups, []
        for entry, text, refusals in cleanups:
            failures = rate_limits = 0
            while entry.needs_end(text):
                if self.pacer.now() > self._bound(deadline + self.pacer.rate_limit_waits):
                    log.warning("a message of %s could not be ended in time (its cursor may stay)", self.label)
                    self.stuck.append(entry.ref)
                    break
                floor = entry.last_call + self.edit_floor
                await self.pacer.until(partial(self.pacer.ready_at, not_before=floor), interruptible=False)
                try:
                    await self.show(entry, text, True, self.doc)
                except RateLimited as exc:
                    self.pacer.rate_limited(exc)
                    rate_limits += 1
                    if rate_limits > self.max_rate_limits:
                        log.warning("a message of %s could not be ended (429s; its cursor may stay)", self.label)
                        self.stuck.append(entry.ref)
                        break
                except DeliveryError as exc:
                    refusals = refusals + 1 if not exc.retryable else 0
                    if refusals >= 2:  # refused for good twice in a row: deleted, or never editable again
                        log.info("a message of %s could not be ended: %s", self.label, exc)
                        self.stuck.append(entry.ref)
                        break
                    failures += 1  # retried until the deadline: a cursor must not stay
                    self.pacer.back_off(failures)


def _orphan(entry: LedgerEntry) -> LedgerEntry:
    """A copy of ``entry`` that keeps its message, for clean-up after the entry itself is sent anew."""
    return LedgerEntry(entry.piece, frozen=True, text=entry.text, ref=entry.ref, shown=entry.shown,
                       uncertain=entry.uncertain, ended=entry.ended, seen=entry.seen, last_call=entry.last_call)
