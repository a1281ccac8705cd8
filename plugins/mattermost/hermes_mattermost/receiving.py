"""Receiving: the websocket (``/api/v4/websocket``), its reconnects, and the catch-up after one.

The client connects, authenticates with ``authentication_challenge`` (the
token in the first frame, never in a URL), and waits for ``hello``: then it
reports itself connected. ``posted`` and ``post_edited`` events go through
:mod:`.inbound` to ``context.receive``; every other event is ignored. A
frame that is not JSON, not an object or not shaped like Mattermost's
event costs one log line and is skipped; a frame over aiohttp's 4 MiB
limit closes the socket, which reconnects. When the socket drops (or the
challenge fails) the client reports itself disconnected, with why, and
reconnects after ``reconnect_delay`` seconds, doubling to 30.

Messages sent while the bot was away: Mattermost does not replay events
to a websocket that reconnects. So the plugin remembers the channels it was
active in (the last 50, with the newest post's ``create_at``, kept with
``context.set_value`` so a restart remembers them too) and after each
``hello`` asks ``GET /api/v4/channels/{id}/posts?since=`` for what arrived
since; the core answers each post once (its update id is the post id, the
same the websocket would have given).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import aiohttp

from hermes_gateway import Incoming, PlatformContext, scrub_secrets

from .api import Api
from .errors import MattermostError
from .inbound import Identity, Malformed, Reader
from .settings import MattermostSettings

log = logging.getLogger(__name__)

#: The longest wait between two reconnects.
MAX_RECONNECT_DELAY = 30.0
#: How many channels the catch-up remembers.
MAX_CHANNELS = 50
CHANNELS_KEY = "active_channels"


class AuthRefused(Exception):
    """The websocket's authentication_challenge was answered FAIL."""


