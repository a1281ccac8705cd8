"""The coordination seam: what the replicas of one bot must agree on, and nothing else.

One gateway process is one replica. Run several behind one bot token and
three things must be shared, or the replicas work against each other:

* **rate budgets** — each replica pacing itself alone would, together,
  flood every chat into 429s; a 429 one replica sees must stop them all;
* **inbound dedupe** — a webhook retried to another replica must not be
  answered twice;
* **one reply at a time per chat** — two replicas must never stream into
  one chat at once, and the busy policy (``queue``/``interrupt``), ``/stop``
  and ``/new`` must act on a reply whichever replica runs it;
* **one run per occurrence** of a schedule or reminder (:meth:`Coordination.claim`):
  every replica's scheduler wakes at the same instant, one of them runs it.

:class:`Coordination` is that seam. :mod:`.local` is one replica (today's
behaviour: in-process budgets, no lease, nothing to publish); :mod:`.redis`
shares all three through Redis. The core asks for each guarantee at one
place: :class:`~hermes_gateway._core.delivery.pacing.Pacer` (budgets),
:class:`~hermes_gateway._core.inbound.runtime.InboundRuntime` (dedupe, stopping
across replicas), :class:`~hermes_gateway._core.inbound.lane.ChatLane` (the lease).
"""

from __future__ import annotations

import secrets
import time
from typing import Any, Callable, NamedTuple, Protocol, Sequence

from ..platform import RateBudget

#: A chat lane's key: (platform, chat id, thread id).
LaneKey = tuple[str, str, "str | None"]

#: What stops a reply across replicas: ``"interrupt"`` (busy policy; only a text reply stops) or
#: ``"stop"`` (``/stop``, ``/new``: the reply stops and what waited behind it is dropped).
StopKind = str

#: A message admitted with no shared ticket (one replica, or Redis unreachable) sorts after the rest.
NO_TICKET = 2 ** 62


class Grant(NamedTuple):
    """One call granted by a shared budget: when (the coordinator's clock), and the tokens left after it."""

    at: float
    chat_left: float
    bot_left: float


class SharedBudget(Protocol):
    """A chat's budget (and its bot's) shared by every replica. Only the Redis backend has one."""

    async def acquire(self) -> Grant | None:
        """Wait until every replica's calls together leave room for one more, and take it.

        None when the coordinator was not asked (it is unreachable): the local budget is all there is.
        """

    def block(self, scope: str, retry_after: float) -> None:
        """A 429 (``scope`` "chat" or "bot"): every replica waits ``retry_after`` before calling again."""


class ChatLease(Protocol):
    """The right to run one reply in one chat, held by one replica at a time."""

    held: bool  # this replica holds it now

    async def acquire(self, ticket: Callable[[], int], on_lost: Callable[[], None]) -> None:
        """Wait until this replica holds the chat (``ticket()``: the oldest waiting message's number).

        While held it is renewed; if it is lost anyway (it expired and another
        replica took it), ``on_lost`` is called so the running reply stops.
        """

    async def release(self) -> None:
        """Give the chat back (only if still held), telling waiting replicas at once."""


