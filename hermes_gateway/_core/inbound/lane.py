"""One reply at a time per chat, and what happens to messages that arrive meanwhile.

Each chat with work to do has a :class:`ChatLane`: a FIFO of work items and
one worker task that runs them in order, so a conversation's history never
interleaves and no two replies ever stream into one chat at once. The busy
policy decides what a message arriving during a reply does:

* ``queue`` (default): it waits; every message that arrived meanwhile is
  answered together, in one turn, when the reply ends;
* ``interrupt``: the running reply stops (what was shown stays, without
  cursor) and the new message is answered.

``/stop`` and ``/new`` act at once on a running reply and drop what was
queued behind it: the person asked for the chat to stop.

With several replicas of one bot, each replica has its own lane for a chat;
before running an item the lane takes the chat's lease (see
:mod:`hermes_gateway._core.coordination`), so still only one reply runs in the
chat at a time, the oldest waiting message first (its ``ticket``). Messages
arriving meanwhile queue up and merge here as they do on one replica.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Coroutine

from ..coordination.base import NO_TICKET, ChatLease
from ..cuts import CUT_TASKS
from ..messages.commands import Command
from ..messages.incoming import Incoming




@dataclass
class TextTurn:
    """Messages answered together in one agent turn."""

    messages: list[Incoming]
    futures: list[asyncio.Future[Any]]
    ticket: int = NO_TICKET  # the arrival number of its first message, across replicas
    superseded: bool = False  # stopped by an edit of one of its messages (:mod:`.edits`)
    answered: bool = False  # its reply is on the screen in full: an edit from now on is of an answered message
    kept: str | None = None  # the id of its record in the store while it waits (:mod:`.waiting`)

    def mark_answered(self) -> None:
        self.answered = True

    @property
    def text(self) -> str:
        return "\n\n".join(m.text for m in self.messages)


@dataclass
class CommandTurn:
    incoming: Incoming
    command: Command
    args: str
    future: asyncio.Future[Any]
    stopped_reply: bool = False
    ticket: int = NO_TICKET


@dataclass
class RecoveryTurn:
    """Finish a reply a crash cut in this chat (:mod:`hermes_gateway._core.recovery`), in its place in the queue."""

    record: Any  # ReplyInFlight
    future: asyncio.Future[Any]
    ticket: int = NO_TICKET


Item = TextTurn | CommandTurn | RecoveryTurn


@dataclass
class ChatLane:
    """The queue and the worker of one chat."""

    key: tuple[str, str, str | None]
    items: list[Item] = field(default_factory=list)
    worker: asyncio.Task[None] | None = None
    running: Item | None = None
    running_task: asyncio.Task[Any] | None = None
    lease: ChatLease | None = None  # the chat across replicas (None: this replica is alone)
    #: called (awaited) right after the lease was taken over from a replica that died: its cut reply first
    on_takeover: Callable[["ChatLane"], Awaitable[None]] | None = None
    #: called for each message turn dropped before it ran (its record of waiting goes: :mod:`.waiting`)
    on_drop: Callable[[TextTurn], None] | None = None

    def add_text(self, incoming: Incoming, future: asyncio.Future[Any], *, busy: str,
                 ticket: int = NO_TICKET) -> None:
        """Queue a message; merge it with messages already waiting; interrupt if the policy says so."""
        last = self.items[-1] if self.items else None
        if isinstance(last, TextTurn):
            last.messages.append(incoming)
            last.futures.append(future)
        else:
            self.items.append(TextTurn([incoming], [future], ticket))
        if busy == "interrupt" and isinstance(self.running, TextTurn):
            self.cancel_running()

    def add_recovery(self, turn: RecoveryTurn) -> None:
        """Queue finishing a cut reply before anything that arrives later (it is not merged, not interrupted)."""
        self.items.append(turn)

    def add_command(self, turn: CommandTurn) -> None:
        if turn.command.stops_reply:
            turn.stopped_reply = isinstance(self.running, TextTurn) and self.cancel_running()
            self.drop_queued()
        self.items.append(turn)

    def cancel_running(self, *, any_kind: bool = False, cut: bool = False) -> bool:
        """Stop the running text reply (it keeps what was shown). True if there was one to stop.

        ``any_kind`` also stops a command's answer (shutdown stops everything).
        ``cut``: nobody asked for the stop (shutdown, a lost lease): the person is told later (recovery).
        """
        task = self.running_task
        if task is None or task.done() or not (any_kind or isinstance(self.running, TextTurn)):
            return False
        if cut:
            CUT_TASKS.add(task)
        task.cancel()
        return True

    def drop_queued(self, *, everything: bool = False) -> None:
        """Drop what waits (``/stop``, ``/new``): the person's messages, not the finishing of a cut reply
        (:class:`RecoveryTurn`), which only ``everything`` (shutdown, the worker ending) drops too."""
        kept = [] if everything else [item for item in self.items if isinstance(item, RecoveryTurn)]
        for item in self.items:
            if item not in kept:
                if isinstance(item, TextTurn) and self.on_drop is not None:
                    self.on_drop(item)
                _finish(item, None)
        self.items[:] = kept

    async def run(self, answer: Callable[[Item], Coroutine[Any, Any, Any]],
                  on_idle: Callable[["ChatLane"], None]) -> None:
        """The worker: run items in order until none is left, then forget the lane.

        Each item runs in a task of its own, so stopping a reply (``/stop``,
        ``interrupt``) cancels that task and never the worker. With a lease,
        each item runs while this replica holds the chat; it is given back
        between items, so another replica's older message can go first.
        """
        lease = self.lease
        try:
            while self.items:
                if lease is not None:
                    await lease.acquire(self._oldest_ticket, self._lease_lost)
                    if getattr(lease, "took_over", False) and self.on_takeover is not None:
                        await self.on_takeover(self)
                    if not self.items:  # dropped while waiting (/stop on another replica)
                        await lease.release()
                        continue  # (something may have arrived meanwhile)
                item = self.items.pop(0)
                task = asyncio.get_running_loop().create_task(answer(item), name=f"reply:{self.key[1]}")
                self.running, self.running_task = item, task
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:  # the worker itself is cancelled: stop the reply too
                    task.cancel()
                    await asyncio.wait({task})
                    _finish(item, None)
                    raise
                _finish(item, None if task.cancelled() or task.exception() else task.result())
                self.running = self.running_task = None
                if lease is not None:
                    await lease.release()
        finally:
            if lease is not None and lease.held:  # stopped while holding it (shutdown, a dead worker)
                await asyncio.shield(lease.release())
            self.drop_queued(everything=True)
            self.running = self.running_task = None
            on_idle(self)

    def _oldest_ticket(self) -> int:
        return self.items[0].ticket if self.items else NO_TICKET

    def _lease_lost(self) -> None:
        """Another replica took the chat (this one stalled past the lease): stop what runs here."""
        self.cancel_running(any_kind=True, cut=True)


def _futures(item: Item) -> list[asyncio.Future[Any]]:
    return item.futures if isinstance(item, TextTurn) else [item.future]


def _finish(item: Item, result: Any) -> None:
    for future in _futures(item):
        _resolve(future, result)


def _resolve(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)
