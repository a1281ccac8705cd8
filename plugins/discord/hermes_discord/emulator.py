"""A small emulator of Discord (REST API + gateway websocket), for tests that run without a network.

The real discord.py client talks to it with only its two base URLs
pointed here (``platforms.discord.api_base_url`` = :attr:`DiscordEmulator.api_base_url`,
``gateway_url`` = :attr:`DiscordEmulator.gateway_url`)::

    async with DiscordEmulator(token) as discord_api:
        channel = discord_api.text_channel()
        ...                                     # a discord client pointed at it answers
        await discord_api.push_message(channel, "hello", mention=True)
        assert discord_api.screen(channel) == ["Hello!"]

It is as strict as Discord where the plugin depends on it: responses are
``Content-Type: application/json`` exactly, carry the whole
``X-RateLimit-*`` set and a ``Via`` header; each channel has a message
bucket (5 calls per 5 s, create and edit alike) and a typing bucket, the
bot a global limit (50 requests/s); a call beyond one answers 429 with
``retry_after`` (float seconds) and ``global``; content over 2000
characters is 400 code 50035. What is checked is recorded per channel:
the *screen* (the bot's messages in order, each with its edit history),
every call with its arrival time and outcome, and *violations*: a call
inside a 429's window, an over-long text, a message sent without
``allowed_mentions`` none.

The gateway speaks op codes 10 HELLO, 1/11 heartbeat, 2 IDENTIFY, 0 READY
and GUILD_CREATE, 6 RESUME (replaying what the session missed) and
dispatches MESSAGE_CREATE / MESSAGE_UPDATE / THREAD_CREATE events.

History (``GET /channels/{id}/messages``): every message of a channel,
people's and the bot's, as Discord returns them: at most ``limit`` (1-100,
default 50; else 400 code 50035), one of ``before``/``after``/``around``,
newest first whatever the direction (with ``after``: the ``limit`` messages
right after it); a bucket of its own, 429s as for the others, 403 code 50001
without the permission to read it.

Files people attach are served by signed CDN links, every download logged
(:mod:`.emulator_files`, as ``api.cdn``); the bot's own uploads are
:mod:`.emulator_media`.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import math
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from aiohttp import WSMsgType, web

from hermes_gateway.testing import ScreenMessage, SentMedia, serve_locally

from .emulator_components import ComponentError, Components
from .emulator_files import IS_VOICE_MESSAGE, CdnFiles, PersonFile
from .emulator_media import MAX_REQUEST_BYTES, UploadRules

MAX_CONTENT = 2000
BUCKET_LIMIT = 5
BUCKET_WINDOW = 5.0
GLOBAL_LIMIT = 50
HEARTBEAT_MS = 41250
MESSAGES_BUCKET = "80c17d2f203122d936070c88c8d10f33"
REACTIONS_BUCKET = "5b3c1e7a9d2f4c6b8a0e1d3f5a7c9b2e"
TYPING_BUCKET = "a6a2c1a3e3f0d2b7c54b6f3e9c0d1e22"
HISTORY_BUCKET = "3e1f0b5d7c9a2e4f6b8d0c1a3e5f7b9d"
MAX_HISTORY_PAGE = 100
DISCORD_EPOCH_MS = 1_420_070_400_000


class ApiError(Exception):
    """An error answer as Discord sends it: HTTP status, ``{"message", "code"}``."""

    def __init__(self, status: int, code: int, message: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra or {}


@dataclass(frozen=True)
class ApiCall:
    """One REST request into a channel, when it arrived (``time.monotonic()``) and how it was answered."""

    at: float
    method: str          # "create", "edit", "typing", "react"
    params: dict[str, Any]
    outcome: str         # "ok", "rate_limited", "global_rate_limited", or the error message


@dataclass
class Bucket:
    """A Discord-style fixed window: ``limit`` calls, reset ``window`` seconds after its first call."""

    limit: int
    window: float
    used: int = 0
    resets_at: float = 0.0

    def take(self, now: float) -> tuple[bool, int, float]:
        """(allowed, remaining after this call, seconds until reset)."""
        if now >= self.resets_at:
            self.used, self.resets_at = 0, now + self.window
        if self.used >= self.limit:
            return False, 0, self.resets_at - now
        self.used += 1
        return True, self.limit - self.used, self.resets_at - now


@dataclass
class EmulatedChannel:
    """One channel (server text channel, thread, or DM) as the emulator sees it."""

    id: str
    kind: str = "text"                     # "text", "thread", "dm"
    guild_id: str | None = None
    parent_id: str | None = None
    name: str = "general"
    messages: list[ScreenMessage] = field(default_factory=list)  # the bot's, top to bottom
    references: dict[str, str] = field(default_factory=dict)     # bot message id -> message it replies to
    said: list[tuple[str, str]] = field(default_factory=list)    # what people wrote: (message id, text)
    log: dict[str, dict[str, Any]] = field(default_factory=dict)  # every message as history returns it, by id
    calls: list[ApiCall] = field(default_factory=list)
    typing: int = 0
    violations: list[str] = field(default_factory=list)
    blocked_until: float = float("-inf")
    buckets: dict[str, Bucket] = field(default_factory=dict)
    pending_errors: list[ApiError] = field(default_factory=list)
    scheduled_errors: dict[int, ApiError] = field(default_factory=dict)  # index in calls -> error
    #: (kind, which of its calls, error): the next such call answers it (see ``inject_rate_limit``)
    targeted_errors: list[tuple[str, Callable[[dict[str, Any]], bool] | None, ApiError]] = \
        field(default_factory=list)
    deleted: set[str] = field(default_factory=set)
    denied: bool = False
    delays: list[float] = field(default_factory=list)          # answer the next calls this much later
    emptied: int = 0          # answers that said X-RateLimit-Remaining: 0 (the next call would be a 429)
    uploads: list[SentMedia] = field(default_factory=list)     # every accepted attachment, in order
    #: the bot's reactions now: message id -> emoji, in the order added (Discord keeps each one)
    reactions: dict[str, list[str]] = field(default_factory=dict)
    #: every accepted reaction: (message id, emoji, time.monotonic())
    reaction_log: list[tuple[str, str, float]] = field(default_factory=list)

    @property
    def screen(self) -> list[str]:
        """The bot's messages, top to bottom, as they read now."""
        return [m.text for m in self.messages]

    @property
    def rate_limited(self) -> list[ApiCall]:
        return [c for c in self.calls if c.outcome in ("rate_limited", "global_rate_limited")]


