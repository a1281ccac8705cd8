"""Messages waiting in a chat's queue, kept in the store while they wait, so that a crash does not lose them.

A message that arrives while its chat's reply is being written waits its
turn (``conversation.busy: queue``). Its update id is saved at once, so a
redelivery is dropped; but nothing else of it was kept until its turn
started. A process killed meanwhile (SIGKILL, the OOM killer, a power cut)
lost it for good: the platform does not send it again, and nobody told the
person. A graceful stop always wrote such turns down (now through
:meth:`WaitingTurns.keep` too): as a reply in flight that showed nothing,
which the next start finishes like any reply a crash cut — the person is
told (``— interrupted; please send your message again``), or the message is
answered (``after_crash: retry``).

Here each waiting turn is written down that way as soon as it waits,
rewritten when another message joins it (or an edit replaces one), and
cleared when its turn starts (the reply's own record follows) or when it
is dropped (``/stop``, ``/new``). A message into an idle chat starts at
once and costs no write. The writes of one turn run in order, in a task
beside the lane: receiving stays synchronous, and a failing store costs a
log line (the message then is only as safe as before). Alone only: with
replicas a message also waits for the chat's lease, and another replica's
sweep would take the record of a live one's waiting message for a dead
one's reply.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable
from uuid import uuid4

from ..store.base import ReplyInFlight, StoreError
from ..store.outage import report as report_store_failure
from .lane import TextTurn

log = logging.getLogger(__name__)

#: Longest a turn waits for its record of waiting to be cleared before it starts: a slow or failing store
#: delays a reply this much at most (the clearing goes on beside it; a crash just then may leave the person
#: one note too many, never a message lost). The same bound as the journal's intent (``recovery.journal``).
CLEAR_WAIT = 0.25


class WaitingTurns:
    """The store's records of the turns waiting in this gateway's lanes (see the module docstring)."""

    def __init__(self, store: Callable[[], Any], owner: Callable[[], str]) -> None:
        self._store = store
        self._owner = owner
        #: Set when the gateway stops: what waits then is kept as it stands (dropping it clears nothing).
        self.closing = False
        self._tails: dict[str, asyncio.Task[None]] = {}  # each kept turn's latest write, by record id
        self.pending: set[asyncio.Task[None]] = set()

    def keep(self, turn: TextTurn) -> None:
        """The turn waits (or changed while waiting): write its record, or write it again."""
        if turn.kept is None:
            turn.kept = uuid4().hex
        last = turn.messages[-1]
        record = ReplyInFlight(turn.kept, last.platform, last.chat_id, last.thread_id, last.chat_kind,
                               last.message_id, turn.text, self._owner())
        self._then(turn.kept, lambda store: store.begin_reply(record))

    async def started(self, turn: TextTurn) -> None:
        """The turn starts: its record goes first (after any write of it still on its way; at most
        :data:`CLEAR_WAIT` of the turn's time)."""
        record_id, turn.kept = turn.kept, None
        if record_id is not None:
            await asyncio.wait({self._then(record_id, lambda store: store.end_reply(record_id))}, timeout=CLEAR_WAIT)

    def dropped(self, turn: TextTurn) -> None:
        """The turn will not run (``/stop``, ``/new``): its record goes, unless the gateway is stopping."""
        record_id, turn.kept = turn.kept, None
        if record_id is not None and not self.closing:
            self._then(record_id, lambda store: store.end_reply(record_id))

    def _then(self, record_id: str, write: Callable[[Any], Awaitable[None]]) -> asyncio.Task[None]:
        before = self._tails.get(record_id)

        async def run() -> None:
            if before is not None:
                await asyncio.wait({before})
            store = self._store()
            try:
                await write(store)
            except StoreError as exc:
                report_store_failure(store, log, "a waiting message not kept for a crash", exc)
            except Exception as exc:  # the message is then only as safe as it was before
                log.warning("a waiting message not kept for a crash: %s: %s", type(exc).__name__, exc)

        task = asyncio.get_running_loop().create_task(run(), name="waiting")
        self._tails[record_id] = task
        self.pending.add(task)
        task.add_done_callback(lambda t: self._done(record_id, t))
        return task

    def _done(self, record_id: str, task: asyncio.Task[None]) -> None:
        self.pending.discard(task)
        if self._tails.get(record_id) is task:
            del self._tails[record_id]
