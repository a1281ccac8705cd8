"""Finish what a crash left: each reply still recorded as in flight by a process that is gone.

At start (and, with replicas, every half lease, for chats whose lease a
dead replica let expire) the gateway lists the records it is not running
itself. Each is queued in its chat's lane like a message, so it runs while
this replica holds the chat: nothing else streams into the chat meanwhile,
and with replicas the chat's lease says its last owner is gone (a live
one still holds it, or already cleared the record). Then:

1. the record is **claimed** in the store (compare-and-set of its owner):
   one replica, one time, however many look at once;
2. every message it shows is ended through the delivery core
   (``on_stream_end``, paced, retried) with its text minus the cursor;
3. ``conversation.after_crash: note`` (default) appends :data:`CRASH_NOTE`
   to the last message (a new message when nothing was shown) and records
   the person's message, and what was shown, in the history, clearing the
   record in the same write; ``retry`` answers the message again instead —
   once: a retry cut by another crash gets the note. A reply of which
   nothing reached the person (no text sent, on a platform that cannot
   edit: email, WhatsApp) is answered again, once, whatever ``after_crash``
   says: there is nothing shown to put a note under.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..delivery.ledger import LedgerEntry
from ..delivery.split import Piece
from ..platform import MessageRef
from ..store import ConversationKey, StoreError
from ..store.base import ReplyInFlight
from ..store.outage import report as report_store_failure

if TYPE_CHECKING:
    from ..config import Config
    from ..coordination import Coordination
    from ..delivery import Delivery
    from ..store import ConversationStore

log = logging.getLogger(__name__)

#: The line a reply cut by a crash ends with (``after_crash: note``).
CRASH_NOTE = "— interrupted; please send your message again"


class Recovery:
    """Finds the replies in flight a dead process left, and has each finished once (see the module docstring)."""

    def __init__(self, config: "Config", store: Callable[[], "ConversationStore"],
                 coordination: Callable[[], "Coordination"], queue: Callable[..., Any]) -> None:
        """``queue(record, done=callback)``: the inbound runtime queues the record in its chat's lane."""
        self.config = config
        self._store = store
        self._coordination = coordination
        self._queue = queue
        self._queued: set[str] = set()   # record ids in a lane here (not queued twice by the sweeps)
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def owner(self) -> str:
        return str(self._coordination().replica_id)

    async def start(self) -> None:
        """Queue what a crash left now; with replicas, look again every half lease for replicas that die."""
        await self.sweep(at_start=True)
        coordination = self._coordination()
        if coordination.shared and self._sweeper is None:
            every = max(getattr(coordination, "lease_ttl", 15.0) / 2, 0.5)
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_every(every), name="recovery")

    async def stop(self) -> None:
        sweeper, self._sweeper = self._sweeper, None
        if sweeper is not None:
            sweeper.cancel()
            await asyncio.gather(sweeper, return_exceptions=True)

    async def _sweep_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await self.sweep()
            except Exception as exc:  # the next sweep tries again
                log.warning("looking for replies a crash left failed: %s: %s", type(exc).__name__, exc)

    async def sweep(self, *, at_start: bool = False) -> int:
        """Queue each record this replica is responsible for; returns how many were queued.

        ``at_start``: records owned by this replica id are stale too (a gateway
        object started again keeps its id; nothing of it runs yet).
        """
        store = self._store()
        try:
            records = await store.replies_in_flight()
        except StoreError as exc:
            report_store_failure(store, log, "replies a crash left not looked for", exc)
            return 0
        coordination = self._coordination()
        queued = 0
        # not running here (nor already waiting for its chat here)
        others = [r for r in records if not ((r.owner == self.owner and not at_start) or r.id in self._queued)]
        # who holds each chat, in one round trip right after the read (one GET per record took long enough
        # under a burst that many replies ended meanwhile, and each such record was queued for nothing)
        holders = (await coordination.lease_holders([(r.platform, r.chat_id, r.thread_id) for r in others])
                   if coordination.shared else [None] * len(others))
        for record, holder in zip(others, holders):
            if record.id in self._queued:
                continue  # queued meanwhile, by a sweep that ran while this one waited for the holders
            if holder is not None and holder != self.owner:
                continue  # a live replica holds the chat: its owner may be running it
            if not self.config.platform_enabled(record.platform):
                continue  # not served here; left for a gateway that serves it
            self._queued.add(record.id)
            self._queue(record, done=lambda _f, rid=record.id: self._queued.discard(rid))
            queued += 1
        if queued:
            log.info("found %d repl%s cut by a crash; finishing them", queued, "y" if queued == 1 else "ies")
        return queued


