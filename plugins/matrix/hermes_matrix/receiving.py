"""The ``/sync`` loop: long-polls the homeserver and hands each new event to the core, once, across restarts.

**Position.** ``next_batch`` is kept in the gateway's store
(``context.set_value``) after every event of a batch was handed to the core,
and the next start syncs from it: what arrived while the gateway was down is
answered, nothing is answered twice (an event handed over but not yet
recorded before a crash comes again, and the core drops it by its
``event_id``). The very first start has no position: it takes the
server's current one and answers nothing older (a new bot does not answer
a room's history).

**Gaps.** A sync returns at most ``timeline_limit`` events per room; when more
came (``limited``), the rest are fetched with ``/messages`` back from
``prev_batch`` to the last position (bounded: :data:`MAX_BACKFILL_PAGES`).

**Rooms.** An invite is joined; a direct chat's invite (``is_direct``) is
recorded in the bot's ``m.direct`` account data, which is also read back, so
direct chats stay direct across restarts. An encrypted room gets one line
(:data:`ENCRYPTED_LINE`) and is left: this plugin does not do end-to-end
encryption.

Broken input from the server costs one log line per event, never the loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Callable

from hermes_gateway import Incoming, PlatformContext

from .inbound import EventReader, Malformed, Reaction

log = logging.getLogger(__name__)

POSITION_KEY = "sync.next_batch"
ENCRYPTED_LINE = ("This room is end-to-end encrypted, which hermes-gateway does not support: "
                  "invite me to an unencrypted room or a direct chat without encryption.")
#: Pages of ``/messages`` fetched to fill one room's gap (100 events each).
MAX_BACKFILL_PAGES = 20
#: Seconds between tries while the homeserver cannot be reached (doubling up to the last).
BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0)


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when the server sent an object there, else an empty one (a hostile server's shapes)."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def sync_filter(timeline_limit: int) -> str:
    """What the sync asks for: room timelines (up to ``timeline_limit``), ``m.direct``, no presence."""
    return json.dumps({
        "presence": {"types": []},
        "account_data": {"types": ["m.direct"]},
        "room": {"timeline": {"limit": timeline_limit},
                 "state": {"lazy_load_members": True},
                 "ephemeral": {"types": []},
                 "account_data": {"types": []}},
    }, separators=(",", ":"))


class Receiver:
    """One sync loop for one account: built by the client, run by ``start``, cancelled by ``stop``."""

    def __init__(self, context: PlatformContext, api: Callable[[], Any], reader: EventReader, *,
                 sync_timeout: float, timeline_limit: int, on_reaction: Callable[[Reaction], None]) -> None:
        self.context = context
        self.api = api
        self.reader = reader
        self.sync_timeout = sync_timeout
        self.timeline_limit = timeline_limit
        self.on_reaction = on_reaction
        self.direct_rooms: set[str] = set()
        self.encrypted_rooms: set[str] = set()
        self._task: asyncio.Task[None] | None = None
        #: Counted as they happen (tests and ``/metrics`` read them through ``context.count``).
        self.skipped = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self.run(), name="matrix-sync")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def run(self) -> None:
        failures = 0
        while True:
            try:
                since = await self.context.get_value(POSITION_KEY)
                first = not isinstance(since, str) or not since
                answer = await self.api().sync(since=None if first else since,
                                               timeout=0 if first else int(self.sync_timeout * 1000),
                                               filter_id=sync_filter(self.timeline_limit))
                self.context.report_connected()
                failures = 0
                if not isinstance(answer, dict) or not isinstance(answer.get("next_batch"), str):
                    raise Malformed("a sync answer without next_batch")
                await self.handle(answer, None if first else since)
                await self.context.set_value(POSITION_KEY, answer["next_batch"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                from hermes_gateway import scrub_secrets

                why = scrub_secrets(f"{type(exc).__name__}: {exc}")[:300]
                self.context.report_disconnected(f"sync failed: {why}")
                log.warning("matrix: sync failed (%s); trying again", why)
                await asyncio.sleep(BACKOFF[min(failures, len(BACKOFF) - 1)])
                failures += 1

    # ------------------------------------------------------------------ one sync answer

    async def handle(self, answer: dict[str, Any], since: str | None) -> None:
        """Everything new in one sync answer (``since`` None: the first ever, whose timelines are history)."""
        self.read_account_data(answer.get("account_data"))
        rooms = _dict(answer.get("rooms"))
        for room, invite in _dict(rooms.get("invite")).items():
            await self._invited(str(room), invite)
        for room, data in _dict(rooms.get("join")).items():
            if not isinstance(data, dict):
                self._skip(str(room), "a room that is not an object")
                continue
            await self._room(str(room), data, since)

    def read_account_data(self, section: Any) -> None:
        """The bot's ``m.direct`` (from a sync's ``account_data``): which rooms are direct chats."""
        events = section.get("events") if isinstance(section, dict) else None
        for event in events if isinstance(events, list) else []:
            if isinstance(event, dict) and event.get("type") == "m.direct" and isinstance(event.get("content"), dict):
                self.direct_rooms = {room for rooms in event["content"].values() if isinstance(rooms, list)
                                     for room in rooms if isinstance(room, str)}

    async def _invited(self, room: str, invite: Any) -> None:
        events = [e for e in _list(_dict(_dict(invite).get("invite_state")).get("events")) if isinstance(e, dict)]
        encrypted = any(e.get("type") == "m.room.encryption" for e in events)
        me = next((e for e in events if e.get("type") == "m.room.member" and e.get("state_key") == self.reader.user_id),
                  None)
        content = me.get("content") if me is not None else None
        direct = isinstance(content, dict) and content.get("is_direct") is True
        inviter = me.get("sender") if me is not None else None
        try:
            await self.api().join_room_by_id(room)
        except Exception as exc:
            log.warning("matrix: could not join %s (%s)", room, type(exc).__name__)
            return
        if encrypted:
            await self._refuse_encrypted(room)
        elif direct and isinstance(inviter, str):
            await self._mark_direct(room, inviter)

    async def _mark_direct(self, room: str, person: str) -> None:
        """Record the room as a direct chat with ``person`` in the bot's ``m.direct`` (read back on restart)."""
        self.direct_rooms.add(room)
        try:
            current = await self.api().get_account_data("m.direct")
        except Exception:
            current = {}
        current = dict(current) if isinstance(current, dict) else {}
        rooms = [r for r in current.get(person, []) if isinstance(r, str)] if isinstance(current.get(person), list) else []
        if room not in rooms:
            current[person] = rooms + [room]
            try:
                await self.api().set_account_data("m.direct", current)
            except Exception as exc:
                log.warning("matrix: could not record %s as a direct chat (%s)", room, type(exc).__name__)

    async def _refuse_encrypted(self, room: str) -> None:
        if room in self.encrypted_rooms:
            return
        self.encrypted_rooms.add(room)
        log.info("matrix: %s is encrypted (not supported): said so and left", room)
        try:
            await self.api().send_message_event(room, "m.room.message", {"msgtype": "m.notice", "body": ENCRYPTED_LINE})
            await self.api().leave_room(room)
        except Exception as exc:
            log.warning("matrix: could not tell %s that encryption is not supported (%s)", room, type(exc).__name__)

    async def _room(self, room: str, data: dict[str, Any], since: str | None) -> None:
        timeline = _dict(data.get("timeline"))
        events = _list(timeline.get("events"))
        every = _list(_dict(data.get("state")).get("events")) + events
        if any(isinstance(e, dict) and e.get("type") in ("m.room.encryption", "m.room.encrypted") for e in every):
            await self._refuse_encrypted(room)
            return
        if since is None:
            return  # the first sync: history, never answered
        prev_batch = timeline.get("prev_batch")
        if timeline.get("limited") and isinstance(prev_batch, str):
            events = await self._backfill(room, prev_batch, since) + events
        for event in events:
            self._take(room, event)

    async def _backfill(self, room: str, prev_batch: str, since: str) -> list[Any]:
        """The events between the last position and this sync's timeline, oldest first."""
        from mautrix.api import Method, Path

        found: list[Any] = []
        token: str | None = prev_batch
        for _ in range(MAX_BACKFILL_PAGES):
            if token is None:
                break
            try:
                page = await self.api().api.request(  # raw: one broken event must not lose the page
                    Method.GET, Path.v3.rooms[room].messages,
                    query_params={"from": token, "to": since, "dir": "b", "limit": "100"})
            except Exception as exc:
                log.warning("matrix: could not fetch the events missed in %s (%s)", room, type(exc).__name__)
                break
            chunk = page.get("chunk") if isinstance(page, dict) else None
            if not isinstance(chunk, list) or not chunk:
                break
            found.extend(chunk)
            token = page.get("end") if isinstance(page.get("end"), str) else None
        else:
            log.warning("matrix: more than %d events were missed in %s; the oldest are not answered",
                        MAX_BACKFILL_PAGES * 100, room)
        return list(reversed(found))

    def _take(self, room: str, event: Any) -> None:
        try:
            taken = self.reader.read(room, event)
        except Malformed as exc:
            self._skip(room, str(exc))
            return
        except Exception as exc:  # a shape nobody foresaw: skipped too, or the position would never move past it
            self._skip(room, f"{type(exc).__name__}: {exc}")
            return
        if isinstance(taken, Incoming):
            self.context.count("message")
            self.context.receive(taken)
        elif isinstance(taken, Reaction):
            self.on_reaction(taken)

    def _skip(self, room: str, why: str) -> None:
        self.skipped += 1
        self.context.count("malformed")
        log.warning("matrix: skipped a malformed event in %s: %s", room, why[:200])
