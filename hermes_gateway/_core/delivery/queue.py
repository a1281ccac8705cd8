"""The bot-wide budget's tokens, handed out one at a time in order: finals, then first texts, then previews.

A bot's budget (Telegram: 30 calls/s across all its chats) is shared by every
reply. With a thousand replies streaming at once it is saturated: their
previews alone want twenty times what it allows. Two things then matter:

* **order**: a reply whose model has finished must not wait behind other
  replies' previews, so its final text goes first (:data:`FINAL`); a reply
  with nothing on screen yet comes next (:data:`PROMPT`: its first text, a
  status reaction, a question with buttons); previews and typing last
  (:data:`PREVIEW`). Within a class, first come, first served.
* **cost**: every waiter sleeping until "the bucket has a token" and all
  waking when it has one is a thundering herd, N wake-ups for one call. Here
  the waiters sleep on their own future; one timer, armed for the instant the
  bucket next holds a token, wakes exactly the waiter that gets it. Per call:
  one heap push and pop, one timer, one wake-up, whatever the number of chats.
* **grouping**: while callers queue, the timer waits until the bucket holds
  up to :data:`GROUP_SECONDS` of its refill (never more than are waiting,
  never more than its burst) and grants them together. The rate is the same
  (the bucket's tokens are only gathered, not made), the first of a group
  waits at most that much longer, a lone waiter not at all; but a group's
  calls, their answers and their store writes (one commit, one hand-off:
  ``store/sqlite_queue.py``) run together instead of each from an idle
  process: at 1,000 chats the CPU per call after the models' last tokens
  went from 3.4 to 1.3-1.5 ms (``bench/scale.py``; bench/README.md).

A grant **reserves** a token (``outstanding``); the token is taken when the
call is charged, right before it leaves (:meth:`BudgetQueue.charged`). The
queue grants only while the bucket holds a token beyond every reservation,
and the bucket never holds more than its burst, so the calls conform to the
budget at the moment they leave, however late a loaded event loop lets a
granted waiter run: a token taken at the grant would let grants go on while
earlier ones had not left yet, and the late ones then leave together with
the new ones (a loaded machine saw 75 calls leave in one second against 30/s).
A waiter that does not make its call after all gives the reservation back
(:meth:`BudgetQueue.refund`). A withdrawn waiter (the reply finished while
its preview waited) stays in the heap, done, and is dropped when it reaches
the top; while the budget is saturated that may never happen (a final always
waits above the withdrawn previews), so whenever the heap has doubled since
it was last swept, the withdrawn are swept out of it (``_sweep``): the heap
holds at most twice the live waiters (or :data:`SWEEP_FLOOR`), at an
amortised O(1) per waiter. Without the sweep a 30-minute soak of 200 chats
kept ~900 withdrawn waiters more every minute (bench/README.md, "3c. Soak").
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

from .budget import ChatBudget

#: The classes of calls, in the order the bot's tokens go to them.
FINAL = 0     # a final text (and what follows it: media, clean-up)
PROMPT = 1    # a reply's first text, a status reaction, a question with buttons
PREVIEW = 2   # a preview of a growing reply, the typing indicator

#: The heap is never swept below this size (a sweep costs a pass over it).
SWEEP_FLOOR = 64

#: While callers queue, the timer waits until the bucket holds what this many seconds of its rate refill (at
#: least one token; at most the waiters, at most the burst) and grants them together (module docstring). 0.25 s
#: left 1.9 ms of CPU per call, 1 s (Telegram's whole burst at once) 1.6 ms; 0.5 s 1.3-1.5 ms.
GROUP_SECONDS = 0.5

Ticket = asyncio.Future  # resolved True (granted: the token is taken) or False (withdrawn)


class BudgetQueue:
    """Waiters for one budget's tokens, served by priority, then by arrival.

    While it has waiters the queue alone hands out the budget's tokens; a caller
    that finds it empty and a token free reserves it at once (:meth:`try_take`).
    """

    def __init__(self, budget: ChatBudget) -> None:
        self.budget = budget
        self._heap: list[tuple[int, int, "Ticket[bool]"]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        #: The heap's size that makes the next push sweep the withdrawn out of it (twice its live size then).
        self._sweep_at = SWEEP_FLOOR
        #: Grants not charged yet: each holds one of the bucket's tokens.
        self.outstanding = 0
        #: Timer firings (a count for tests: one per grant or per refill, never one per waiter).
        self.wakes = 0

    def __len__(self) -> int:
        return sum(not ticket.done() for _, _, ticket in self._heap)

    def _drop_done(self) -> None:
        heap = self._heap
        while heap and heap[0][2].done():
            heapq.heappop(heap)

    def _has_token(self, now: float) -> bool:
        return self.budget.ready_at(now, float(self.outstanding)) <= now

    def try_take(self, now: float) -> bool:
        """Reserve a token at once if nobody is waiting and the budget has one beyond the reservations."""
        self._drop_done()
        if self._heap or not self._has_token(now):
            return False
        self.outstanding += 1
        return True

    def charged(self, now: float) -> None:
        """A granted call is being made: its reserved token is taken from the budget now."""
        self.outstanding -= 1
        self.budget.take(now)

    def enqueue(self, priority: int) -> "Ticket[bool]":
        ticket: Ticket[bool] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (priority, next(self._order), ticket))
        if len(self._heap) >= self._sweep_at:
            self._sweep()
        self._arm()
        return ticket

    def _sweep(self) -> None:
        """Drop every withdrawn waiter from the heap, wherever it is (see the module docstring)."""
        heap = self._heap
        heap[:] = [entry for entry in heap if not entry[2].done()]
        heapq.heapify(heap)
        self._sweep_at = max(SWEEP_FLOOR, 2 * len(heap))

    def withdraw(self, ticket: "Ticket[bool]") -> bool:
        """Leave the queue; True if the token had been granted already (the caller must :meth:`refund` it)."""
        if ticket.done():
            return not ticket.cancelled() and bool(ticket.result())
        ticket.set_result(False)
        return False

    def refund(self) -> None:
        """A granted token was not used: its reservation goes to the next waiter."""
        self.outstanding -= 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._arm()

    def _arm(self) -> None:
        if self._timer is not None:
            return
        self._drop_done()
        if not self._heap:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        budget = self.budget.budget
        # the tokens to gather before the next grant: one, or a group of the waiters (module docstring)
        group = min(len(self._heap), int(budget.rate * GROUP_SECONDS), budget.burst - self.outstanding)
        # every token reserved (a stalled loop's grants not made yet): look again after one refill
        at = self.budget.ready_at(now, float(self.outstanding + max(0, group - 1))) \
            if self.outstanding < budget.burst else now + 1.0 / budget.rate
        self._timer = loop.call_at(at, self._release)

    def _release(self) -> None:
        """The timer: grant every token the bucket holds now, best waiter first; then sleep till the next."""
        self._timer = None
        self.wakes += 1
        heap = self._heap
        now = asyncio.get_running_loop().time()
        while heap:
            ticket = heap[0][2]
            if ticket.done():
                heapq.heappop(heap)
                continue
            if not self._has_token(now):
                break
            heapq.heappop(heap)
            self.outstanding += 1
            ticket.set_result(True)
        self._arm()


def queue_of(budget: ChatBudget) -> BudgetQueue:
    """The budget's queue (made on first use; one per budget, so every reply into it shares it)."""
    queue = budget.queue
    if queue is None:
        queue = budget.queue = BudgetQueue(budget)
    return queue