class Receiver:
    """The websocket of one bot, reconnecting until stopped."""

    def __init__(self, settings: MattermostSettings, context: PlatformContext, api: Api, reader: Reader) -> None:
        self.settings = settings
        self.context = context
        self.api = api
        self.reader = reader
        self.active: dict[str, list[Any]] = {}  # channel -> [newest create_at seen, channel type letter]
        self._task: asyncio.Task[None] | None = None
        self._catch_up: asyncio.Task[None] | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._session: aiohttp.ClientSession | None = None

    @property
    def url(self) -> str:
        return "ws" + self.settings.api[len("http"):] + "/websocket"

    async def start(self) -> None:
        stored = await self.context.get_value(CHANNELS_KEY, {})
        if isinstance(stored, dict):
            self.active = {str(c): v for c, v in stored.items() if isinstance(v, list) and len(v) == 2}
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        for task in (self._task, self._catch_up):
            if task is not None and not task.done():
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
        self._task = self._catch_up = None
        if self._ws is not None:
            await self._ws.close()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def identity(self) -> Identity:
        if self.reader.me is None:
            me = await self.api.call("GET", "/users/me", "users/me")
            if not isinstance(me, dict) or not isinstance(me.get("id"), str) or not isinstance(me.get("username"), str):
                raise MattermostError("mattermost users/me: the answer is not a user", status=200)
            self.reader.me = Identity(me["id"], me["username"])
        return self.reader.me

    # ---------------------------------------------------------------- the socket

    async def _run(self) -> None:
        delay = self.settings.reconnect_delay
        while True:
            try:
                greeted = await self._connect_once()
                why = "the websocket closed"
            except asyncio.CancelledError:
                raise
            except AuthRefused as exc:
                greeted, why = False, f"the websocket refused the token ({exc})"
            except Exception as exc:
                greeted, why = False, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if greeted:
                delay = self.settings.reconnect_delay
            why = scrub_secrets(why)[:200]
            self.context.report_disconnected(f"{why}; reconnecting in {delay:g}s")
            log.info("mattermost: %s; reconnecting in %gs", why, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_RECONNECT_DELAY)

    async def _connect_once(self) -> bool:
        """One connection, until it closes; True when the server said hello on it."""
        await self.identity()
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=30))
        greeted = False
        async with self._session.ws_connect(self.url, heartbeat=30.0, max_msg_size=4 * 1024 * 1024) as ws:
            self._ws = ws
            await ws.send_json({"seq": 1, "action": "authentication_challenge",
                                "data": {"token": self.settings.token}})
            async for message in ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    if message.type == aiohttp.WSMsgType.ERROR:
                        raise ConnectionError(f"websocket error ({ws.exception() or f'close code {ws.close_code}'})")
                    continue
                if await self._event(message.data):
                    greeted = True
        self._ws = None
        return greeted

    async def _event(self, text: str) -> bool:
        """Handle one frame; True when it was ``hello``."""
        try:
            event = json.loads(text)
        except ValueError:
            return self._skip("not JSON")
        if not isinstance(event, dict):
            return self._skip("not a JSON object")
        if "seq_reply" in event:
            if event.get("status") == "FAIL":
                error = event.get("error")
                raise AuthRefused(str(error.get("id", "FAIL"))[:100] if isinstance(error, dict) else "FAIL")
            return False
        name = event.get("event")
        if name == "hello":
            self.context.report_connected()
            if self.settings.catch_up and self.active:
                if self._catch_up is None or self._catch_up.done():
                    self._catch_up = asyncio.get_running_loop().create_task(self._fetch_missed())
            return True
        if name not in ("posted", "post_edited"):
            return False
        try:
            data = event.get("data")
            incoming = await (self.reader.posted(data) if name == "posted" else self.reader.edited(data))
        except Malformed as exc:
            return self._skip(f"a {name} event: {exc}")
        except Exception as exc:  # the store's answer to has_conversation, say: this event only
            log.warning("mattermost: a %s event was not handled: %s", name,
                        scrub_secrets(f"{type(exc).__name__}: {exc}")[:200])
            return False
        if name == "posted" and isinstance(data, dict):
            await self._note(data)
        if incoming is not None:
            self.context.receive(incoming)
        return False

    def _skip(self, why: str) -> bool:
        self.context.count("malformed_event")
        log.info("mattermost: skipped a malformed websocket event (%s)", why)
        return False

    # ---------------------------------------------------------------- the catch-up

    async def _note(self, data: dict[str, Any]) -> None:
        """Remember the channel and its newest post, for the catch-up after a reconnect or restart."""
        try:
            post = json.loads(data["post"])
            channel, created = str(post["channel_id"]), int(post.get("create_at") or 0)
        except (KeyError, TypeError, ValueError):
            return
        letter = data.get("channel_type") if data.get("channel_type") in ("D", "G", "O", "P") else "O"
        known = self.active.get(channel)
        if known is not None and known[0] >= created:
            return
        self.active[channel] = [created, letter]
        if len(self.active) > MAX_CHANNELS:
            oldest = min(self.active, key=lambda c: self.active[c][0])
            del self.active[oldest]
        await self._save()

    async def _save(self) -> None:
        try:
            await self.context.set_value(CHANNELS_KEY, self.active)
        except Exception as exc:
            log.info("mattermost: the channels to catch up in were not stored: %s", exc)

    async def _fetch_missed(self) -> None:
        """Each active channel's posts since the newest one seen, handed to the core oldest first."""
        for channel, (since, letter) in list(self.active.items()):
            try:
                answer = await self.api.call("GET", f"/channels/{channel}/posts", "catch-up",
                                             params={"since": str(int(since))})
                posts = answer.get("posts") if isinstance(answer, dict) else None
                if not isinstance(posts, dict):
                    continue
                missed = sorted((p for p in posts.values() if isinstance(p, dict)
                                 and isinstance(p.get("create_at"), int) and p["create_at"] > since
                                 and not p.get("delete_at")), key=lambda p: p["create_at"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.info("mattermost: catching up in channel %s failed: %s", channel,
                         scrub_secrets(str(exc))[:200])
                continue
            for post in missed:
                try:
                    incoming: Incoming | None = await self.reader.fetched(post, str(letter))
                except Malformed as exc:
                    self._skip(f"a fetched post: {exc}")
                    continue
                self.active[channel] = [max(self.active.get(channel, [0])[0], post["create_at"]), letter]
                if incoming is not None:
                    log.info("mattermost: a post sent while the bot was away, in channel %s", channel)
                    self.context.receive(incoming)
            if missed:
                await self._save()