@dataclass(frozen=True)
class CutReplies:
    """What finishing a cut reply uses, handed over by the inbound runtime that runs it in the chat's lane.

    ``answer_again(record)``: queue the record's message to be answered anew
    (``after_crash: retry``).
    """

    config: "Config"
    store: Callable[[], "ConversationStore"]
    delivery: Callable[[], "Delivery"]
    coordination: Callable[[], "Coordination"]
    answer_again: Callable[[ReplyInFlight], Any]


async def finish_cut_reply(parts: CutReplies, record: ReplyInFlight) -> Any:
    """Claim ``record`` and finish it (runs in the chat's lane). Returns the delivery report, or None."""
    store = parts.store()
    owner = parts.coordination().replica_id
    try:
        claimed = await store.claim_reply(record.id, record.owner, owner)
    except StoreError as exc:
        report_store_failure(store, log, "a reply cut by a crash not claimed", exc)
        return None
    if claimed is None:
        return None  # another replica finished it, or its reply ended after all
    session = parts.delivery().session(claimed.platform, claimed.chat_id, thread_id=claimed.thread_id,
                                       chat_kind=claimed.chat_kind, reply_to=claimed.message_id)
    editable = bool(await session.hooks.supports_edit(session.stream))
    # nothing sent on a platform without edits: no message to put the note under, so answered again (once)
    unseen = not editable and not any(m.text for m in claimed.shown)
    retry = (parts.config.conversation.after_crash == "retry" or unseen) and claimed.attempt == 0
    report = await _end_messages(session, editable, claimed, note=not retry)
    log.info("%s: finished a reply in chat %s cut by a crash (%s)", claimed.platform, claimed.chat_id,
             "answering it again" if retry else "noted")
    key = ConversationKey(claimed.platform, claimed.chat_id, claimed.thread_id)
    if retry:
        try:
            await store.end_reply(claimed.id)
        except StoreError as exc:
            report_store_failure(store, log, "a reply cut by a crash not cleared", exc)
            return report
        parts.answer_again(claimed)
        return report
    shown = "\n\n".join(m.text for m in claimed.shown if m.text)
    turn: list[dict[str, Any]] = [{"role": "user", "content": claimed.text}]
    if shown:
        turn.append({"role": "assistant", "content": shown})
    try:
        await store.record_turn(key, turn, in_flight=claimed.id)
    except StoreError as exc:
        report_store_failure(store, log, "a reply cut by a crash not recorded", exc)
    return report


async def _end_messages(session: Any, editable: bool, record: ReplyInFlight, *, note: bool) -> Any:
    """End every shown message without cursor (and append the note), through one delivery session.

    The session's ledger is loaded with the messages as they stand: each one
    not ended yet is edited (its text is uncertain: it shows a cursor); the
    last stays open, so the note is appended to it when it fits. On a
    platform that cannot edit, every shown message is final already: the
    note is a message of its own.
    """
    if not editable:  # what it sent is final (no previews, no cursor): the note alone, as a new message
        return await session.finish(CRASH_NOTE) if note else None
    doc = ""
    entries: list[LedgerEntry] = []
    shown = [m for m in record.shown if m.text]
    for i, message in enumerate(shown):
        start = len(doc)
        doc += message.text
        live = i == len(shown) - 1
        entry = LedgerEntry(Piece(start, len(doc), None), frozen=not live, text=None if live else message.text,
                            ref=MessageRef(message.chat_id, message.message_id, message.thread_id))
        if message.ended and not live:
            entry.shown, entry.ended = message.text, True
        else:
            entry.shown, entry.uncertain = message.text, True  # it showed a cursor: always edited
        entries.append(entry)
    if note:
        doc = f"{doc}\n\n{CRASH_NOTE}" if doc else CRASH_NOTE
    session._ledger.entries = entries
    if not doc or (not note and all(e.ended for e in entries)):
        return None
    return await session.finish(doc)