class Coordination:
    """One replica's view of what it shares. The base is one replica alone: nothing is shared.

    The in-process token buckets that pace this replica's own calls (all there
    is while a shared backend is unreachable) are the delivery core's
    (:class:`~hermes_gateway._core.delivery.budget.ChatBudgets`); a backend
    adds only what replicas share. ``lease_takeovers`` counts leases taken
    over from a replica that stopped renewing them (it died): the metrics
    expose it.
    """

    #: True when another replica may exist: the inbound runtime then asks before it answers.
    shared: bool = False
    #: The clock of this process's own counters (:meth:`count`).
    count_clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(self) -> None:
        #: this process among the replicas: the owner of its replies in flight (crash recovery)
        self.replica_id = secrets.token_hex(8)
        self.lease_takeovers = 0
        self.dedupe_hits = 0  # updates another replica had already received
        self.on_stop: Callable[[LaneKey, StopKind], None] | None = None
        #: ``on_choice(question_id, option, user_id)``: another replica decided an approval question (issue 25).
        self.on_choice: Callable[[str, str, str], None] | None = None

    async def start(self) -> None:
        """Connect (a shared backend raises ``StartError`` naming where, when it is unreachable)."""

    async def close(self) -> None:
        """Disconnect; safe to call twice."""

    def shared_budget(self, platform: str, chat_id: str, chat: RateBudget, bot: RateBudget) -> SharedBudget | None:
        """The chat's budget as every replica sees it; None when this replica is alone."""
        return None

    async def admit(self, updates: Sequence[tuple[str, str | None]]) -> list[int]:
        """For each (platform, update id): its ticket when first received anywhere, else 0 (a redelivery)."""
        return [NO_TICKET] * len(updates)

    def lease(self, key: LaneKey) -> ChatLease | None:
        """The chat's lease; None when this replica is alone (its lane is the only one)."""
        return None

    async def lease_holder(self, key: LaneKey) -> str | None:
        """The replica holding the chat's lease now, None when nobody does ("?" when it cannot be known)."""
        return None

    async def lease_holders(self, keys: Sequence[LaneKey]) -> list[str | None]:
        """:meth:`lease_holder` of each chat, in order (on Redis one round trip for all: the recovery sweep
        asks about every reply in flight on the other replicas)."""
        return [await self.lease_holder(key) for key in keys]

    async def replicas(self) -> list[dict[str, Any]]:
        """``[{"id", "alive", "chats": [{"platform", "chat_id", "thread_id"}]}]``: the replicas and the chats
        whose lease each holds (the dashboard). Alone: this replica only (its chats are its own lanes')."""
        return [{"id": self.replica_id, "alive": True, "chats": []}]

    async def stop_elsewhere(self, key: LaneKey, kind: StopKind) -> bool:
        """Stop the chat's reply if another replica runs it. True if one did."""
        return False

    async def claim(self, name: str, at: float) -> bool | None:
        """Take occurrence ``at`` of ``name`` (a schedule, a reminder) for this replica: True when no replica
        took it (or a later one) before; None when the shared backend cannot be asked (the store decides then).

        Alone, the occurrences this process already took are remembered, so a second claim is refused too.
        """
        taken = self.__dict__.setdefault("_claimed", {})
        if taken.get(name, float("-inf")) >= at:
            return False
        taken[name] = at
        return True

    async def count(self, name: str, window: float) -> int:
        """Add one to the counter ``name`` and return it: the calls counted since the counter's window began.

        A window starts with the first call after the last one ended and lasts ``window`` seconds (the
        loop guard of ``groups.max_bot_turns``, issue 38). Alone, the counter is this process's; with
        Redis every replica counts in one (and each its own while Redis is unreachable).
        """
        counters: dict[str, tuple[int, float]] = self.__dict__.setdefault("_counters", {})
        now = self.count_clock()
        for stale in [k for k, (_, ends) in counters.items() if ends <= now]:  # (bounded by the active chats)
            del counters[stale]
        n, ends = counters.get(name, (0, now + window))
        counters[name] = (n + 1, ends)
        return n + 1

    # approval questions (issue 25): alone, the gateway's own desk is all there is

    async def open_choice(self, question_id: str, meta: dict[str, Any], ttl: float) -> None:
        """Make a question's rules readable by every replica for ``ttl`` seconds."""

    async def choice_meta(self, question_id: str) -> dict[str, Any] | None:
        """The rules another replica published for a question; None when unknown or gone."""
        return None

    async def decide_choice(self, question_id: str, option: str, user_id: str) -> bool:
        """Record the first answer to a question (and tell every replica); False if it was already decided."""
        return True

    async def decided_choice(self, question_id: str) -> tuple[str, str] | None:
        """The recorded ``(option, user_id)`` of a decided question."""
        return None
