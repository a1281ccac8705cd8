"""Record a reply while it streams, so a replica that finds it after a crash knows what is on screen.

The record is written when the reply starts and rewritten when what it
shows changes (the messages' refs and their text without cursor). Writes
run in one task beside the reply, the newest state coalescing over the
ones not yet written, so a slow or failing store never delays a word: a
store that fails costs a log line a minute (the reply goes on; only its
recovery after a crash is lost). The record is cleared by the turn's own
``record_turn(..., in_flight=id)`` — in the same transaction — or by
:meth:`InFlightJournal.end` when no turn is recorded.

An edit that adds text is recorded *before* it is sent (:meth:`InFlightJournal.intend`,
waiting for that write at most :data:`INTENT_WAIT`): so after a crash the
record never holds less than the screen showed, and recovery's final edit
(the text and the note) never takes words away from the person. It may hold
a few words more, which were never shown: the reply had them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..store.base import ReplyInFlight, ShownMessage, StoreError
from ..store.outage import report as report_store_failure

log = logging.getLogger(__name__)

#: Longest an edit waits for its intent to be written (a slow store delays a word this much at most).
INTENT_WAIT = 0.25


class InFlightJournal:
    """The store's record of one reply in flight; see the module docstring."""

    def __init__(self, store: Any, reply: ReplyInFlight) -> None:
        self.store = store
        self.reply = reply
        self._pending: tuple[ShownMessage, ...] | None = None
        self._written: tuple[ShownMessage, ...] = ()
        self._wake = asyncio.Event()
        self._closing = False
        self.failed = False  # the store refused a write: the record may be missing or stale
        self._begun = asyncio.Event()  # the record exists (or the store failed): a message may be sent
        self._seq = 0  # states handed to the writer so far
        self._written_seq = 0  # ... and written
        self._progress = asyncio.Event()  # set (and replaced) after each write
        self._task = asyncio.get_running_loop().create_task(self._write(), name=f"in-flight:{reply.chat_id}")

    @property
    def id(self) -> str:
        return self.reply.id

    async def begun(self) -> None:
        """Wait until the record exists (or the store failed): a reply's first message is sent after it.

        It was started with the turn, so by the model's first words it is
        nearly always written; a crash after the first send then finds it.
        """
        if not self._begun.is_set():
            await asyncio.shield(self._begun.wait())

    def recorded(self, message_id: str) -> bool:
        """Whether the store holds this message's id (only then may it show the cursor)."""
        return not self.failed and any(m.message_id == message_id for m in self._written)

    def shown(self, messages: tuple[ShownMessage, ...]) -> None:
        """The reply's messages as they now stand (called after every successful platform call)."""
        if messages != (self._pending if self._pending is not None else self._written):
            self._pending = messages
            self._seq += 1
            self._wake.set()

    async def intend(self, messages: tuple[ShownMessage, ...]) -> None:
        """The messages as they are about to stand (before an edit that adds text): recorded first.

        Waits until that state is written, at most :data:`INTENT_WAIT` (then
        the edit goes out anyway; the write goes on beside it).
        """
        if self.failed or self._closing:
            return
        self.shown(messages)
        target = self._seq
        loop = asyncio.get_running_loop()
        deadline = loop.time() + INTENT_WAIT
        while self._written_seq < target and not self.failed and not self._task.done():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            try:
                await asyncio.wait_for(self._progress.wait(), remaining)
            except TimeoutError:
                return

    async def _write(self) -> None:
        try:
            try:
                await self.store.begin_reply(self.reply)
            finally:
                self._begun.set()
            while True:
                if self._pending is None:
                    if self._closing:
                        return
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                shown, self._pending, seq = self._pending, None, self._seq
                await self.store.update_reply(self.reply.id, shown)
                self._written, self._written_seq = shown, seq
                progress, self._progress = self._progress, asyncio.Event()
                progress.set()
        except StoreError as exc:
            self.failed = True
            report_store_failure(self.store, log, "reply in flight not recorded (no recovery after a crash)", exc)
        except Exception as exc:  # never the reply's failure
            self.failed = True
            log.warning("recording a reply in flight failed: %s: %s", type(exc).__name__, exc)

    async def settle(self) -> None:
        """Wait until the newest state is written (or the store failed): then the record can be cleared."""
        self._closing = True
        self._wake.set()
        await asyncio.shield(self._task)

    async def end(self) -> None:
        """Clear the record without recording a turn (the reply failed and nothing of it is kept)."""
        await self.settle()
        try:
            await self.store.end_reply(self.reply.id)
        except StoreError as exc:
            report_store_failure(self.store, log, "reply in flight not cleared", exc)
