"""Coordination on Redis (redis-py's asyncio client): budgets, dedupe and chat leases shared by replicas.

Every shared decision is one Lua script (the ``*.lua`` files beside this
module), so it is atomic however many replicas ask at once, and every clock
it reads is the Redis server's (``TIME``): replicas' clocks never matter.

* **Budgets** (:class:`RedisBudget`, ``budget.lua``): a token bucket per chat
  and per bot, one call takes from both or waits; a 429 seen by any replica
  sets the bucket's ``blocked`` time (``budget_block.lua``) and every replica
  waits it out. Keys expire once the bucket would be full again.
* **Dedupe** (``admit.lua``): ``SET NX EX dedupe_ttl`` on the update id; the
  replica that sets it answers. Each admitted message also gets a ticket
  (arrival order across replicas).
* **One reply at a time per chat** (:class:`RedisLease`, ``lease_*.lua``): a
  lease (``SET NX PX``, the replica's random id) renewed every ttl/3 (all of a
  replica's leases in one script call, from one task, on a connection of its
  own) and released by compare-and-delete; it goes to the waiting message with the
  oldest ticket. Release is announced on the events channel so a waiting
  replica takes it at once (it polls too, for a holder that died).
* **Stopping across replicas** (``stop.lua``): ``/stop``, ``/new`` and
  ``busy: interrupt`` publish a stop for the chat when another replica holds
  its lease; that replica stops its reply as if the message had come to it.

When Redis goes away while running, each operation falls back to local state
(:mod:`.outage`): replies finish, one line a minute says so.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from importlib import resources
from typing import Any, Callable, Sequence, cast
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..errors import StartError
from ..platform import RateBudget
from .base import NO_TICKET, Coordination, Grant, LaneKey, StopKind
from .outage import Outage

log = logging.getLogger("hermes_gateway._core.coordination")

#: What counts as "Redis is unreachable" (anything else is a bug and is raised).
UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)
#: How long a schedule's claim key outlives its last claim (seconds): a replica down longer claims afresh.
CLAIM_TTL = 7 * 86_400
#: Connections to Redis per replica (the events subscription holds one). An operation beyond them waits for
#: one (up to POOL_WAIT seconds) instead of failing as redis-py's default pool does past 100, which read as an
#: outage: a burst of chats went on with no shared budgets, dedupe or leases.
POOL_SIZE, POOL_WAIT = 32, 5.0
#: How every connection to Redis is made (the pool's and the lease renewals' own): text answers, and a server
#: that does not answer within 2 s counts as unreachable.
CONNECTION: dict[str, Any] = {"decode_responses": True, "socket_connect_timeout": 2.0, "socket_timeout": 2.0}
#: The longest an operation waits for a connection while every one is out with a command (a busy Redis, not a
#: lost one: :class:`_BusyPool`); each command is bounded by the socket timeout, so this is only a backstop.
BUSY_WAIT = 30.0
#: Leases renewed per script call (a replica running 1,000 replies makes one call a tick, not 1,000; the
#: calls of a tick are made one after the other, each a wait for the event loop, so few and large).
RENEW_BATCH = 2000
#: A waiting lane asks again after this long, doubling up to MAX_POLL (a release wakes it at once).
MIN_POLL, MAX_POLL = 0.02, 0.25


class _BusyPool(aioredis.BlockingConnectionPool):
    """redis-py's blocking pool, except that a wait for a connection which ends (``POOL_WAIT``) while every
    connection is open and out with a command is waited again (up to :data:`BUSY_WAIT`): the server answers,
    the replica is busy. On a loaded machine a burst of a thousand chats kept all 32 out for over 5 s, and the
    "No connection available" that followed read as an outage: the replica fell back to its own budgets, dedupe
    and no chat leases while Redis was up (bench/README.md, "4. Every core")."""

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        give_up = loop.time() + BUSY_WAIT
        while True:
            try:
                return await super().get_connection(*args, **kwargs)
            except RedisConnectionError as exc:
                busy = isinstance(exc.__cause__, TimeoutError) and len(self._in_use_connections) >= self.max_connections
                if not busy or loop.time() >= give_up:
                    raise


def where(url: str) -> str:
    """``host:port`` (or the socket path) of a Redis URL: what an error may show. Never the password."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return parts.path
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{parts.port or 6379}"


