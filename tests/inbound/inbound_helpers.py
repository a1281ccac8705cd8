"""Helpers for the inbound runtime's tests: a gateway on the reference platform, and people who write to it."""

from __future__ import annotations

import itertools
from typing import Any

from hermes_gateway import Incoming, RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway.testing import ReferencePlatform

CURSOR = "▌"


def reference(**kw: Any) -> ReferencePlatform:
    kw.setdefault("budgets", {"default": RateBudget(rate=50, burst=10)})
    return ReferencePlatform("reference", **kw)


def make_gateway(ref: ReferencePlatform, *, store: Any = None, streaming: bool = True, tokens_per_second: float = 20,
                 grace: float | None = None, **sections: Any) -> Gateway:
    """A gateway on ``ref`` with the demo model (``echo: TEXT`` answers TEXT at ``tokens_per_second``)."""
    data: dict[str, Any] = {
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"reference": {"enabled": streaming, "edit_interval": 0.2, "min_tokens": 1}},
        "platforms": {"reference": {"enabled": True}},
    }
    for name, value in sections.items():
        data[name] = {**data.get(name, {}), **value} if isinstance(value, dict) else value
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    gateway = Gateway(parse_config(data, env={}), plugins, shutdown_grace=grace)
    if store is not None:
        gateway.store = store
    return gateway


class People:
    """People writing into chats; every message gets a fresh update id unless told otherwise."""

    def __init__(self, gateway: Gateway, platform: str = "reference") -> None:
        self.gateway = gateway
        self.platform = platform
        self._ids = itertools.count(1)

    def say(self, chat_id: str, text: str, *, update_id: str | None = None, **kw: Any):
        """Hand the core one message; returns the future of its reply (not awaited: like a webhook)."""
        update_id = update_id or f"u{next(self._ids)}"
        kw.setdefault("sender_id", "person-1")
        return self.gateway.receive(Incoming(self.platform, str(chat_id), text, update_id=update_id,
                                             message_id=update_id, **kw))


def visible(ref: ReferencePlatform, chat_id: str) -> list[str]:
    return ref.chat(chat_id).screen