class GatewaySession:
    """One gateway session: its sequence number and the events sent, for RESUME."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.seq = 0
        self.events: list[dict[str, Any]] = []
        self.ws: web.WebSocketResponse | None = None
        self.intents = 0


class DiscordEmulator:
    """An aiohttp app on 127.0.0.1 (ephemeral port) that answers like Discord for one bot token."""

    def __init__(self, token: str, *, bucket_limit: int = BUCKET_LIMIT, bucket_window: float = BUCKET_WINDOW,
                 global_limit: int = GLOBAL_LIMIT, bot_name: str = "hermes", resume_replays: int = 0) -> None:
        """``resume_replays``: on RESUME, also send again that many events the client had already
        received (Discord may), to test that the core answers each message once."""
        self.token = token
        self.bucket_limit = bucket_limit
        self.bucket_window = bucket_window
        self.global_limit = global_limit
        self.resume_replays = resume_replays
        self._increment = itertools.count()
        self._last_id = 0
        self.bot_user = {"id": _bot_id(token) or self.snowflake(), "username": bot_name, "discriminator": "0",
                         "global_name": None, "avatar": None, "bot": True, "flags": 0}
        self.application_id = self.snowflake()
        self.guild_id = self.snowflake()
        self.channels: dict[str, EmulatedChannel] = {}
        self.requests: list[tuple[str, str]] = []          # (method, path) of every REST request
        self.sessions: dict[str, GatewaySession] = {}
        self.identifies = 0
        self.resumes = 0
        #: While True the gateway is down: a websocket upgrade answers 503 (``refused_connections`` counts them).
        self.gateway_down = False
        self.refused_connections = 0
        self.global_blocked_until = float("-inf")
        self.global_violations: list[str] = []
        self._global_calls: list[float] = []
        self._global_injected: list[float] = []
        self._identified = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port: int | None = None
        #: Messages with files (:mod:`.emulator_media`): the upload limit, stalls.
        self.uploads = UploadRules(self)
        #: Files people attach (:mod:`.emulator_files`): served by signed links, every download logged.
        self.cdn = CdnFiles(self)
        #: Buttons on the bot's messages and the presses' answers (:mod:`.emulator_components`).
        self.components = Components()
        self.general = self.text_channel("general")

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> "DiscordEmulator":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_get("/ws", self._websocket)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self.cdn.routes(app)
        self._runner = await serve_locally(app, shutdown_timeout=0.5)
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        for session in self.sessions.values():
            if session.ws is not None and not session.ws.closed:
                await session.ws.close(code=1001)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def api_base_url(self) -> str:
        """What ``platforms.discord.api_base_url`` points at."""
        if self.port is None:
            raise RuntimeError("the emulator is not started")
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """What ``platforms.discord.gateway_url`` points at."""
        if self.port is None:
            raise RuntimeError("the emulator is not started")
        return f"ws://127.0.0.1:{self.port}/ws"

    # ------------------------------------------------------------------ the world tests set up

    def snowflake(self, age: float = 0.0) -> str:
        """A new id made as Discord makes them (milliseconds since 2015 << 22, plus a counter): ids grow
        with time and never repeat across runs, so a restarted gateway's dedupe sees only new ones.
        ``age``: an id made that many seconds ago (a message older than the others)."""
        stamp = (int((time.time() - age) * 1000) - DISCORD_EPOCH_MS) << 22
        if age > 0:
            return str(stamp | (next(self._increment) & 0xFFF))
        self._last_id = max(stamp | (next(self._increment) & 0xFFF), self._last_id + 1)
        return str(self._last_id)

    def text_channel(self, name: str = "chat") -> str:
        """A new text channel in the emulator's server; announced if a client is connected."""
        channel = EmulatedChannel(self.snowflake(), "text", self.guild_id, name=name)
        self.channels[channel.id] = channel
        self._announce("CHANNEL_CREATE", self._channel_json(channel))
        return channel.id

    def thread(self, parent_id: str, name: str = "thread") -> str:
        """A new public thread under ``parent_id``; announced with THREAD_CREATE."""
        channel = EmulatedChannel(self.snowflake(), "thread", self.guild_id, parent_id=str(parent_id), name=name)
        self.channels[channel.id] = channel
        self._announce("THREAD_CREATE", {**self._channel_json(channel), "newly_created": True})
        return channel.id

    def dm(self) -> str:
        """A DM channel between a person and the bot (Discord sends no event for it)."""
        channel = EmulatedChannel(self.snowflake(), "dm", None, name="dm")
        self.channels[channel.id] = channel
        return channel.id

    def channel(self, channel_id: str | int) -> EmulatedChannel:
        key = str(channel_id)
        if key not in self.channels:
            raise KeyError(f"no channel {key} in the emulator (create it with text_channel/thread/dm)")
        return self.channels[key]

    def screen(self, channel_id: str | int) -> list[str]:
        return self.channel(channel_id).screen

    async def wait_connected(self, timeout: float = 20.0) -> None:
        """Until a client has identified on the gateway."""
        await asyncio.wait_for(self._identified.wait(), timeout)

    async def push_message(self, channel_id: str | int, content: str, *, mention: bool = False,
                           author_id: str = "2001", author_name: str = "ada", bot: bool = False,
                           attachments: tuple[str | PersonFile, ...] = (), reply_to: str | None = None,
                           age: float = 0.0, forwarded: str | None = None) -> str:
        """A person (or a bot) writes in the channel; MESSAGE_CREATE goes to the client. Returns its id.

        ``mention`` prefixes the bot's mention (``<@id>``); ``reply_to`` makes it a reply to that
        message (one of the bot's, say); ``attachments`` are files served on the emulator's CDN
        (:mod:`.emulator_files`: ``photo()``, ``pdf()``, ``voice_note()``, ``too_large()``), or bare
        file names (a few bytes of text each). ``age``: sent that many seconds ago (its id and timestamp).
        With no client connected, only the channel's history keeps it (a RESUME of an old session replays it).
        ``forwarded``: the words of a message forwarded with it (a forward: ``message_snapshots``).
        """
        channel = self.channel(channel_id)
        if mention:
            content = f"<@{self.bot_user['id']}> {content}"
        message_id = self.snowflake(age)
        author = {"id": author_id, "username": author_name, "discriminator": "0", "global_name": author_name,
                  "avatar": None, **({"bot": True} if bot else {})}
        files = [f if isinstance(f, PersonFile) else PersonFile(f, f"the contents of {f}\n".encode())
                 for f in attachments]
        body: dict[str, Any] = {
            **self._message_json(channel, message_id, content, author),
            "attachments": [self.cdn.add(channel.id, f) for f in files],
        }
        if age > 0:
            body["timestamp"] = datetime.fromtimestamp(time.time() - age, timezone.utc).isoformat()
        if any(f.voice for f in files):
            body["flags"] = IS_VOICE_MESSAGE
        if channel.guild_id is not None:
            body["member"] = {"roles": [], "joined_at": _now_iso(), "deaf": False, "mute": False, "flags": 0}
        if f"<@{self.bot_user['id']}>" in content:
            body["mentions"] = [dict(self.bot_user)]
        if forwarded is not None:  # Discord's forward: a reference of type 1 and the original's snapshot
            body["message_reference"] = {"type": 1, "message_id": self.snowflake(), "channel_id": "9999"}
            body["message_snapshots"] = [{"message": {
                "type": 0, "content": forwarded, "embeds": [], "attachments": [], "timestamp": _now_iso(),
                "edited_timestamp": None, "flags": 0, "mentions": [], "mention_roles": []}}]
        if reply_to is not None:
            body["type"] = 19
            body["message_reference"] = {"message_id": reply_to, "channel_id": channel.id,
                                         **({"guild_id": channel.guild_id} if channel.guild_id else {})}
            replied = next((m for m in channel.messages if m.id == reply_to), None)
            if replied is not None:
                body["referenced_message"] = self._message_json(channel, replied.id, replied.text, self.bot_user)
        channel.said.append((message_id, content))
        channel.log[message_id] = {k: v for k, v in body.items() if k not in ("guild_id", "member")}  # REST's shape
        self._announce("MESSAGE_CREATE", body)
        await asyncio.sleep(0)
        return message_id

    async def press_button(self, channel_id: str | int, message_id: str, label: str, *, user_id: str = "2001",
                           user_name: str = "ada") -> str:
        """A person presses the button ``label`` under the bot's message: INTERACTION_CREATE. Returns its id."""
        channel = self.channel(channel_id)
        message = next(m for m in channel.messages if m.id == message_id)
        interaction_id = self.snowflake()
        token = f"itoken-{interaction_id}"
        self.components.open[interaction_id] = (token, user_id)
        user = {"id": user_id, "username": user_name, "discriminator": "0", "global_name": user_name, "avatar": None}
        body: dict[str, Any] = {
            "id": interaction_id, "application_id": self.application_id, "type": 3, "token": token, "version": 1,
            "channel_id": channel.id, "channel": self._channel_json(channel),
            "data": {"custom_id": self.components.custom_id(message_id, label), "component_type": 2},
            "message": {**self._message_json(channel, message.id, message.text, self.bot_user),
                        "components": self.components.rows.get(message.id, [])},
            "app_permissions": "1071698660929", "locale": "en-US", "entitlements": [],
            "authorizing_integration_owners": {}, "attachment_size_limit": 10485760,
        }
        if channel.guild_id is not None:
            body["guild_id"] = channel.guild_id
            body["guild_locale"] = "en-US"
            body["member"] = {"user": user, "roles": [], "joined_at": _now_iso(), "deaf": False, "mute": False,
                              "flags": 0, "permissions": "1071698660929"}
        else:
            body["user"] = user
        self._announce("INTERACTION_CREATE", body)
        await asyncio.sleep(0)
        return interaction_id

    async def push_edit(self, channel_id: str | int, message_id: str, content: str) -> None:
        """A person edits their message: MESSAGE_UPDATE (which the bot must not answer)."""
        channel = self.channel(channel_id)
        author = {"id": "2001", "username": "ada", "discriminator": "0", "global_name": "ada", "avatar": None}
        body = {**self._message_json(channel, message_id, content, author), "edited_timestamp": _now_iso()}
        self._announce("MESSAGE_UPDATE", body)
        await asyncio.sleep(0)

    def delete_message(self, channel_id: str | int, message_id: str) -> None:
        """Someone deletes one of the bot's messages: later edits of it answer 10008 Unknown Message."""
        channel = self.channel(channel_id)
        channel.deleted.add(message_id)
        channel.messages = [m for m in channel.messages if m.id != message_id]

    def delay_next(self, channel_id: str | int, seconds: float) -> None:
        """The next call into the channel takes effect at once but is answered ``seconds`` later."""
        self.channel(channel_id).delays.append(seconds)

    def deny_permissions(self, channel_id: str | int) -> None:
        """The bot loses Send Messages in the channel: every call answers 403, code 50013."""
        self.channel(channel_id).denied = True

    def inject_rate_limit(self, channel_id: str | int, retry_after: float, *, is_global: bool = False,
                          at_call: int | None = None, kind: str | None = None,
                          when: Callable[[dict[str, Any]], bool] | None = None) -> None:
        """The next call into the channel (or call number ``at_call``, from 0) answers 429.

        ``is_global`` makes it the bot's global limit: then no call into any channel may arrive
        before ``retry_after`` has passed. ``kind`` (``"create"``, ``"edit"``, ``"typing"``, ``"react"``,
        ``"upload"``, ``"history"``): the next call of that kind instead; ``when(body)``: only one whose JSON body it
        accepts (a question with buttons is a ``create`` with ``components``: ``when=with_buttons``).
        """
        error = ApiError(429, 0, "You are being rate limited.", {"retry_after": float(retry_after),
                                                                 "global": is_global})
        channel = self.channel(channel_id)
        if kind is not None or when is not None:
            channel.targeted_errors.append((kind or "", when, error))
        elif at_call is None:
            channel.pending_errors.append(error)
        else:
            channel.scheduled_errors[at_call] = error

    def fail_next(self, channel_id: str | int, status: int, code: int, message: str) -> None:
        """The next call into the channel answers this error, to no effect."""
        self.channel(channel_id).pending_errors.append(ApiError(status, code, message))

    async def take_gateway_down(self) -> None:
        """A gateway outage: every connection closes (4000, resumable) and new ones are refused with 503
        until :meth:`bring_gateway_back`; discord.py keeps retrying with its backoff."""
        self.gateway_down = True
        await self.drop_connection()

    def forget_sessions(self) -> None:
        """Discord ends every session: a RESUME is answered op 9 (not resumable), the client IDENTIFYs
        again, and what was sent in between is never replayed (only the channels' history has it)."""
        self.sessions.clear()

    def bring_gateway_back(self) -> None:
        """The outage ends: the next connection attempt is accepted (and may RESUME its session)."""
        self.gateway_down = False

    async def drop_connection(self, code: int = 4000) -> None:
        """Close every gateway connection as Discord does on an error; discord.py resumes."""
        for session in self.sessions.values():
            if session.ws is not None and not session.ws.closed:
                await session.ws.close(code=code, message=b"Unknown error")

    @property
    def violations(self) -> dict[str, list[str]]:
        """Every channel's violations (and the global ones under ``"global"``), empty lists left out."""
        found = {cid: list(c.violations) for cid, c in self.channels.items() if c.violations}
        if self.global_violations:
            found["global"] = list(self.global_violations)
        return found

    # ------------------------------------------------------------------ REST

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["path"]
        self.requests.append((request.method, path))
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return _answer(401, {"message": "401: Unauthorized", "code": 0})
        parts = path.strip("/").split("/")
        try:
            if request.method == "GET" and path == "/users/@me":
                return _answer(200, dict(self.bot_user))
            if request.method == "GET" and path == "/oauth2/applications/@me":
                return _answer(200, self._application_json())
            if request.method == "GET" and path in ("/gateway", "/gateway/bot"):
                return _answer(200, {"url": self.gateway_url, "shards": 1, "session_start_limit": {
                    "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
            if len(parts) >= 3 and parts[0] == "channels":
                return await self._channel_call(request, parts)
            if request.method == "POST" and len(parts) == 4 and parts[0] == "interactions" and parts[3] == "callback":
                try:
                    self.components.answer(parts[1], parts[2], await request.json())
                except ComponentError:
                    raise ApiError(404, 10062, "Unknown interaction") from None
                return _answer(204, None)
        except ApiError as exc:
            return _error(exc)
        return _answer(404, {"message": "404: Not Found", "code": 0})

    async def _channel_call(self, request: web.Request, parts: list[str]) -> web.Response:
        channel = self.channels.get(parts[1])
        if channel is None:
            raise ApiError(404, 10003, "Unknown Channel")
        if request.method == "POST" and parts[2:] == ["typing"]:
            kind, bucket = "typing", TYPING_BUCKET
        elif request.method == "POST" and parts[2:] == ["messages"]:
            kind, bucket = "create", MESSAGES_BUCKET
        elif request.method == "PATCH" and len(parts) == 4 and parts[2] == "messages":
            kind, bucket = "edit", MESSAGES_BUCKET
        elif request.method == "PUT" and len(parts) == 7 and parts[2] == "messages" and parts[4] == "reactions" \
                and parts[6] == "@me":
            kind, bucket = "react", REACTIONS_BUCKET
        elif request.method == "GET" and parts[2:] == ["messages"]:
            kind, bucket = "history", HISTORY_BUCKET
        else:
            raise ApiError(404, 0, "404: Not Found")
        params: dict[str, Any] = {}
        if kind == "create" and request.content_type == "multipart/form-data":
            return await self.uploads.handle(request, channel)
        if kind == "history":
            params = dict(request.query)
        elif kind not in ("typing", "react"):
            if request.headers.get("Content-Type") != "application/json":
                channel.violations.append(f"{kind} with Content-Type {request.headers.get('Content-Type')!r}")
                raise ApiError(400, 50035, "Invalid Form Body")
            params = await request.json()
        now = time.monotonic()
        if channel.delays:
            response = await self._carry_out(request, channel, kind, bucket, params, parts, now)
            await asyncio.sleep(channel.delays.pop(0))
            return response
        return await self._carry_out(request, channel, kind, bucket, params, parts, now)

    async def _carry_out(self, request: web.Request, channel: EmulatedChannel, kind: str, bucket: str,
                         params: dict[str, Any], parts: list[str], now: float) -> web.Response:
        headers = self._admit(channel, kind, bucket, params, now)
        if channel.denied and kind == "history":
            self._log(channel, kind, params, "Missing Access")
            raise ApiError(403, 50001, "Missing Access")
        if channel.denied:
            self._log(channel, kind, params, "Missing Permissions")
            raise ApiError(403, 50013, "Missing Permissions")
        if kind == "history":
            return _answer(200, self._history(channel, params), headers)
        if kind == "typing":
            channel.typing += 1
            self._log(channel, kind, params, "ok")
            return _answer(204, None, headers)
        if kind == "create":
            return _answer(200, self._create(channel, params), headers)
        if kind == "react":
            self._react(channel, parts[3], urllib.parse.unquote(parts[5]), params)
            return _answer(204, None, headers)
        return _answer(200, self._edit(channel, parts[3], params), headers)

    def _admit(self, channel: EmulatedChannel, kind: str, bucket_name: str, params: dict[str, Any],
               now: float) -> dict[str, str]:
        """Global limit, 429 windows, injected errors and the channel's bucket; the headers to send."""
        if now < self.global_blocked_until:
            self.global_violations.append(f"{kind} in {channel.id} {self.global_blocked_until - now:.3f}s "
                                          "before the global retry_after ended")
            self._log(channel, kind, params, "global_rate_limited")
            raise self._too_many(self.global_blocked_until - now, is_global=True)
        if now < channel.blocked_until:
            channel.violations.append(f"{kind} {channel.blocked_until - now:.3f}s before retry_after ended")
        self._global_calls = [t for t in self._global_calls if t > now - 1.0]
        self._global_calls.append(now)
        if len(self._global_calls) > self.global_limit:
            self._log(channel, kind, params, "global_rate_limited")
            self.global_blocked_until = now + 1.0
            raise self._too_many(1.0, is_global=True)
        error = channel.scheduled_errors.pop(len(channel.calls), None)
        if error is None and channel.pending_errors:
            error = channel.pending_errors.pop(0)
        for index, (wanted, when, _) in enumerate(channel.targeted_errors if error is None else ()):
            if (not wanted or wanted == kind) and (when is None or when(params)):
                error = channel.targeted_errors.pop(index)[2]
                break
        if error is not None:
            if error.status == 429:
                retry_after = float(error.extra["retry_after"])
                if error.extra.get("global"):
                    self.global_blocked_until = now + retry_after
                    self._log(channel, kind, params, "global_rate_limited")
                    raise self._too_many(retry_after, is_global=True)
                channel.blocked_until = max(channel.blocked_until, now + retry_after)
                self._log(channel, kind, params, "rate_limited")
                raise self._too_many(retry_after, bucket=bucket_name)
            self._log(channel, kind, params, error.message)
            raise error
        bucket = channel.buckets.setdefault(bucket_name, Bucket(self.bucket_limit, self.bucket_window))
        allowed, remaining, reset_after = bucket.take(now)
        if not allowed:
            channel.blocked_until = max(channel.blocked_until, now + reset_after)
            self._log(channel, kind, params, "rate_limited")
            raise self._too_many(reset_after, bucket=bucket_name)
        if remaining == 0:
            channel.emptied += 1
        return _limit_headers(self.bucket_limit, remaining, reset_after, bucket_name)

    def _too_many(self, retry_after: float, *, is_global: bool = False, bucket: str | None = None) -> ApiError:
        retry_after = round(max(retry_after, 0.001), 3)
        headers = {"Retry-After": str(math.ceil(retry_after)), "X-RateLimit-Scope": "global" if is_global else "user"}
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        else:
            headers.update(_limit_headers(self.bucket_limit, 0, retry_after, bucket or MESSAGES_BUCKET))
        return ApiError(429, 0, "You are being rate limited.",
                        {"retry_after": retry_after, "global": is_global, "_headers": headers})

    def _check_content(self, channel: EmulatedChannel, kind: str, params: dict[str, Any]) -> str:
        content = params.get("content")
        if not isinstance(content, str) or not content.strip():
            self._log(channel, kind, params, "Cannot send an empty message")
            raise ApiError(400, 50006, "Cannot send an empty message")
        if len(content) > MAX_CONTENT:  # counted before trimming, as Discord validates the body
            channel.violations.append(f"{kind} of {len(content)} characters")
            self._log(channel, kind, params, "Invalid Form Body")
            raise ApiError(400, 50035, "Invalid Form Body", {"errors": {"content": {"_errors": [{
                "code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}]}}})
        self._check_mentions(channel, kind, params)
        return content.strip()  # Discord drops leading and trailing whitespace

    def _check_mentions(self, channel: EmulatedChannel, kind: str, params: dict[str, Any]) -> None:
        mentions = params.get("allowed_mentions")
        if not isinstance(mentions, dict) or mentions.get("parse") != [] or mentions.get("users") \
                or mentions.get("roles") or mentions.get("replied_user"):
            channel.violations.append(f"{kind} without allowed_mentions none: {mentions!r}")

    def _create(self, channel: EmulatedChannel, params: dict[str, Any]) -> dict[str, Any]:
        content = self._check_content(channel, "create", params)
        message = ScreenMessage(self.snowflake(), content, [content])
        try:
            self.components.set(message.id, params.get("components"), editing=False)
        except ComponentError as exc:
            channel.violations.append(f"create: {exc}")
            raise ApiError(400, 50035, "Invalid Form Body") from None
        reference = params.get("message_reference")
        if isinstance(reference, dict) and reference.get("message_id"):
            channel.references[message.id] = str(reference["message_id"])
        channel.messages.append(message)
        self._log(channel, "create", params, "ok")
        body = self._message_json(channel, message.id, content, self.bot_user)
        channel.log[message.id] = {k: v for k, v in body.items() if k != "guild_id"}
        return body

    def _history(self, channel: EmulatedChannel, params: dict[str, Any]) -> list[dict[str, Any]]:
        """``GET /channels/{id}/messages``: as Discord pages it, newest first (its docs say so for every query)."""
        anchors = [k for k in ("before", "after", "around") if k in params]
        try:
            limit = int(params.get("limit", 50))
            anchor = int(params[anchors[0]]) if anchors else None
        except ValueError:
            limit, anchor = 0, None
        if not 1 <= limit <= MAX_HISTORY_PAGE or len(anchors) > 1:
            channel.violations.append(f"history with {params!r}")
            self._log(channel, "history", params, "Invalid Form Body")
            raise ApiError(400, 50035, "Invalid Form Body")
        ids = sorted(channel.log, key=int)
        if not anchors:
            chosen = ids[-limit:]
        elif anchors[0] == "after":
            chosen = [i for i in ids if int(i) > (anchor or 0)][:limit]
        elif anchors[0] == "before":
            chosen = [i for i in ids if int(i) < (anchor or 0)][-limit:]
        else:
            older = [i for i in ids if int(i) <= (anchor or 0)]
            newer = [i for i in ids if int(i) > (anchor or 0)]
            chosen = older[-((limit + 1) // 2):] + newer[:limit // 2]
        self._log(channel, "history", params, "ok")
        return [dict(channel.log[i]) for i in reversed(chosen)]

    def _edit(self, channel: EmulatedChannel, message_id: str, params: dict[str, Any]) -> dict[str, Any]:
        target = next((m for m in channel.messages if m.id == message_id), None)
        if target is None:
            self._log(channel, "edit", params, "Unknown Message")
            raise ApiError(404, 10008, "Unknown Message")
        content = self._check_content(channel, "edit", params)
        try:
            self.components.set(target.id, params.get("components"), editing=True)
        except ComponentError as exc:
            channel.violations.append(f"edit: {exc}")
            raise ApiError(400, 50035, "Invalid Form Body") from None
        target.text = content
        target.history.append(content)
        if target.id in channel.log:
            channel.log[target.id] = {**channel.log[target.id], "content": content, "edited_timestamp": _now_iso()}
        self._log(channel, "edit", params, "ok")
        return {**self._message_json(channel, target.id, content, self.bot_user), "edited_timestamp": _now_iso()}

    def _react(self, channel: EmulatedChannel, message_id: str, emoji: str, params: dict[str, Any]) -> None:
        """A reaction on a message of the channel (a person's or the bot's); adding it again changes nothing."""
        known = {mid for mid, _ in channel.said} | {m.id for m in channel.messages}
        if message_id not in known:
            self._log(channel, "react", params, "Unknown Message")
            raise ApiError(404, 10008, "Unknown Message")
        if not emoji or any(c.isascii() and not c.isalnum() and c not in ":_" for c in emoji):
            self._log(channel, "react", params, "Unknown Emoji")
            raise ApiError(400, 10014, "Unknown Emoji")
        shown = channel.reactions.setdefault(message_id, [])
        if emoji not in shown:
            shown.append(emoji)
        channel.reaction_log.append((message_id, emoji, time.monotonic()))
        self._log(channel, "react", {"emoji": emoji, "message_id": message_id}, "ok")

    def _log(self, channel: EmulatedChannel, kind: str, params: dict[str, Any], outcome: str) -> None:
        channel.calls.append(ApiCall(time.monotonic(), kind, dict(params), outcome))

    # ------------------------------------------------------------------ gateway websocket

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        if self.gateway_down:
            self.refused_connections += 1
            return web.Response(status=503, text="Service Unavailable")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": HEARTBEAT_MS}, "s": None, "t": None}))
        session: GatewaySession | None = None
        async for frame in ws:
            if frame.type != WSMsgType.TEXT:
                continue
            payload = json.loads(frame.data)
            op, data = payload.get("op"), payload.get("d")
            if op == 1:
                await ws.send_str(json.dumps({"op": 11, "d": None, "s": None, "t": None}))
            elif op == 2:
                if not isinstance(data, dict) or data.get("token") != self.token:
                    await ws.close(code=4004, message=b"Authentication failed.")
                    break
                session = GatewaySession(self.snowflake())
                session.intents = int(data.get("intents") or 0)
                session.ws = ws
                self.sessions[session.session_id] = session
                self.identifies += 1
                await self._send(session, "READY", {
                    "v": 10, "user": dict(self.bot_user), "session_id": session.session_id,
                    "resume_gateway_url": self.gateway_url, "private_channels": [], "relationships": [],
                    "guilds": [{"id": self.guild_id, "unavailable": True}],
                    "application": {"id": self.application_id, "flags": 0}, "_trace": ["hermes-emulator"]})
                await self._send(session, "GUILD_CREATE", self._guild_json())
                self._identified.set()
            elif op == 6:
                resumed = self.sessions.get(str((data or {}).get("session_id")))
                if resumed is None or (data or {}).get("token") != self.token:
                    await ws.send_str(json.dumps({"op": 9, "d": False, "s": None, "t": None}))
                    continue
                session = resumed
                session.ws = ws
                self.resumes += 1
                seen = int((data or {}).get("seq") or 0) - self.resume_replays
                for event in [e for e in session.events if e["s"] > seen]:
                    await ws.send_str(json.dumps(event))
                await self._send(session, "RESUMED", {"_trace": ["hermes-emulator"]})
        if session is not None and session.ws is ws:
            session.ws = None
        return ws

    async def _send(self, session: GatewaySession, event: str, data: dict[str, Any]) -> None:
        self._queue(session, event, data)
        await asyncio.sleep(0)

    def _queue(self, session: GatewaySession, event: str, data: dict[str, Any]) -> None:
        """Number and log the event now (a RESUME replays from the log), write it to the socket soon."""
        session.seq += 1
        payload = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.events.append(payload)
        ws = session.ws
        if ws is not None and not ws.closed:
            asyncio.get_running_loop().create_task(_write(ws, payload))

    def _announce(self, event: str, data: dict[str, Any]) -> None:
        """Dispatch ``event`` to every session (sent now when connected, replayed on RESUME otherwise)."""
        for session in self.sessions.values():
            self._queue(session, event, data)

    # ------------------------------------------------------------------ JSON shapes

    def _application_json(self) -> dict[str, Any]:
        return {"id": self.application_id, "name": self.bot_user["username"], "description": "",
                "icon": None, "bot_public": True, "bot_require_code_grant": False, "owner": dict(self.bot_user),
                "verify_key": "0" * 64, "flags": 0, "summary": "", "team": None,
                "bot": dict(self.bot_user)}

    def _channel_json(self, channel: EmulatedChannel) -> dict[str, Any]:
        if channel.kind == "dm":
            return {"id": channel.id, "type": 1, "last_message_id": None,
                    "recipients": [{"id": "2001", "username": "ada", "discriminator": "0", "avatar": None}]}
        body: dict[str, Any] = {"id": channel.id, "type": 11 if channel.kind == "thread" else 0,
                                "guild_id": channel.guild_id, "name": channel.name, "position": 0,
                                "permission_overwrites": [], "parent_id": channel.parent_id, "nsfw": False,
                                "topic": None, "last_message_id": None, "rate_limit_per_user": 0, "flags": 0}
        if channel.kind == "thread":
            body.update({"owner_id": "2001", "message_count": 0, "member_count": 1, "thread_metadata": {
                "archived": False, "auto_archive_duration": 1440, "archive_timestamp": _now_iso(),
                "locked": False}})
        return body

    def _guild_json(self) -> dict[str, Any]:
        in_guild = [c for c in self.channels.values() if c.guild_id == self.guild_id]
        return {
            "id": self.guild_id, "name": "Hermes test server", "icon": None, "owner_id": "2001",
            "features": [], "emojis": [], "stickers": [], "voice_states": [], "presences": [],
            "stage_instances": [], "guild_scheduled_events": [], "soundboard_sounds": [],
            "roles": [{"id": self.guild_id, "name": "@everyone", "permissions": "1071698660929", "position": 0,
                       "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0}],
            "channels": [self._channel_json(c) for c in in_guild if c.kind == "text"],
            "threads": [self._channel_json(c) for c in in_guild if c.kind == "thread"],
            "members": [{"user": dict(self.bot_user), "roles": [], "joined_at": _now_iso(), "deaf": False,
                         "mute": False, "flags": 0}],
            "member_count": 2, "large": False, "unavailable": False, "joined_at": _now_iso(),
            "verification_level": 0, "default_message_notifications": 0, "explicit_content_filter": 0,
            "mfa_level": 0, "nsfw_level": 0, "premium_tier": 0, "preferred_locale": "en-US",
            "system_channel_id": None, "system_channel_flags": 0, "afk_channel_id": None, "afk_timeout": 300,
        }

    def _message_json(self, channel: EmulatedChannel, message_id: str, content: str,
                      author: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": message_id, "channel_id": channel.id, "type": 0, "content": content, "author": dict(author),
            "timestamp": _now_iso(), "edited_timestamp": None, "tts": False, "mention_everyone": False,
            "mentions": [], "mention_roles": [], "attachments": [], "embeds": [], "pinned": False, "flags": 0,
            "components": [],
        }
        if channel.guild_id is not None:
            body["guild_id"] = channel.guild_id
        return body


async def _write(ws: web.WebSocketResponse, payload: dict[str, Any]) -> None:
    try:
        await ws.send_str(json.dumps(payload))
    except (ConnectionResetError, RuntimeError):
        pass  # the connection went away: the event is in the session's log, a RESUME replays it


def _bot_id(token: str) -> str | None:
    """A bot token's first part is the bot's user id in base64, as Discord makes them."""
    first = token.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(first + "=" * (-len(first) % 4)).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return None
    return decoded if decoded.isdigit() else None


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat()


def _limit_headers(limit: int, remaining: int, reset_after: float, bucket: str) -> dict[str, str]:
    """The whole ``X-RateLimit-*`` set (discord.py needs all of them or none)."""
    reset_after = max(reset_after, 0.0)
    return {"X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}", "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": bucket}


def with_buttons(body: dict[str, Any]) -> bool:
    """A message with components (``inject_rate_limit(..., when=with_buttons)``)."""
    return bool(body.get("components"))


def _answer(status: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
    """``Content-Type`` exactly ``application/json`` (discord.py fails at login on a charset suffix)."""
    all_headers = {"Via": "1.1 google", **(headers or {})}
    if status == 204:
        return web.Response(status=204, headers=all_headers)
    all_headers["Content-Type"] = "application/json"
    return web.Response(status=status, body=json.dumps(body).encode(), headers=all_headers)


def _error(exc: ApiError) -> web.Response:
    extra = dict(exc.extra)
    headers = extra.pop("_headers", None)
    if exc.status == 429:
        return _answer(429, {"message": exc.message, "retry_after": extra["retry_after"], "global": extra["global"]},
                       headers)
    return _answer(exc.status, {"message": exc.message, "code": exc.code, **extra})
