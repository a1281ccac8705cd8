"""The dashboard's snapshot: one JSON-able mapping of what a running gateway is doing (issue 27, item 3).

Everything is read from what the gateway already keeps, nothing is
computed twice: each platform's state (:mod:`..platform_status`, kept by the
gateway's lifecycle and the delivery core's observer), the replies being
delivered (:meth:`Delivery.in_flight`), recent conversations and their last
messages (the store), replicas and the chats they hold (the coordination),
pending pairing requests (the store, as ``hermes-gateway pairing list``),
schedules and their next runs (the scheduler), and the effective config with
secrets masked (:func:`..config_view.effective`, the ``config`` command's).

A part that fails (a store that does not answer) is reported in
``errors`` and left empty; the rest of the snapshot still comes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Awaitable, Callable

from ..config_view import effective
from ..operator.pairing import masked
from ..outbound.timing import next_after
from .dashboard_messages import last_messages
from .sources import ConsoleSources

log = logging.getLogger(__name__)

#: How many recent conversations the snapshot lists (newest first).
RECENT = 10
#: Fields that change while nothing happens (the clock): left out when two snapshots are compared.
VOLATILE = ("generated_at", "running_for", "expires_in")


class LastMessages:
    """The last messages of recent conversations, read again only when a conversation has a new turn.

    The live feed reads a snapshot twice a second; without this each read
    would load every listed conversation whole from the store. Keyed by
    (id, turns, last activity), pruned to the conversations last listed.
    """

    def __init__(self) -> None:
        self._by_key: dict[tuple[int, int, float], list[dict[str, Any]]] = {}

    async def of(self, store: Any, summary: Any) -> list[dict[str, Any]]:
        key = (summary.id, summary.turns, summary.last_activity)
        found = self._by_key.get(key)
        if found is None:
            found = self._by_key[key] = last_messages(await store.conversation(summary.id) or [])
        return found

    def keep(self, summaries: list[Any]) -> None:
        wanted = {(s.id, s.turns, s.last_activity) for s in summaries}
        for key in [k for k in self._by_key if k not in wanted]:
            del self._by_key[key]


async def snapshot(sources: ConsoleSources, *, recent: int = RECENT, now: float | None = None,
                   last: LastMessages | None = None) -> dict[str, Any]:
    """The whole dashboard as one mapping (JSON-able), read now; ``last`` keeps messages between reads."""
    now = time.time() if now is None else now
    errors: list[str] = []
    state: dict[str, Any] = {
        "generated_at": now,
        "replica": sources.coordination().replica_id,
        "platforms": platforms(sources, now),
        "in_flight": in_flight(sources, now),
        "conversations": await _part(errors, "conversations",
                                     lambda: conversations(sources, recent, last or LastMessages()), []),
        "replicas": await _part(errors, "replicas", lambda: replicas(sources), {"shared": False, "list": []}),
        "pairing": await _part(errors, "pairing", lambda: pending_pairings(sources, now), []),
        "schedules": await _part(errors, "schedules", lambda: schedules(sources, now), []),
        "config": effective(sources.config, sources.plugins),
    }
    state["errors"] = errors
    return state


async def _part(errors: list[str], name: str, read: Callable[[], Awaitable[Any]], empty: Any) -> Any:
    try:
        return await read()
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # one part failing leaves the rest of the dashboard working
        log.warning("dashboard: reading %s failed: %s: %s", name, type(exc).__name__, exc)
        errors.append(f"{name}: {type(exc).__name__}")
        return empty


def platforms(sources: ConsoleSources, now: float) -> list[dict[str, Any]]:
    """Every registered platform: enabled, its state, mode, last error, 429s (1 h).

    ``state`` is :meth:`~..platform_status.PlatformStatus.state` (``starting``,
    ``connected``, ``disconnected``, ``running``: started but reporting
    nothing, ``stopped``); ``connected`` is true only when the client itself
    reported its platform reachable, and ``connection_error`` says why it is
    not when it reported a disconnection.
    """
    out = []
    for name in sources.plugins.platforms():
        status = sources.platform_status.get(name)
        enabled = sources.config.platform_enabled(name)
        state = status.state() if enabled else "stopped"
        out.append({
            "name": name,
            "enabled": enabled,
            "state": state,
            "connected": state == "connected",
            "connection_error": status.connection_error if state == "disconnected" else None,
            "mode": status.mode,
            "since": _since(status, state),
            "last_error": status.last_error,
            "last_error_at": status.last_error_at,
            "rate_limited_last_hour": status.rate_limited_since(now - 3600.0),
        })
    return out


def _since(status: Any, state: str) -> float | None:
    """When the platform entered the state shown: its last report, else its start or stop."""
    if state in ("connected", "disconnected"):
        return status.connection_at
    return status.started_at if state in ("running", "starting") else status.stopped_at


def in_flight(sources: ConsoleSources, now: float) -> list[dict[str, Any]]:
    """The replies being delivered now: where, for how long, how many platform calls so far."""
    return [{
        "platform": session.hooks.platform.name,
        "chat_id": session.stream.chat_id,
        "thread_id": session.stream.thread_id,
        "started_at": session.started_at,
        "running_for": round(max(0.0, now - (session.started_at or now)), 1),
        "calls": session.calls,
    } for session in sources.delivery().in_flight()]


async def conversations(sources: ConsoleSources, recent: int, last: LastMessages) -> list[dict[str, Any]]:
    """The ``recent`` conversations with the latest activity, each with its last messages."""
    store = sources.store()
    summaries = await store.list_conversations(recent)
    out = []
    for summary in summaries:
        out.append({
            "id": summary.id, "platform": summary.platform, "chat_id": summary.chat_id,
            "thread_id": summary.thread_id, "turns": summary.turns, "last_activity": summary.last_activity,
            "current": summary.current, "last_messages": await last.of(store, summary),
        })
    last.keep(summaries)
    return out


async def replicas(sources: ConsoleSources) -> dict[str, Any]:
    """With ``coordination.url``: the replicas alive and the chats each holds; alone, this one and its chats."""
    coordination = sources.coordination()
    if coordination.shared:
        return {"shared": True, "list": await coordination.replicas()}
    chats = [{"platform": p, "chat_id": c, "thread_id": t}
             for (p, c, t), lane in list(getattr(sources.inbound(), "lanes", {}).items()) if lane.running is not None]
    return {"shared": False, "list": [{"id": coordination.replica_id, "alive": True, "chats": chats}]}


async def pending_pairings(sources: ConsoleSources, now: float) -> list[dict[str, Any]]:
    """Unknown people waiting for an approval (``access.unknown_users: pair``); the code itself is masked."""
    return [{"platform": p.platform, "user_id": p.user_id, "chat_id": p.chat_id, "code": masked(p.code),
             "created": p.created, "expires_in": round(max(0.0, p.expires - now))}
            for p in await sources.store().pairings(now)]


async def schedules(sources: ConsoleSources, now: float) -> list[dict[str, Any]]:
    """Each configured schedule: when, where, its next run (the scheduler's, or computed) and last run."""
    configured = sources.config.outbound.schedules
    if not configured:
        return []
    planned = sources.scheduler().next_run
    out = []
    for s in configured:
        out.append({
            "name": s.name, "when": s.when, "platform": s.platform, "chat": s.chat, "thread": s.thread,
            "what": "prompt" if s.prompt is not None else "text",
            "next_run": planned.get(s.name) or next_after(s, now),
            "last_run": await sources.store().schedule_last_run(s.name),
        })
    return out


def steady(state: dict[str, Any]) -> Any:
    """``state`` without what changes by itself as time passes: two snapshots equal here show the same."""
    if isinstance(state, dict):
        return {k: steady(v) for k, v in state.items() if k not in VOLATILE}
    if isinstance(state, list):
        return [steady(v) for v in state]
    return state
