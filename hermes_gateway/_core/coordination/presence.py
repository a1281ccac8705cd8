"""Which replicas are alive and which chat each holds, for the dashboard (issue 27).

Each replica keeps one key, ``<prefix>:replica:<id>``, alive with a TTL of
``lease_ttl`` renewed every third of it (the chat leases' rhythm): a replica
that dies disappears within ``lease_ttl``. Who holds which chat is read from
the lease keys themselves (``<prefix>:lease:<platform>:[chat, thread]`` →
holder), so nothing else is written per reply.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

log = logging.getLogger(__name__)

#: Keys read per SCAN round trip.
SCAN_COUNT = 500


def presence_key(prefix: str, replica_id: str) -> str:
    return f"{prefix}:replica:{replica_id}"


async def keep_alive(coordination: Any) -> None:
    """Renew this replica's presence key until cancelled; a failure waits for the next round."""
    ttl_ms = max(1000, int(coordination.lease_ttl * 1000))
    key = presence_key(coordination.prefix, coordination.replica_id)
    while not coordination._closing:
        client = coordination.client
        if client is not None and not coordination._abandoned:
            try:
                await client.set(key, "1", px=ttl_ms)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: the outage module reports it; presence just lapses
                log.debug("coordination: presence not renewed: %s", exc)
        await asyncio.sleep(max(0.2, coordination.lease_ttl / 3))


async def leave(coordination: Any) -> None:
    """Remove this replica's presence key (a clean stop; a dead replica's key expires instead)."""
    client = coordination.client
    if client is None:
        return
    try:
        await client.delete(presence_key(coordination.prefix, coordination.replica_id))
    except Exception as exc:
        log.debug("coordination: presence not removed: %s", exc)


def parse_lease_key(prefix: str, key: str) -> dict[str, Any] | None:
    """``<prefix>:lease:telegram:["42",null]`` → ``{"platform", "chat_id", "thread_id"}`` (None if not one)."""
    head = f"{prefix}:lease:"
    if not key.startswith(head):
        return None
    platform, sep, rest = key[len(head):].partition(":")
    try:
        chat, thread = json.loads(rest) if sep else (None, None)
    except (ValueError, TypeError):
        return None
    if not platform or chat is None:
        return None
    return {"platform": platform, "chat_id": str(chat), "thread_id": None if thread is None else str(thread)}


async def replicas(coordination: Any) -> list[dict[str, Any]]:
    """``[{"id", "alive", "chats": [...]}]``: every replica with a presence key, and every lease holder
    (a holder without one is listed ``alive: False``: it died and its leases have not expired yet)."""
    client = coordination.client
    if client is None:
        return [{"id": coordination.replica_id, "alive": True, "chats": []}]
    prefix = coordination.prefix
    found: dict[str, dict[str, Any]] = {}
    async for key in client.scan_iter(match=presence_key(prefix, "*"), count=SCAN_COUNT):
        replica_id = key.rsplit(":", 1)[1]
        found[replica_id] = {"id": replica_id, "alive": True, "chats": []}
    lease_keys = [key async for key in client.scan_iter(match=f"{prefix}:lease:*", count=SCAN_COUNT)]
    holders = await client.mget(lease_keys) if lease_keys else []
    for key, holder in zip(lease_keys, holders):
        chat = parse_lease_key(prefix, key)
        if chat is None or not holder:
            continue
        entry = found.setdefault(holder, {"id": holder, "alive": False, "chats": []})
        entry["chats"].append(chat)
    found.setdefault(coordination.replica_id, {"id": coordination.replica_id, "alive": True, "chats": []})
    return sorted(found.values(), key=lambda r: r["id"])
