"""Pacing of one reply's calls: the clock, the budgets, 429 back-off and the worker's sleep.

Every call a reply makes into a chat waits for :meth:`Pacer.ready_at` (the
chat's budget), then for the bot's budget in its queue (:meth:`Pacer.bot_slot`,
:mod:`.queue`: finals first, then first texts, then previews; one wake-up per
call however many replies wait), then goes through :meth:`Pacer.acquire` (one
token from the chat's budget; the bot's was taken when it was granted). A 429 blocks the budget its ``scope`` names: the
chat's own (``"chat"``), or the bot's budget that every chat of the
platform shares (``"bot"``). The worker sleeps here too, so ``finish`` and
new text can wake it.

With several replicas (``coordination.url``) the budgets are also shared:
``acquire`` first asks the shared budget (one atomic Redis call, which may
say "wait"), and a 429 is published so every replica waits it out. The
local buckets still plan this replica's calls; alone, ``acquire`` is the
old synchronous charge behind one ``await`` that never suspends.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from ..errors import RateLimited
from .budget import ChatBudget
from .queue import FINAL, Ticket, queue_of

#: Previews after a reply's first text leave up to this many of the chat's tokens unspent
#: (never more than ``burst - 1``): the end of a reply may need two calls at once (the final
#: edit of a message that overflowed, and the send of the next one).
PREVIEW_RESERVE = 2

if TYPE_CHECKING:
    from ..coordination import SharedBudget


class Pacer:
    """When the next call of one reply may be made, and waiting for it."""

    def __init__(self, budget: ChatBudget, bot_budget: ChatBudget | None, *, backoff_base: float,
                 backoff_cap: float, shared: "SharedBudget | None" = None) -> None:
        self.budget = budget
        self.shared = shared            # the same budgets as every replica spends them (None: alone)
        self.bot_budget = bot_budget    # the platform's budget across all its chats (always set by Delivery)
        self.retry_at = float("-inf")   # back-off after a failed call
        self.rate_limit_waits = 0.0     # seconds the platform told us to wait, in all
        self.calls = 0
        self.rate_limited_count = 0
        self.ending = False             # finish() was called: interruptible waits stop
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._waiter: asyncio.Future[None] | None = None
        self._ticket: Ticket[bool] | None = None  # waiting in the bot's queue, interruptibly
        self._bot_paid = False                    # the bot's token for the next call is granted (bot_slot)
        self.wake_on_change = False

    @staticmethod
    def now() -> float:
        return asyncio.get_running_loop().time()

    async def acquire(self, chat: bool = True) -> None:
        """Wait for the shared budget's go (when replicated), then :meth:`charge`.

        The local buckets then hold no more than the shared ones have left, so
        this replica plans its next calls (previews, typing) with what every
        replica together left it, instead of being told "wait" by Redis. A
        replicated budget charges the chat for a free preview too (the script
        takes from both buckets): never more calls than the platform allows,
        at the price of ``free_previews`` across replicas.
        """
        if not self._bot_paid and not await self.bot_slot(FINAL, interruptible=False):
            return  # pragma: no cover  (an uninterruptible wait is always granted)
        if self.shared is None:
            self.charge(chat)
            return
        grant = await self.shared.acquire()
        self.charge(chat)
        if grant is not None:
            self.budget.tokens = min(self.budget.tokens, grant.chat_left)
            if self.bot_budget is not None:
                self.bot_budget.tokens = min(self.bot_budget.tokens, grant.bot_left)

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """The chat's turn for one call: no other call into the chat is out meanwhile.

        Calls into one chat come from several tasks (a reply's worker, another
        reply's, a reaction, a question with buttons). Taking turns, a call
        never goes out while another may still come back with a 429; and a
        429 that came back while this call waited for its turn is waited out
        here, before it goes (its token was planned already). A platform call
        that does not answer holds the chat's turn until the plugin's own
        timeout (or a cut at shutdown) ends it.
        """
        async with self.budget.turn:
            while True:
                now = self.now()
                blocked = self.budget.blocked_until
                if self.bot_budget is not None:
                    blocked = max(blocked, self.bot_budget.blocked_until)
                if blocked <= now:
                    break
                await asyncio.sleep(blocked - now)
            yield

    def charge(self, chat: bool = True) -> None:
        """One call is being made: take its token from the chat's and the bot's budget.

        ``chat=False``: a call the platform does not count against the chat
        (``Platform.free_previews``); only the bot's budget pays.
        """
        now = self.now()
        if chat:
            self.budget.take(now)
        if self._bot_paid and self.bot_budget is not None:
            self._bot_paid = False
            queue_of(self.bot_budget).charged(now)  # the token its queue reserved for this call
        elif self.bot_budget is not None:
            self.bot_budget.take(now)
        self.calls += 1

    async def bot_slot(self, priority: int, *, interruptible: bool, on_change: bool = False) -> bool:
        """Wait in the bot budget's queue (:mod:`.queue`) until it grants this reply's next call a token.

        False: withdrawn (``interruptible``: ``finish``, or new text when
        ``on_change``, woke it first). Once granted, a token is reserved and
        the next :meth:`charge` takes it; a caller that does not make the call
        after all gives the reservation back with :meth:`refund`.
        """
        if self._bot_paid or self.bot_budget is None:
            return True
        if interruptible and self.ending:
            return False
        queue = queue_of(self.bot_budget)
        if queue.try_take(self.now()):
            self._bot_paid = True
            return True
        ticket = queue.enqueue(priority)
        if interruptible:
            self._ticket = ticket
            self.wake_on_change = on_change
        try:
            granted = await ticket
        except asyncio.CancelledError:
            if queue.withdraw(ticket):
                queue.refund()
            raise
        finally:
            if interruptible:
                self._ticket = None
                self.wake_on_change = False
        if granted and interruptible and self.ending:
            queue.refund()  # granted in the same moment the reply ended: the token goes to the next waiter
            return False
        self._bot_paid = granted
        return granted

    def refund(self) -> None:
        """The bot's token granted by :meth:`bot_slot` was not spent: give it back (no-op if there is none)."""
        if self._bot_paid and self.bot_budget is not None:
            self._bot_paid = False
            queue_of(self.bot_budget).refund()

    def rate_limited(self, exc: RateLimited) -> None:
        """A 429: block the budget it covers (one chat, or every chat of the bot)."""
        target = self.bot_budget if exc.scope == "bot" and self.bot_budget is not None else self.budget
        target.block(self.now(), exc.retry_after)
        if self.shared is not None:
            self.shared.block(exc.scope, exc.retry_after)
        self.rate_limited_count += 1
        self.rate_limit_waits += max(exc.retry_after, 0.0)

    def ready_at(self, now: float, not_before: float = float("-inf"), chat: bool = True,
                 reserve: float = 0.0) -> float:
        """The earliest instant the next call may be made (budgets, back-off, and ``not_before``).

        ``chat=False``: for a call the chat's budget does not pay for; only a 429 on the chat holds it.
        ``reserve``: tokens of the chat's budget the call must leave (:meth:`preview_reserve`).
        """
        own = self.budget.ready_at(now, reserve) if chat else self.budget.blocked_until
        at = max(own, self.retry_at, not_before)
        if self.bot_budget is not None:
            at = max(at, self.bot_budget.blocked_until)  # its tokens are handed out by its queue (bot_slot)
        return at

    def preview_reserve(self) -> float:
        """Tokens a preview after the first text must leave in the chat's bucket: ``min(burst - 1, 2)``.

        A local planning rule (the shared budget of replicas is asked as before,
        in :meth:`acquire`). Previews are paced by the refill anyway, so in a
        steady stream they lose only the initial burst; in exchange the calls
        that end a reply (never held back by it) find up to two tokens ready,
        instead of waiting ~3 s each in a 20/min group. A chat with burst 1
        (Telegram's private chats) keeps none: nothing changes there.
        """
        return float(max(0, min(self.budget.budget.burst - 1, PREVIEW_RESERVE)))

    def spare_tokens(self, now: float) -> float:
        """Tokens the chat's budget holds now (a typing call must leave one for text that is due)."""
        return self.budget.available(now)

    def backoff(self, failures: int) -> float:
        return min(self._backoff_cap, self._backoff_base * 2 ** max(failures - 1, 0))

    def back_off(self, failures: int) -> None:
        self.retry_at = self.now() + self.backoff(failures)

    async def until(self, ready_at: Callable[[float], float], *, interruptible: bool) -> bool:
        """Sleep until ``ready_at(now) <= now``. False if interrupted by ``finish``."""
        while True:
            now = self.now()
            at = ready_at(now)
            if at <= now:
                return True
            if interruptible and self.ending:
                return False
            await self.sleep(at - now, on_change=False, interruptible=interruptible)
            if interruptible and self.ending:
                return False

    async def sleep(self, delay: float | None, *, on_change: bool, interruptible: bool = True) -> None:
        """Wait ``delay`` seconds (None: until woken). ``finish`` wakes it; so does new text if ``on_change``."""
        if interruptible and self.ending:
            return
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        handle = loop.call_later(delay, _resolve, waiter) if delay is not None else None
        self._waiter = waiter if interruptible else None
        self.wake_on_change = on_change
        try:
            await waiter
        finally:
            self._waiter = None
            self.wake_on_change = False
            if handle is not None:
                handle.cancel()

    def wake(self) -> None:
        if self._waiter is not None:
            _resolve(self._waiter)
        if self._ticket is not None and self.bot_budget is not None:
            queue_of(self.bot_budget).withdraw(self._ticket)  # granted already: bot_slot settles it


def _resolve(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_result(None)
