"""The SQLite store's thread: operations run in order, writes that queue up together committed together.

Every operation of :class:`~.sqlite.SQLiteStore` is a plain function of the connection, run whole on the
store's one thread. With a thousand replies in flight they arrive by the hundred (each reply's record in
flight, its updates, its turn, its usage) and each was its own transaction and its own hand-off: a
``run_in_executor``, a ``BEGIN IMMEDIATE`` ... ``COMMIT`` with its WAL write, a wake-up of the event loop;
~950 µs of CPU per reply for eight operations (``bench/bench_store_burst.py``, issue 39).

Here the operations wait in one queue, and the thread takes all that are waiting at once. Writes that
follow each other in it (``write=True``: the hot ones) run in one ``BEGIN IMMEDIATE`` ... ``COMMIT``, each
in a savepoint of its own (``_transaction`` sees the open transaction), so one write's error rolls back
that write alone, as before. Nothing is answered before the ``COMMIT``: a caller told "written" finds it
after a crash, exactly as with a transaction of its own (the journal of a reply in flight relies on it).
If the batch cannot start (the file is locked by another program), or SQLite ends its transaction itself
(a full disk, an I/O error), every write of it runs again alone, each with its own result. The answers of
one batch go back to the event loop in one call. A caller cancelled before its operation started skips it;
one cancelled later does not cut it in half (it runs whole, and its answer is dropped).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

#: Most writes in one transaction (a bound on how long one COMMIT holds the write lock).
MAX_BATCH = 256


class _Operation:
    __slots__ = ("fn", "args", "future", "loop", "write", "ok", "result")

    def __init__(self, fn: Callable[..., Any], args: tuple, future: asyncio.Future[Any],
                 loop: asyncio.AbstractEventLoop, write: bool) -> None:
        self.fn, self.args, self.future, self.loop, self.write = fn, args, future, loop, write
        self.ok = False
        self.result: Any = None


class StoreQueue:
    """The thread and its queue (see the module docstring).

    ``call(fn, args)`` runs one operation on the thread (its errors already the store's), ``connection()`` is
    the thread's open connection, ``error(exc)`` turns an ``sqlite3.Error`` into the store's error.
    """

    def __init__(self, call: Callable[[Callable[..., Any], tuple], Any], connection: Callable[[], sqlite3.Connection],
                 error: Callable[[sqlite3.Error], Exception]) -> None:
        self._call, self._connection, self._error = call, connection, error
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._queue: deque[_Operation] = deque()
        self._draining = False  # a drain is submitted and has not yet found the queue empty

    async def run(self, fn: Callable[..., Any], args: tuple, write: bool = False) -> Any:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hermes-store")
            self._queue.append(_Operation(fn, args, future, loop, write))
            if not self._draining:
                self._draining = True
                # through the loop's run_in_executor, so a loop that must know thread work is pending (the test
                # kit's virtual clock stands still meanwhile) sees the drain, which answers all that queue behind it
                loop.run_in_executor(self._executor, self._drain).add_done_callback(_retrieve)
        return await future

    def detach(self) -> ThreadPoolExecutor | None:
        """The thread, taken away (``close``). A drain running there goes on until the queue is empty, so what
        was asked for before runs before anything submitted to it after; a later operation starts a new thread."""
        with self._lock:
            executor, self._executor = self._executor, None
            return executor

    # -- on the store's thread -------------------------------------------------------------------------------

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._draining = False
                    return
                operations = list(self._queue)
                self._queue.clear()
            self._run_all(operations)

    def _run_all(self, operations: list[_Operation]) -> None:
        operations = [op for op in operations if not op.future.cancelled()]
        try:
            start = 0
            while start < len(operations):
                end = start
                while end < len(operations) and operations[end].write and end - start < MAX_BATCH:
                    end += 1
                if end - start >= 2:
                    self._batch(operations[start:end])
                    start = end
                else:
                    self._alone(operations[start])
                    start += 1
        finally:
            self._answer(operations)

    def _alone(self, op: _Operation) -> None:
        try:
            op.result, op.ok = self._call(op.fn, op.args), True
        except BaseException as exc:  # the caller's to see, as run_in_executor handed it over
            op.result, op.ok = exc, False

    def _batch(self, operations: list[_Operation]) -> None:
        try:
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")
        except Exception:  # locked by another program, or not openable: each alone, each with its own answer
            for op in operations:
                self._alone(op)
            return
        for index, op in enumerate(operations):
            self._alone(op)  # its ``_transaction`` is a savepoint inside this one
            if not db.in_transaction:  # SQLite rolled the whole batch back (full disk, I/O error)
                for again in operations[:index] + operations[index + 1:]:
                    self._alone(again)
                return
        try:
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            error = self._error(exc)
            for op in operations:
                if op.ok:
                    op.result, op.ok = error, False

    def _answer(self, operations: list[_Operation]) -> None:
        """Hand the results over: one call into each event loop for the whole batch."""
        loops: dict[asyncio.AbstractEventLoop, list[_Operation]] = {}
        for op in operations:
            loops.setdefault(op.loop, []).append(op)
        for loop, ops in loops.items():
            try:
                loop.call_soon_threadsafe(_settle, ops)
            except RuntimeError:  # that loop is closed: nobody waits for these answers any more
                pass


def _retrieve(drained: asyncio.Future[Any]) -> None:
    """The drain's own future: its answers went out by ``_settle``; an error of its own is not left unread."""
    if not drained.cancelled():
        drained.exception()


def _settle(operations: list[_Operation]) -> None:
    for op in operations:
        future = op.future
        if future.done():  # cancelled while it ran
            continue
        if op.ok:
            future.set_result(op.result)
        else:
            future.set_exception(op.result)