def _script(name: str) -> str:
    return resources.files(__package__).joinpath(f"{name}.lua").read_text(encoding="utf-8")


class RedisCoordination(Coordination):
    """Budgets, dedupe and chat leases shared by every replica that points at one Redis."""

    shared = True

    def __init__(self, url: str, *, lease_ttl: float = 15.0, dedupe_ttl: int = 86_400, prefix: str = "hermes",
                 replica_id: str | None = None) -> None:
        super().__init__()
        self.url = url
        self.where = where(url)
        self.lease_ttl = lease_ttl
        self.dedupe_ttl = dedupe_ttl
        self.prefix = prefix
        self.replica_id = replica_id or secrets.token_hex(8)
        self.channel = f"{prefix}:events"
        self.outage = Outage(self.where)
        self.client: aioredis.Redis | None = None
        self._renewal_client: aioredis.Redis | None = None  # the lease renewals' own connection
        self._scripts: dict[str, Any] = {}
        self._listener: asyncio.Task[None] | None = None
        self._presence: asyncio.Task[None] | None = None  # keeps this replica's presence key alive
        self._tasks: set[asyncio.Task[Any]] = set()
        self._waiting: dict[str, set[asyncio.Event]] = {}   # lease key -> lanes waiting for it
        self._leases: set[RedisLease] = set()               # held leases (renewing)
        self._renewals: asyncio.Task[None] | None = None    # renews them all, every ttl/3, while there are any
        self._abandoned = False
        self._closing = False

    # ---------------------------------------------------------------- connecting

    async def start(self) -> None:
        if self.client is not None:
            return
        pool = _BusyPool.from_url(self.url, max_connections=POOL_SIZE, timeout=POOL_WAIT, **CONNECTION)
        client = aioredis.Redis.from_pool(pool)
        try:
            await client.ping()
        except (RedisError, OSError) as exc:
            await client.aclose()
            raise StartError(f"coordination: cannot reach Redis at {self.where} "
                             f"({type(exc).__name__}{_reason(exc)})") from None
        self.client = client
        self._scripts = {name: client.register_script(_script(name))
                         for name in ("budget", "budget_block", "admit", "lease_acquire",
                                      "lease_release", "stop", "claim", "count")}
        # Renewals on a connection of their own: behind a burst's operations in the pool's queue they came
        # later than a lease lasts, and replies were cut for a lease "lost" while this replica was alive.
        self._renewal_client = aioredis.Redis.from_url(self.url, single_connection_client=True, **CONNECTION)
        self._scripts["lease_renew"] = self._renewal_client.register_script(_script("lease_renew"))
        self._abandoned = False
        self._closing = False
        self._listener = asyncio.get_running_loop().create_task(self._listen(), name="coordination-events")
        from .presence import keep_alive  # which replicas are alive (the dashboard)

        self._presence = asyncio.get_running_loop().create_task(keep_alive(self), name="coordination-presence")
        log.info("coordination: Redis at %s (replica %s)", self.where, self.replica_id)

    async def close(self) -> None:
        tasks = [t for t in (self._listener, self._presence, self._renewals, *self._tasks) if t is not None]
        self._presence = None
        self._closing = True  # the listener and presence loops end even if a cancellation is lost in the client
        if not self._abandoned:
            from .presence import leave

            await leave(self)
        for lease in list(self._leases):
            lease.stop_renewing()
        await _cancel_and_wait(tasks)
        self._listener = self._renewals = None
        client, self.client = self.client, None
        for one in (client, self._renewal_client):
            if one is not None:
                try:
                    await one.aclose()
                except Exception:  # closing a connection to a server that is gone
                    pass
        self._renewal_client = None

    def abandon(self) -> None:
        """Go silent as a replica that died would: leases are neither renewed nor released.

        They expire after ``lease_ttl``, and the other replicas then take the
        chats over. For tests and failure drills; the replica itself goes on
        with local state only.
        """
        self._abandoned = True
        for lease in list(self._leases):
            lease.stop_renewing()
        if self._renewals is not None:
            self._renewals.cancel()
        if self._listener is not None:
            self._listener.cancel()
        if self._presence is not None:  # its presence key expires as a dead replica's would
            self._presence.cancel()

    async def run(self, name: str, keys: Sequence[str], args: Sequence[Any], fallback: Any) -> Any:
        """One script, or ``fallback`` when Redis is unreachable (see :mod:`.outage`)."""
        if self._abandoned or self.client is None:
            return fallback
        if not self.outage.available():
            return fallback
        try:
            result = await self._scripts[name](keys=list(keys), args=list(args))
        except UNREACHABLE as exc:
            self.outage.failed(exc)
            return fallback
        self.outage.succeeded()
        return result

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` beside the caller (publishing a 429 must not delay the reply that saw it)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ---------------------------------------------------------------- budgets

    def shared_budget(self, platform: str, chat_id: str, chat: RateBudget, bot: RateBudget) -> "RedisBudget":
        return RedisBudget(self, f"{self.prefix}:budget:{platform}:chat:{chat_id}",
                           f"{self.prefix}:budget:{platform}:bot", chat, bot)

    # ---------------------------------------------------------------- dedupe

    async def admit(self, updates: Sequence[tuple[str, str | None]]) -> list[int]:
        arrivals = f"{self.prefix}:arrivals"
        keys = [arrivals] + [f"{self.prefix}:seen:{platform}:{update_id}" if update_id is not None else arrivals
                             for platform, update_id in updates]
        flags = ["1" if update_id is not None else "0" for _, update_id in updates]
        tickets = await self.run("admit", keys, [self.dedupe_ttl, *flags], None)
        if tickets is None:
            return [NO_TICKET] * len(updates)
        self.dedupe_hits += sum(1 for t in tickets if t == 0)
        return [int(t) for t in tickets]

    async def claim(self, name: str, at: float) -> bool | None:
        """``claim.lua``: the first replica to claim an occurrence gets True; None while Redis is unreachable."""
        won = await self.run("claim", [f"{self.prefix}:claim:{name}"], [repr(float(at)), CLAIM_TTL], None)
        return None if won is None else bool(won)

    async def count(self, name: str, window: float) -> int:
        """``count.lua``: one counter for every replica; this process's own while Redis is unreachable."""
        n = await self.run("count", [f"{self.prefix}:count:{name}"], [max(int(window * 1000), 1)], None)
        return await super().count(name, window) if n is None else int(n)

    # ---------------------------------------------------------------- leases and stopping

    def lease_keys(self, key: LaneKey) -> list[str]:
        name = f"{key[0]}:{json.dumps([key[1], key[2]], separators=(',', ':'))}"
        return [f"{self.prefix}:lease:{name}", f"{self.prefix}:lease-wanted:{name}",
                f"{self.prefix}:lease-held:{name}"]

    def lease(self, key: LaneKey) -> "RedisLease":
        return RedisLease(self, key)

    def _renew_from_now(self, lease: "RedisLease") -> None:
        """Renew ``lease`` with the others this replica holds (a task per held lease, each waking every
        ttl/3 for one script call, cost a replica running a burst of replies more than the replies did)."""
        self._leases.add(lease)
        if self._renewals is None or self._renewals.done():
            self._renewals = asyncio.get_running_loop().create_task(self._renew_all(), name="coordination-leases")

    async def _renew_all(self) -> None:
        """Every ttl/3, renew every held lease (:data:`RENEW_BATCH` to a call); each learns its outcome.

        A lease taken just after a tick is renewed at the next one, within
        ttl/3 of being taken, as when each lease had its own timer.
        """
        ttl_ms = max(int(self.lease_ttl * 1000), 1)
        held_ttl = ttl_ms * 20 + 3_600_000
        while self._leases:
            await asyncio.sleep(self.lease_ttl / 3)
            leases = list(self._leases)
            for start in range(0, len(leases), RENEW_BATCH):
                batch = leases[start:start + RENEW_BATCH]
                keys = [key for lease in batch for key in (lease.keys[0], lease.keys[2])]
                answers = await self.run("lease_renew", keys, [self.replica_id, ttl_ms, held_ttl], None)
                for i, lease in enumerate(batch):
                    if lease in self._leases:  # not given back meanwhile
                        await lease.renewed(None if answers is None else int(answers[i]), ttl_ms, held_ttl)

    async def lease_holder(self, key: LaneKey) -> str | None:
        if self._abandoned or self.client is None or not self.outage.available():
            return "?"
        try:
            holder = await self.client.get(self.lease_keys(key)[0])
        except UNREACHABLE as exc:
            self.outage.failed(exc)
            return "?"
        self.outage.succeeded()
        return cast("str | None", holder)  # decode_responses=True; redis-py types a reply as bytes | str

    async def lease_holders(self, keys: Sequence[LaneKey]) -> list[str | None]:
        if not keys:
            return []
        if self._abandoned or self.client is None or not self.outage.available():
            return ["?"] * len(keys)
        try:
            holders = await self.client.mget([self.lease_keys(key)[0] for key in keys])
        except UNREACHABLE as exc:
            self.outage.failed(exc)
            return ["?"] * len(keys)
        self.outage.succeeded()
        return [cast("str | None", holder) for holder in holders]

    async def stop_elsewhere(self, key: LaneKey, kind: StopKind) -> bool:
        message = json.dumps({"op": "stop", "kind": kind, "from": self.replica_id, "lane": list(key)})
        told = await self.run("stop", self.lease_keys(key)[:1], [self.replica_id, self.channel, message], 0)
        return bool(told)

    async def replicas(self) -> list[dict[str, Any]]:
        from .presence import replicas

        return await replicas(self)

    # ---------------------------------------------------------------- approval questions (issue 25)

    async def open_choice(self, question_id: str, meta: dict[str, Any], ttl: float) -> None:
        if self.client is None:
            return
        try:
            await self.client.set(f"{self.prefix}:choice:{question_id}", json.dumps(meta), ex=max(1, int(ttl)))
            self.outage.succeeded()
        except UNREACHABLE as exc:  # the question is still answerable here, on this replica
            self.outage.failed(exc)

    async def choice_meta(self, question_id: str) -> dict[str, Any] | None:
        if self.client is None:
            return None
        try:
            raw = await self.client.get(f"{self.prefix}:choice:{question_id}")
            self.outage.succeeded()
        except UNREACHABLE as exc:
            self.outage.failed(exc)
            return None
        try:
            meta = json.loads(raw) if raw else None
        except ValueError:
            return None
        return meta if isinstance(meta, dict) else None

    async def decide_choice(self, question_id: str, option: str, user_id: str) -> bool:
        """``SET NX`` on the question's answer: exactly one press wins, whichever replica got it."""
        if self.client is None:
            return True
        try:
            won = await self.client.set(f"{self.prefix}:choice-decided:{question_id}", f"{option}|{user_id}",
                                        nx=True, ex=3600)
            if won:
                await self.client.publish(self.channel, json.dumps({
                    "op": "choice", "from": self.replica_id, "id": question_id, "option": option, "user": user_id}))
            self.outage.succeeded()
        except UNREACHABLE as exc:  # Redis away: this replica's own desk still answers once
            self.outage.failed(exc)
            return True
        return bool(won)

    async def decided_choice(self, question_id: str) -> tuple[str, str] | None:
        if self.client is None:
            return None
        try:
            raw = await self.client.get(f"{self.prefix}:choice-decided:{question_id}")
        except UNREACHABLE as exc:
            self.outage.failed(exc)
            return None
        if not raw:
            return None
        option, _, user = str(raw).partition("|")
        return option, user

    async def _listen(self) -> None:
        """Follow the events channel: a lease released (wake its waiters), a reply to stop here."""
        backoff = 0.1
        while not self._abandoned and not self._closing and self.client is not None:
            pubsub = self.client.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                backoff = 0.1
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        self._on_event(message["data"])
            except UNREACHABLE:  # the calls in flight report the outage; wait and subscribe again
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
            finally:
                try:
                    await asyncio.shield(pubsub.aclose())
                except Exception:
                    pass

    def _on_event(self, data: str) -> None:
        try:
            event = json.loads(data)
            op = event["op"]
        except (ValueError, KeyError, TypeError):
            log.info("coordination: ignored an unreadable event on %s", self.channel)
            return
        if op == "free":
            for waiter in self._waiting.get(event.get("lease", ""), ()):
                waiter.set()
        elif op == "choice" and event.get("from") != self.replica_id and self.on_choice is not None:
            self.on_choice(str(event.get("id", "")), str(event.get("option", "")), str(event.get("user", "")))
        elif op == "stop" and event.get("from") != self.replica_id and self.on_stop is not None:
            platform, chat_id, thread_id = event["lane"]
            self.on_stop((platform, chat_id, thread_id), event.get("kind", "stop"))


class RedisBudget:
    """One chat's budget and its bot's, as every replica together spends them."""

    __slots__ = ("coordination", "keys", "args", "chat", "bot")

    def __init__(self, coordination: RedisCoordination, chat_key: str, bot_key: str, chat: RateBudget,
                 bot: RateBudget) -> None:
        self.coordination = coordination
        self.keys = [chat_key, bot_key]
        self.args = [repr(float(chat.rate)), str(chat.burst), repr(float(bot.rate)), str(bot.burst)]
        self.chat, self.bot = chat, bot

    async def acquire(self) -> Grant | None:
        """Ask the script; if told to wait, sleep that long; ask again."""
        while True:
            answer = await self.coordination.run("budget", self.keys, self.args, None)
            if answer is None:
                return None  # unreachable: this replica's own budget (already consulted) is all there is
            granted, wait_us, seconds, micros, chat_left, bot_left = answer
            if granted:
                return Grant(int(seconds) + int(micros) / 1e6, float(chat_left), float(bot_left))
            await asyncio.sleep(int(wait_us) / 1e6)

    def block(self, scope: str, retry_after: float) -> None:
        key, budget = (self.keys[1], self.bot) if scope == "bot" else (self.keys[0], self.chat)
        self.coordination.spawn(self.coordination.run(
            "budget_block", [key], [repr(float(retry_after)), repr(float(budget.rate)), str(budget.burst)], None))


class RedisLease:
    """One chat's lease, as seen by one replica's lane."""

    def __init__(self, coordination: RedisCoordination, key: LaneKey) -> None:
        self.coordination = coordination
        self.key = key
        self.keys = coordination.lease_keys(key)
        self.held = False
        self.took_over = False  # the last acquire took the chat from a replica that stopped renewing it (died)
        self._confirmed = 0.0  # loop time of the last renewal the server confirmed (or of taking it)
        self._on_lost: Callable[[], None] = _nothing

    async def acquire(self, ticket: Callable[[], int], on_lost: Callable[[], None]) -> None:
        coord = self.coordination
        ttl_ms = max(int(coord.lease_ttl * 1000), 1)
        # "wanted" outlives a few polls; "held" outlives the lease by far, so a takeover is recognised
        args_tail = [max(4 * int(MAX_POLL * 1000), 1000), ttl_ms * 20 + 3_600_000]
        wake = asyncio.Event()
        waiting = coord._waiting.setdefault(self.keys[0], set())
        waiting.add(wake)
        delay = MIN_POLL
        try:
            while True:
                wake.clear()
                taken = await coord.run("lease_acquire", self.keys, [coord.replica_id, ttl_ms, ticket(), *args_tail],
                                        None)
                if taken is None:  # unreachable: this replica answers on its own
                    self.held = False
                    return
                if taken:
                    self.held = True
                    self.took_over = taken == 2
                    if taken == 2:
                        coord.lease_takeovers += 1
                        log.info("coordination: took over chat %s/%s from a replica that stopped renewing it",
                                 self.key[0], self.key[1])
                    self._confirmed, self._on_lost = asyncio.get_running_loop().time(), on_lost
                    coord._renew_from_now(self)
                    return
                try:
                    await asyncio.wait_for(wake.wait(), delay)
                except asyncio.TimeoutError:
                    pass
                delay = min(delay * 2, MAX_POLL)
        finally:
            waiting.discard(wake)
            if not waiting:
                coord._waiting.pop(self.keys[0], None)

    async def renewed(self, still: int | None, ttl_ms: int, held_ttl: int) -> None:
        """The outcome of this lease's renewal (every ttl/3, :meth:`RedisCoordination._renew_all`): None when
        Redis could not be asked, 1 renewed, 0 not this replica's any more.

        The lease is held only while a renewal was confirmed within the last
        ttl. When Redis cannot be asked (an outage, or its back-off), the lease
        runs out on the server after ``lease_ttl`` whatever this replica
        believes: from then on it is not held (the reply goes on alone, as
        every reply does during an outage), and when Redis answers again the
        chat is taken back if it is free, or the reply stops if another
        replica took it meanwhile. (Counting a fallback as a renewal kept a
        lapsed lease "held" and cut a reply nobody else wanted once Redis was back.)
        """
        coord = self.coordination
        loop = asyncio.get_running_loop()
        if still is None:  # unreachable: nothing was renewed
            if self.held and loop.time() - self._confirmed >= coord.lease_ttl:
                self.held = False
                log.warning("coordination: the lease of chat %s/%s ran out while Redis was unreachable; "
                            "the reply goes on alone", self.key[0], self.key[1])
            return
        if not still and not self.held:  # it lapsed during an outage: take the chat back if nobody has
            taken = await coord.run("lease_acquire", self.keys,
                                    [coord.replica_id, ttl_ms, 0, max(4 * int(MAX_POLL * 1000), 1000), held_ttl],
                                    None)
            if taken is None:
                return
            still = 1 if taken else 0
        if still:
            self.held, self._confirmed = True, loop.time()
            return
        self.held = False
        coord._leases.discard(self)
        log.warning("coordination: lost the lease of chat %s/%s (not renewed in time); its reply stops",
                    self.key[0], self.key[1])
        self._on_lost()

    def stop_renewing(self) -> None:
        self.coordination._leases.discard(self)

    async def release(self) -> None:
        self.stop_renewing()
        if not self.held:
            return
        self.held = False
        coord = self.coordination
        message = json.dumps({"op": "free", "lease": self.keys[0]})
        await coord.run("lease_release", [self.keys[0], self.keys[2]], [coord.replica_id, coord.channel, message], 0)


def _nothing() -> None:
    pass


#: How long :meth:`RedisCoordination.close` waits for its background tasks before it lets them go.
CLOSE_GRACE = 3.0


async def _cancel_and_wait(tasks: Sequence["asyncio.Task[Any]"], grace: float = CLOSE_GRACE) -> None:
    """Cancel ``tasks`` and wait for them, within ``grace`` seconds.

    A cancellation can be lost inside the Redis client (turned into one of
    its timeouts or connection errors, which the loops here treat as an
    outage and go on): such a task is cancelled again every half second, and
    after ``grace`` it is let go with one log line, so stopping never hangs.
    """
    pending = {task for task in tasks if not task.done()}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while pending and loop.time() < deadline:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=min(0.5, max(0.0, deadline - loop.time())))
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: a failed background task was already reported where it failed
    if pending:
        log.warning("coordination: %d background task(s) did not stop within %g s; let go",
                    len(pending), grace)


def _reason(exc: BaseException) -> str:
    """The library's words, when short and free of the URL (it could carry a password)."""
    from ..secrets import scrub

    text = scrub(str(exc)).strip().splitlines()[0] if str(exc).strip() else ""
    return f": {text}" if text and "://" not in text and len(text) <= 160 else ""
