"""One rate budget per chat, shared by every reply streaming into it.

A token bucket refilled at the platform's declared rate, plus a "blocked
until" instant set by a 429. Every call into a chat (typing, previews,
overflow sends, final edits, reactions, choices) takes a token here first,
so a chat never sees more than the platform allows, however many replies
run in it; and one call into a chat is out at a time (``turn``), so the
answer of one (a 429) is known before the next is made.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..platform import RateBudget

if TYPE_CHECKING:
    from .queue import BudgetQueue

#: Waits are stretched by this much so float rounding never lands a call a hair early.
SAFETY_MARGIN = 1e-3


@dataclass
class ChatBudget:
    """The token bucket of one chat."""

    budget: RateBudget
    tokens: float = field(default=-1.0)
    updated: float = 0.0
    blocked_until: float = 0.0
    calls: int = 0
    rate_limited: int = 0
    #: Calls waiting for a token ahead of previews (status reactions): every other caller leaves them one each.
    claims: int = 0
    #: Held while a call into the chat is out (``Pacer.turn``): a 429 is known before the next call goes.
    turn: asyncio.Lock = field(default_factory=asyncio.Lock, compare=False, repr=False)
    #: Callers waiting for this budget's tokens in order (:mod:`.queue`; the bot's budget, made on first use).
    queue: "BudgetQueue | None" = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = float(self.budget.burst)

    def _refill(self, now: float) -> None:
        if now > self.updated:
            self.tokens = min(float(self.budget.burst), self.tokens + (now - self.updated) * self.budget.rate)
            self.updated = now

    def ready_at(self, now: float, reserve: float = 0.0) -> float:
        """The earliest instant a call may be made (``now`` if one may be made now).

        ``reserve``: the call must also leave this many tokens in the bucket
        (previews keep them for the calls that end a reply; see ``Pacer.preview_reserve``).
        Outstanding ``claims`` are left too; a claimant passes ``reserve=-claims`` (claimants take turns).
        """
        self._refill(now)
        need = 1.0 + reserve + self.claims
        at = now if self.tokens >= need else now + (need - self.tokens) / self.budget.rate + SAFETY_MARGIN
        return max(at, self.blocked_until)

    def available(self, now: float) -> float:
        """The tokens in the bucket now (below 1 while calls must wait)."""
        self._refill(now)
        return self.tokens if now >= self.blocked_until else 0.0

    def take(self, now: float) -> None:
        """Charge one call. Callers check :meth:`ready_at` first; debt is allowed but never planned."""
        self._refill(now)
        self.tokens -= 1.0
        self.calls += 1

    def block(self, now: float, retry_after: float) -> None:
        """The platform answered 429: nothing goes into this chat until ``retry_after`` has passed."""
        self.rate_limited += 1
        self.blocked_until = max(self.blocked_until, now + max(retry_after, 0.0) + SAFETY_MARGIN)
        self._refill(now)
        self.tokens = min(self.tokens, 0.0)


#: The key of a platform's budget across all its chats (no chat id is empty).
ALL_CHATS = ""

#: The bot-wide budget of a platform that declares none: never the limit, but a
#: bot-scope 429 (``RateLimited(scope="bot")``) still has a budget to block.
UNLIMITED = RateBudget(rate=1e9, burst=10**9)


class ChatBudgets:
    """The budgets of every chat, keyed by (platform, chat id); ``ALL_CHATS`` for the bot's own."""

    def __init__(self) -> None:
        self._by_chat: dict[tuple[str, str], ChatBudget] = {}

    def for_chat(self, platform: str, chat_id: str, budget: RateBudget, now: float) -> ChatBudget:
        key = (platform, chat_id)
        found = self._by_chat.get(key)
        if found is None or found.budget != budget:
            found = ChatBudget(budget, updated=now)
            self._by_chat[key] = found
        return found

    def __len__(self) -> int:
        return len(self._by_chat)

