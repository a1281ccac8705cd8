"""A Slack emulator on 127.0.0.1: the Web API, Socket Mode and signed Events API delivery.

The real slack_sdk and slack-bolt talk to it unchanged: point
``AsyncWebClient(base_url=emulator.base_url)`` at it, and
``apps.connections.open`` hands out the URL of its Socket Mode websocket.
It keeps what a person in the workspace would see (``screen``), every call
the bot made (``calls``), and what Slack itself would refuse or punish
(``violations``: a channel stream that disappears; ``still_streaming``: a
stream left open). Whether a reply is in its thread is on the screen:
``screen(channel, thread_ts)``.

What it implements, from Slack's documentation and PLATFORM_FACTS.md:

* ``auth.test``, ``apps.connections.open``, ``chat.postMessage``,
  ``chat.update`` (4,000 characters, ``streaming_state_conflict`` on a live
  stream), ``chat.startStream`` / ``chat.appendStream`` (``markdown_text``
  or ``chunks``) / ``chat.stopStream``, streams expiring after
  ``stream_ttl`` seconds (``message_not_in_streaming_state``), a stream in a
  channel without ``recipient_user_id``/``recipient_team_id`` disappearing;
* rate limits per method per workspace answered with HTTP 429 +
  ``Retry-After``: ``chat.startStream`` at most 20 in any 60 seconds, as
  Slack's documentation says (on by default), others when a test sets them
  with :meth:`SlackEmulator.limit`; and injected ones in both of Slack's shapes (the 429 and
  HTTP 200 ``{"ok": false, "error": "rate_limited"}``);
* Socket Mode: ``hello``, ``events_api`` envelopes, acks, redelivery of an
  unacked envelope with a new envelope id and the same event id, and the
  ``disconnect`` message that makes the client reconnect;
* file uploads as slack_sdk's ``files_upload_v2`` makes them:
  ``files.getUploadURLExternal`` (``filename``, ``length`` up to 1 GB) → a
  POST of the bytes (raw, or multipart) to the upload URL it returned, on
  127.0.0.1 → ``files.completeUploadExternal`` (``files``, ``channel_id``,
  ``thread_ts``, ``initial_comment``), which shares the file in the channel
  or thread as one bot message, on the screen as ``[image: qr.png] comment``
  (:meth:`SlackEmulator.attachments` has the bytes); a call may be made to
  hang (:meth:`SlackEmulator.hang`), having taken effect or not;
* the Events API over HTTP: each event POSTed to ``events_url``, signed
  (``v0`` HMAC-SHA256) with the signing secret, retried with
  ``X-Slack-Retry-Num`` when not answered 2xx;
* history (``conversations.history``, ``conversations.replies``), as
  Slack pages it: ``oldest``/``latest`` exclusive unless ``inclusive``,
  ``limit`` (default 100, at most 999; fewer when :attr:`SlackEmulator.history_page`
  says so, as for apps outside the Marketplace), ``has_more`` and
  ``response_metadata.next_cursor``; history newest first, a thread's
  replies oldest first after its parent; Tier 3 (50 a minute per method),
  429 beyond. A person's message sent while nobody receives events is kept
  in the history only (Slack retries an unacknowledged event three times
  within about five minutes, then drops it; :attr:`SlackEmulator.retry_missed`
  delivers it to the next connection as such a retry);
* files people share (:mod:`.emulator_files`): ``file_share`` messages
  whose files are served at ``url_private`` to the bot token only (the
  sign-in page otherwise, as Slack does), ``files.info``, and a log of
  every download (:attr:`SharedFiles.downloads`, as ``api.shared``).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import math
import mimetypes
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode

import aiohttp
from aiohttp import web

from hermes_gateway.testing import serve_locally

from .emulator_blocks import BlockError, Blocks
from .emulator_files import PersonFile, SharedFiles

BOT_TOKEN = "xoxb-1111111111-2222222222222-EmulatorBotTokenSecret"
APP_TOKEN = "xapp-1-A0HERMES-3333333333-EmulatorAppTokenSecretValue"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"

CHAT_UPDATE_LIMIT = 4000
MARKDOWN_LIMIT = 12000
POST_LIMIT = 40000
STREAM_TTL = 300.0
#: chat.startStream: about 20 per minute per workspace.
START_STREAM_PER_MINUTE = 20
METHODS_WITH_CHANNEL = ("chat.postMessage", "chat.update", "chat.startStream", "chat.appendStream",
                        "chat.stopStream", "files.completeUploadExternal", "reactions.add")
#: conversations.history / conversations.replies: Tier 3, 50+ a minute per method per workspace.
HISTORY_PER_MINUTE = 50
MAX_HISTORY_LIMIT = 999
#: Slack's largest file (slack_sdk's MAX_V2_FILE_SIZE).
MAX_FILE_BYTES = 1024 * 1024 * 1024
ALT_TEXT_LIMIT = 1000


@dataclass
class SlackFile:
    """A file the bot uploaded: announced (``length``), uploaded (``data``), then shared (``completed``)."""

    id: str
    filename: str
    length: int
    data: bytes | None = field(default=None, repr=False)
    title: str = ""
    completed: bool = False

    @property
    def kind(self) -> str:
        """How Slack shows it: inline ``image``/``video``/``audio``, else a ``file`` to download."""
        major = (mimetypes.guess_type(self.filename)[0] or "").split("/", 1)[0]
        return major if major in ("image", "video", "audio") else "file"


@dataclass
class Message:
    """One message in a channel, a person's or the bot's, with every text it ever showed."""

    ts: str
    user: str
    text: str
    thread_ts: str | None = None
    bot: bool = False
    #: "plain" (posted), "streaming", "stopped", "expired" (Slack ended an old stream), "vanished"
    state: str = "plain"
    started_at: float = 0.0
    history: list[str] = field(default_factory=list)
    files: list[SlackFile] = field(default_factory=list)
    #: the bot's reactions on it, by Slack name, in the order added (Slack keeps each one)
    reactions: list[str] = field(default_factory=list)
    subtype: str | None = None
    #: what else history shows of a person's message (its shared ``files``)
    extra: dict[str, Any] = field(default_factory=dict)

    def show(self, text: str) -> None:
        self.text = text
        self.history.append(text)


@dataclass
class Channel:
    id: str
    kind: str = "im"               # "im" or "channel"
    messages: list[Message] = field(default_factory=list)

    def find(self, ts: str) -> Message | None:
        for message in self.messages:
            if message.ts == ts:
                return message
        return None


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    at: float
    answer: dict[str, Any] | None = None
    status: int = 200


@dataclass
class Delivery:
    """One attempt to hand an event to the app."""

    event_id: str
    attempt: int
    envelope_id: str | None
    sent_at: float
    acked_at: float | None = None
    status: int | None = None      # HTTP mode: the app's answer


class _Bucket:
    def __init__(self, per_minute: float, burst: int) -> None:
        self.rate = per_minute / 60.0
        self.burst = burst
        self.tokens = float(burst)
        self.at = time.monotonic()

    def take(self) -> float:
        """0 when a call may go now, else the seconds until it may."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


class _Window:
    """At most ``count`` calls in any ``period`` seconds (a rolling window, as Slack counts per minute)."""

    def __init__(self, count: int, period: float = 60.0) -> None:
        self.count = count
        self.period = period
        self.times: deque[float] = deque()

    def take(self) -> float:
        """0 when a call may go now (and it is counted), else the seconds until the oldest one leaves."""
        now = time.monotonic()
        while self.times and now - self.times[0] >= self.period:
            self.times.popleft()
        if len(self.times) < self.count:
            self.times.append(now)
            return 0.0
        return self.period - (now - self.times[0])


class SlackEmulator:
    """One Slack workspace with one bot, served on 127.0.0.1."""

    def __init__(self, bot_token: str = BOT_TOKEN, app_token: str = APP_TOKEN, *,
                 signing_secret: str = SIGNING_SECRET, team_id: str = "T0HERMES", bot_user_id: str = "U0BOT",
                 bot_id: str = "B0BOT", stream_ttl: float = STREAM_TTL, ack_timeout: float = 3.0,
                 echo: bool = True, start_stream_per_minute: int | None = START_STREAM_PER_MINUTE) -> None:
        """``start_stream_per_minute``: chat.startStream calls accepted in any 60 s (None: no limit)."""
        self.bot_token = bot_token
        self.app_token = app_token
        self.signing_secret = signing_secret
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.stream_ttl = stream_ttl
        self.ack_timeout = ack_timeout
        self.echo = echo                     # send the bot's own posts back as events, like Slack
        self.channels: dict[str, Channel] = {}
        self.calls: list[Call] = []
        self.violations: list[str] = []
        #: every accepted reactions.add: (channel, message ts, name, time.monotonic())
        self.reaction_log: list[tuple[str, str, str, float]] = []
        self.deliveries: list[Delivery] = []
        self.events_url: str | None = None   # HTTP mode: where events are POSTed
        self.start_stream_error: str | None = None   # the switch that makes chat.startStream fail
        self.update_limit = CHAT_UPDATE_LIMIT        # characters chat.update accepts
        self._limits: dict[str, _Bucket | _Window] = {}
        if start_stream_per_minute is not None:
            self._limits["chat.startStream"] = _Window(start_stream_per_minute)
        for method in ("conversations.history", "conversations.replies"):
            self._limits[method] = _Window(HISTORY_PER_MINUTE)
        #: The most messages one history page holds (Slack: 999; 15 for apps outside the Marketplace).
        self.history_page = MAX_HISTORY_LIMIT
        #: Events sent while nobody received them (no socket, no events_url): Slack's retries to come.
        self.missed: list[str] = []
        #: Deliver those to the next Socket Mode connection (an outage shorter than Slack's ~5 min of retries).
        self.retry_missed = False
        self._last_us = 0
        self._injected: list[dict[str, Any]] = []
        self._failures: list[dict[str, Any]] = []
        self._hangs: list[dict[str, Any]] = []
        self.files: dict[str, SlackFile] = {}
        self._upload_tokens: dict[str, str] = {}      # upload URL token -> file id
        self.upload_failures: list[int] = []          # HTTP statuses the next uploads to an upload URL get
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._run = secrets.token_hex(4).upper()
        self._sockets: list[web.WebSocketResponse] = []
        #: While True, Socket Mode is down: upgrades answer 503 (:meth:`take_socket_mode_down`).
        self.socket_mode_down = False
        self.refused_connections = 0
        self._connections = 0
        self._payloads: dict[str, dict[str, Any]] = {}
        self._acked: dict[str, asyncio.Event] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0
        #: Files people share (:mod:`.emulator_files`), served at their url_private; every download logged.
        self.shared = SharedFiles(self)
        #: Block Kit buttons on the bot's messages, and ephemeral lines (:mod:`.emulator_blocks`).
        self.blocks = Blocks()
        #: HTTP mode: the interactivity Request URL button presses are POSTed to.
        self.interactivity_url: str | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> "SlackEmulator":
        app = web.Application(client_max_size=MAX_FILE_BYTES + (1 << 20))  # the upload URL takes up to 1 GB
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/upload/v1/{token}", self._upload)
        app.router.add_get("/socket-mode", self._socket)
        self.shared.routes(app)
        self._runner = await serve_locally(app)
        self.port = self._runner.addresses[0][1]
        self._session = aiohttp.ClientSession()
        return self

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for ws in list(self._sockets):
            await ws.close()
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> "SlackEmulator":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        """What ``api_base_url`` / ``AsyncWebClient(base_url=...)`` takes."""
        return f"http://127.0.0.1:{self.port}/api/"

    # ------------------------------------------------------------------ what a person sees

    def channel(self, channel_id: str, kind: str | None = None) -> Channel:
        channel = self.channels.get(channel_id)
        if channel is None:
            guess = "im" if channel_id.startswith("D") else "channel"
            channel = self.channels[channel_id] = Channel(channel_id, kind or guess)
        elif kind is not None:
            channel.kind = kind
        return channel

    def screen(self, channel_id: str, thread_ts: str | None = None) -> list[str]:
        """The texts of the bot's visible messages in a thread (or, with no thread, in the whole channel)."""
        self._expire_old_streams()
        channel = self.channels.get(channel_id)
        if channel is None:
            return []
        return [m.text for m in channel.messages if m.bot and m.state != "vanished"
                and (thread_ts is None or m.thread_ts == thread_ts)]

    def attachments(self, channel_id: str, thread_ts: str | None = None) -> list[tuple[str, bytes]]:
        """The files the bot shared in a channel (or thread), in order: ``(file name, bytes)``."""
        channel = self.channels.get(channel_id)
        if channel is None:
            return []
        return [(f.filename, f.data or b"") for m in channel.messages if m.bot and m.state != "vanished"
                and (thread_ts is None or m.thread_ts == thread_ts) for f in m.files]

    def bot_messages(self, channel_id: str) -> list[Message]:
        channel = self.channels.get(channel_id)
        return [m for m in channel.messages if m.bot] if channel else []

    def still_streaming(self) -> list[str]:
        """Messages a person still sees in "streaming" state (Slack would expire them after 5 minutes)."""
        self._expire_old_streams()
        return [f"{c.id}/{m.ts}" for c in self.channels.values() for m in c.messages if m.state == "streaming"]

    def calls_to(self, method: str, channel_id: str | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == method
                and (channel_id is None or c.params.get("channel") == channel_id)]

    # ------------------------------------------------------------------ what tests switch on

    def limit(self, method: str, per_minute: float, burst: int = 1) -> None:
        """Enforce Slack's per-method, per-workspace limit: over it, HTTP 429 with Retry-After."""
        self._limits[method] = _Bucket(per_minute, burst)

    def inject_rate_limit(self, retry_after: float, *, method: str | None = None, channel: str | None = None,
                          shape: str = "http429", times: int = 1,
                          when: Callable[[dict[str, Any]], bool] | None = None) -> None:
        """The next ``times`` matching calls are rate limited.

        ``shape="http429"``: HTTP 429 ``ratelimited`` with ``Retry-After``;
        ``shape="ok_false"``: HTTP 200 ``{"ok": false, "error": "rate_limited"}`` (no header, as Slack does).
        ``when(params)``: only calls whose parameters it accepts (``when=with_buttons``: a message with buttons).
        """
        self._injected.append({"method": method, "channel": channel, "retry_after": retry_after,
                               "shape": shape, "times": times, "when": when})

    def fail_method(self, method: str, error: str, *, times: int = 1, status: int = 200) -> None:
        """The next ``times`` calls of ``method`` answer ``{"ok": false, "error": error}`` with ``status``."""
        self._failures.append({"method": method, "error": error, "times": times, "status": status})

    def hang(self, method: str, seconds: float, *, landed: bool, channel: str | None = None, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` (in ``channel``) get their answer only after ``seconds``.

        ``landed``: the call takes effect first (only the answer is late, as when a
        client times out on a call Slack carried out); else it never takes effect.
        """
        self._hangs.append({"method": method, "channel": channel, "seconds": seconds, "landed": landed,
                            "times": times})

    def delete(self, channel_id: str, ts: str) -> None:
        """Someone deletes a message: later calls on its ts answer ``message_not_found``."""
        message = self.channel(channel_id).find(ts)
        if message is not None:
            message.state = "vanished"

    async def take_socket_mode_down(self) -> None:
        """A Socket Mode outage: the open websocket closes and new ones are refused with 503 (counted in
        ``refused_connections``) until :meth:`bring_socket_mode_back`; slack_sdk keeps retrying."""
        self.socket_mode_down = True
        await self.drop_connection()

    def bring_socket_mode_back(self) -> None:
        """The outage ends: the next Socket Mode connection is accepted (and says hello)."""
        self.socket_mode_down = False

    async def drop_connection(self) -> None:
        """The websocket breaks without a word (a network blip): the client must reconnect by itself."""
        if self._sockets:
            await self._sockets[-1].close()

    def expire_streams(self) -> None:
        """Every live stream ends now, as Slack does to one older than about five minutes."""
        for channel in self.channels.values():
            for message in channel.messages:
                if message.state == "streaming":
                    message.state = "expired"

    # ------------------------------------------------------------------ the Web API

    async def _api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        params: dict[str, Any] = dict(request.query)
        raw = await request.read()
        if raw:
            ctype = request.headers.get("Content-Type", "")
            if "json" in ctype:
                params.update(json.loads(raw))
            else:
                params.update(dict(parse_qsl(raw.decode())))
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip() or params.pop("token", "")
        call = Call(method, {k: v for k, v in params.items() if k != "token"}, time.monotonic())
        self.calls.append(call)
        hang = self._take_hang(method, call.params)
        if hang is not None and not hang["landed"]:
            await asyncio.sleep(hang["seconds"])
            call.status = 504
            return web.json_response({"ok": False, "error": "request_timeout"}, status=504)
        status, answer, headers = self._answer(method, token, call.params)
        call.answer, call.status = answer, status
        if hang is not None:
            await asyncio.sleep(hang["seconds"])
        return web.json_response(answer, status=status, headers=headers)

    def _take_hang(self, method: str, p: dict[str, Any]) -> dict[str, Any] | None:
        for rule in self._hangs:
            if rule["times"] > 0 and rule["method"] == method and rule["channel"] in (None, _channel_of(p)):
                rule["times"] -= 1
                return rule
        return None

    async def _upload(self, request: web.Request) -> web.StreamResponse:
        """The upload URL: the file's bytes, raw or as multipart (a ``filename`` or ``file`` part)."""
        file_id = self._upload_tokens.get(request.match_info["token"])
        if file_id is None:
            return web.Response(status=404, text="upload URL not found or expired")
        file = self.files[file_id]
        if request.content_type.startswith("multipart/"):
            data = b""
            async for part in await request.multipart():
                if isinstance(part, aiohttp.BodyPartReader) and part.name in ("filename", "file"):
                    data = bytes(await part.read())
        else:
            data = await request.read()
        self.calls.append(Call("upload", {"file_id": file_id, "bytes": len(data)}, time.monotonic()))
        if self.upload_failures:
            return web.Response(status=self.upload_failures.pop(0), text="upload failed")
        if file.completed:
            return web.Response(status=400, text="this file was already completed")
        if len(data) != file.length:
            self.violations.append(f"{file_id}: {len(data)} bytes uploaded for a declared length of {file.length}")
            return web.Response(status=400, text=f"expected {file.length} bytes, got {len(data)}")
        file.data = data
        return web.Response(status=200, text=f"OK - {len(data)}")

    def _answer(self, method: str, token: str, p: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        wanted = self.app_token if method == "apps.connections.open" else self.bot_token
        if token != wanted:
            return 200, {"ok": False, "error": "invalid_auth" if token else "not_authed"}, {}
        injected = self._take_injected(method, _channel_of(p), p)
        if injected is not None:
            if injected["shape"] == "ok_false":
                return 200, {"ok": False, "error": "rate_limited"}, {}
            seconds = injected["retry_after"]
            return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(int(math.ceil(seconds)))}
        bucket = self._limits.get(method)
        if bucket is not None:
            wait = bucket.take()
            if wait > 0:
                return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(int(math.ceil(wait)))}
        for failure in self._failures:
            if failure["method"] == method and failure["times"] > 0:
                failure["times"] -= 1
                return failure["status"], {"ok": False, "error": failure["error"]}, {}
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return 200, {"ok": False, "error": "unknown_method"}, {}
        try:
            return 200, {"ok": True, **handler(p)}, {}
        except _SlackError as exc:
            return 200, {"ok": False, "error": exc.error}, {}

    def _take_injected(self, method: str, channel: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        """The first injected rate limit matching this call (``channel``: its channel or channel_id)."""
        for rule in self._injected:
            if rule["times"] <= 0:
                continue
            if rule["method"] not in (None, method) or rule["channel"] not in (None, channel):
                continue
            if rule.get("when") is not None and not rule["when"](params):
                continue
            if rule["method"] is None and method not in METHODS_WITH_CHANNEL:
                continue
            rule["times"] -= 1
            return rule
        return None

    def _m_auth_test(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"url": "https://hermes-test.slack.com/", "team": "Hermes Test", "user": "hermes",
                "team_id": self.team_id, "user_id": self.bot_user_id, "bot_id": self.bot_id,
                "is_enterprise_install": False}

    def _m_apps_connections_open(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"url": f"ws://127.0.0.1:{self.port}/socket-mode?ticket={next(self._ids)}"}

    def _m_chat_postMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(p)
        text = _text_of(p)
        if text is None:
            raise _SlackError("no_text")
        if len(text) > (MARKDOWN_LIMIT if "markdown_text" in p else POST_LIMIT):
            raise _SlackError("msg_too_long")
        try:
            Blocks.parse(p.get("blocks"))  # refused before anything is posted
        except BlockError as exc:
            raise _SlackError(str(exc)) from None
        message = self._post(channel, text, p.get("thread_ts"))
        self.blocks.set(message.ts, p.get("blocks"), updating=False)
        return {"channel": channel.id, "ts": message.ts, "message": {"text": text, "ts": message.ts}}

    def _m_chat_postEphemeral(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(p)
        text = _text_of(p)
        if text is None:
            raise _SlackError("no_text")
        if not p.get("user"):
            raise _SlackError("user_not_in_channel")
        self.blocks.ephemeral.append((channel.id, str(p["user"]), text))
        return {"message_ts": self._next_ts()}

    def _m_chat_update(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(p)
        message = self._bot_message(channel, p)
        text = _text_of(p)
        if text is None:
            raise _SlackError("no_text")
        if len(text) > self.update_limit:
            raise _SlackError("msg_too_long")
        self._expire_old_streams()
        if message.state == "streaming":
            raise _SlackError("streaming_state_conflict")
        try:
            self.blocks.set(message.ts, p.get("blocks"), updating=True)
        except BlockError as exc:
            raise _SlackError(str(exc)) from None
        message.show(text)
        self._echo({"type": "message", "subtype": "message_changed", "channel": channel.id,
                    "message": {"type": "message", "user": self.bot_user_id, "bot_id": self.bot_id, "text": text,
                                "ts": message.ts}, "ts": self._next_ts(), "hidden": True})
        return {"channel": channel.id, "ts": message.ts, "text": text}

    def _m_chat_startStream(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(p)
        if not p.get("thread_ts"):
            raise _SlackError("invalid_arguments")
        if self.start_stream_error is not None:
            raise _SlackError(self.start_stream_error)
        text = _text_of(p) or ""
        if len(text) > MARKDOWN_LIMIT:
            raise _SlackError("msg_too_long")
        message = self._post(channel, text, p["thread_ts"], echo=False)
        message.state, message.started_at = "streaming", time.monotonic()
        if channel.kind != "im" and not (p.get("recipient_user_id") and p.get("recipient_team_id")):
            message.state = "vanished"
            self.violations.append(f"{channel.id}/{message.ts}: a stream in a channel without recipient_user_id "
                                   "and recipient_team_id disappears")
        return {"channel": channel.id, "ts": message.ts}

    def _m_chat_appendStream(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(p)
        message = self._live_stream(channel, p)
        text = _text_of(p)
        if not text:
            raise _SlackError("no_text")
        if len(message.text + text) > MARKDOWN_LIMIT:
            raise _SlackError("msg_too_long")
        message.show(message.text + text)
        return {"channel": channel.id, "ts": message.ts}

    def _m_chat_stopStream(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(p)
        message = self._live_stream(channel, p)
        text = _text_of(p)
        if text:
            message.show(message.text + text)
        message.state = "stopped"
        self._echo({"type": "message", "channel": channel.id, "user": self.bot_user_id, "bot_id": self.bot_id,
                    "text": message.text, "ts": message.ts, "thread_ts": message.thread_ts,
                    "channel_type": channel.kind})
        return {"channel": channel.id, "ts": message.ts, "message": {"text": message.text, "ts": message.ts}}

    def _m_files_info(self, p: dict[str, Any]) -> dict[str, Any]:
        file_id = str(p.get("file") or "")
        posted = self.shared.posted.get(file_id)
        if posted is None or posted.deleted:
            raise _SlackError("file_not_found")
        return {"file": self.shared.info(file_id), "comments": [], "response_metadata": {"next_cursor": ""}}

    def _m_files_getUploadURLExternal(self, p: dict[str, Any]) -> dict[str, Any]:
        filename = p.get("filename")
        if not isinstance(filename, str) or not filename.strip():
            raise _SlackError("invalid_arguments")
        try:
            length = int(p.get("length", ""))
        except (TypeError, ValueError):
            raise _SlackError("invalid_arguments") from None
        if length <= 0:
            raise _SlackError("missing_argument")
        if length > MAX_FILE_BYTES:
            raise _SlackError("file_upload_size_restricted")
        if len(str(p.get("alt_txt") or "")) > ALT_TEXT_LIMIT:
            raise _SlackError("alt_txt_too_large")
        file = SlackFile(f"F0{self._run}{next(self._ids):06d}", filename, length)
        self.files[file.id] = file
        token = secrets.token_urlsafe(12)
        self._upload_tokens[token] = file.id
        return {"upload_url": f"http://127.0.0.1:{self.port}/upload/v1/{token}", "file_id": file.id}

    def _m_files_completeUploadExternal(self, p: dict[str, Any]) -> dict[str, Any]:
        try:
            listed = json.loads(p["files"]) if isinstance(p.get("files"), str) else p.get("files")
        except (KeyError, ValueError):
            raise _SlackError("invalid_arguments") from None
        if not isinstance(listed, list) or not listed or not all(isinstance(f, dict) for f in listed):
            raise _SlackError("invalid_arguments")
        shared: list[SlackFile] = []
        for entry in listed:
            file = self.files.get(str(entry.get("id", "")))
            if file is None or file.data is None or file.completed:  # unknown, never uploaded, or done
                raise _SlackError("file_not_found")
            shared.append(file)
        channel_id = p.get("channel_id")
        channel = self._channel({"channel": channel_id}) if channel_id else None
        comment = p.get("initial_comment") or ""
        if len(comment) > POST_LIMIT:
            raise _SlackError("msg_too_long")
        thread_ts = p.get("thread_ts") or None
        if thread_ts and channel is None:
            raise _SlackError("invalid_arguments")
        if thread_ts and channel is not None and channel.find(thread_ts) is None:
            raise _SlackError("invalid_thread_ts")
        for file, entry in zip(shared, listed):
            file.completed, file.title = True, str(entry.get("title") or file.filename)
        if channel is not None:  # without a channel the files stay private: nobody sees them
            label = " ".join(f"[{f.kind}: {f.filename}]" for f in shared) + (f" {comment}" if comment else "")
            message = self._post(channel, label, thread_ts, echo=False)
            message.files = shared
            self._echo({"type": "message", "subtype": "file_share", "channel": channel.id, "user": self.bot_user_id,
                        "bot_id": self.bot_id, "text": comment, "ts": message.ts, "thread_ts": thread_ts,
                        "channel_type": channel.kind, "files": [{"id": f.id, "name": f.filename} for f in shared]})
        return {"files": [{"id": f.id, "name": f.filename, "title": f.title, "size": len(f.data or b""),
                           "mimetype": mimetypes.guess_type(f.filename)[0] or "application/octet-stream"}
                          for f in shared]}

    # -- helpers of the methods

    def _m_reactions_add(self, p: dict[str, Any]) -> dict[str, Any]:
        """The bot reacts to a message (a person's or its own): ``name`` without colons."""
        channel = self._channel(p)
        message = channel.find(str(p.get("timestamp", "")))
        if message is None or message.state == "vanished":
            raise _SlackError("message_not_found")
        name = str(p.get("name") or "")
        if not name or ":" in name or " " in name or not name.isascii():
            raise _SlackError("invalid_name")
        if name in message.reactions:
            raise _SlackError("already_reacted")
        message.reactions.append(name)
        self.reaction_log.append((channel.id, message.ts, name, time.monotonic()))
        return {}

    def _m_conversations_history(self, p: dict[str, Any]) -> dict[str, Any]:
        """A channel's messages (not thread replies, but broadcasts), newest first, a page at a time."""
        channel = self._channel(p)
        shown = [m for m in channel.messages if m.state != "vanished"
                 and (m.thread_ts in (None, m.ts) or m.subtype == "thread_broadcast")]
        return self._page(channel, shown, p, newest_first=True)

    def _m_conversations_replies(self, p: dict[str, Any]) -> dict[str, Any]:
        """A thread: its parent, then its replies oldest first, a page at a time."""
        channel = self._channel(p)
        parent = channel.find(str(p.get("ts") or ""))
        if parent is None or parent.state == "vanished":
            raise _SlackError("thread_not_found")
        replies = [m for m in channel.messages if m.thread_ts == parent.ts and m.ts != parent.ts
                   and m.state != "vanished"]
        answer = self._page(channel, replies, p, newest_first=False)
        if "cursor" not in p:
            answer["messages"].insert(0, self._message_json(parent))
        return answer

    def _page(self, channel: Channel, messages: list[Message], p: dict[str, Any], *,
              newest_first: bool) -> dict[str, Any]:
        try:
            limit = int(p.get("limit") or 100)
            oldest, latest = float(p.get("oldest") or 0), float(p.get("latest") or time.time() + 1e6)
        except ValueError:
            self.violations.append(f"history with {p!r}")
            raise _SlackError("invalid_arguments") from None
        if limit < 1:
            raise _SlackError("invalid_limit")
        limit = min(limit, MAX_HISTORY_LIMIT, self.history_page)
        inclusive = str(p.get("inclusive", "")).lower() in ("1", "true")
        chosen = sorted((m for m in messages if (oldest <= float(m.ts) if inclusive else oldest < float(m.ts))
                         and (float(m.ts) <= latest if inclusive else float(m.ts) < latest)),
                        key=lambda m: float(m.ts), reverse=newest_first)
        start = _cursor_index(p.get("cursor"))
        page = chosen[start:start + limit]
        more = start + limit < len(chosen)
        return {"messages": [self._message_json(m) for m in page], "has_more": more, "pin_count": 0,
                "response_metadata": {"next_cursor": _cursor(start + limit) if more else ""}}

    def _message_json(self, message: Message) -> dict[str, Any]:
        body: dict[str, Any] = {"type": "message", "user": message.user, "text": message.text, "ts": message.ts,
                                "team": self.team_id}
        if message.thread_ts:
            body["thread_ts"] = message.thread_ts
        if message.subtype:
            body["subtype"] = message.subtype
        body.update(message.extra)
        if message.bot:
            body.update(bot_id=self.bot_id, app_id="A0HERMES",
                        bot_profile={"id": self.bot_id, "app_id": "A0HERMES", "name": "hermes"})
        return body

    def _channel(self, p: dict[str, Any]) -> Channel:
        channel_id = p.get("channel")
        if not channel_id or channel_id not in self.channels:
            raise _SlackError("channel_not_found")
        return self.channels[channel_id]

    def _bot_message(self, channel: Channel, p: dict[str, Any]) -> Message:
        message = channel.find(str(p.get("ts", "")))
        if message is None or message.state == "vanished":
            raise _SlackError("message_not_found")
        if not message.bot:
            raise _SlackError("cant_update_message")
        return message

    def _live_stream(self, channel: Channel, p: dict[str, Any]) -> Message:
        message = self._bot_message(channel, p)
        self._expire_old_streams()
        if message.state != "streaming":
            raise _SlackError("message_not_in_streaming_state")
        return message

    def _post(self, channel: Channel, text: str, thread_ts: Any, *, echo: bool = True) -> Message:
        message = Message(self._next_ts(), self.bot_user_id, "", thread_ts=thread_ts or None, bot=True)
        message.show(text)
        channel.messages.append(message)
        if echo:
            self._echo({"type": "message", "channel": channel.id, "user": self.bot_user_id, "bot_id": self.bot_id,
                        "text": text, "ts": message.ts, "thread_ts": message.thread_ts, "channel_type": channel.kind})
        return message

    def _expire_old_streams(self) -> None:
        now = time.monotonic()
        for channel in self.channels.values():
            for message in channel.messages:
                if message.state == "streaming" and now - message.started_at > self.stream_ttl:
                    message.state = "expired"

    def _next_ts(self, age: float = 0.0) -> str:
        """A message ts as Slack makes them (Unix time, microseconds), each later than the one before;
        ``age``: one from that many seconds ago."""
        now = int((time.time() - age) * 1_000_000)
        if age > 0:
            now -= next(self._ts)  # never twice the same
        else:
            now = self._last_us = max(now, self._last_us + 1)
        return f"{now // 1_000_000}.{now % 1_000_000:06d}"

    # ------------------------------------------------------------------ people writing

    async def push_message(self, channel_id: str, text: str, *, user: str = "U0ALICE", kind: str | None = None,
                           thread_ts: str | None = None, subtype: str | None = None,
                           mention_event: bool = True, files: tuple[PersonFile, ...] = (), age: float = 0.0) -> str:
        """A person writes in a channel; Slack sends ``message`` (and ``app_mention`` when the bot is mentioned).

        Returns the message's ``ts``. In a channel, a message that mentions
        the bot brings both events, each with its own event id, as Slack does.
        ``files`` are shared with the message (``subtype: file_share``), ``text``
        their comment (:mod:`.emulator_files`: ``photo()``, ``pdf()``,
        ``voice_note()``, ``too_large()``). ``age``: sent that many seconds ago.
        """
        channel = self.channel(channel_id, kind)
        message = Message(self._next_ts(age), user, text, thread_ts=thread_ts)
        channel.messages.append(message)
        event: dict[str, Any] = {"type": "message", "channel": channel.id, "user": user, "text": text,
                                 "ts": message.ts, "event_ts": message.ts, "channel_type": channel.kind,
                                 "team": self.team_id}
        if thread_ts:
            event["thread_ts"] = thread_ts
        if files:
            subtype = subtype or "file_share"
            event["files"] = [self.shared.add(f, user) for f in files]
            event["upload"] = False
        if subtype:
            event["subtype"] = subtype
        message.subtype = subtype
        message.extra = {k: event[k] for k in ("files", "upload") if k in event}
        await self.push_event(event)
        if mention_event and channel.kind != "im" and f"<@{self.bot_user_id}>" in text \
                and subtype in (None, "file_share"):
            mention = dict(event, type="app_mention")
            mention.pop("channel_type", None)
            mention.pop("subtype", None)  # app_mention has none; the files come along
            await self.push_event(mention)
        return message.ts

    async def push_edit(self, channel_id: str, ts: str, text: str) -> str:
        """The person edits their message ``ts``: ``message_changed`` with the new and the previous text."""
        channel = self.channel(channel_id)
        message = channel.find(ts)
        if message is None:
            raise KeyError(f"no message {ts} in {channel_id}")
        before = {"type": "message", "user": message.user, "text": message.text, "ts": ts,
                  **({"thread_ts": message.thread_ts} if message.thread_ts else {})}
        message.show(text)
        now = self._next_ts()
        after = {**before, "text": text, "edited": {"user": message.user, "ts": now}}
        return await self.push_event({"type": "message", "subtype": "message_changed", "hidden": True,
                                      "channel": channel.id, "ts": now, "event_ts": now, "message": after,
                                      "previous_message": before, "channel_type": channel.kind})

    def event_payload(self, event: dict[str, Any]) -> dict[str, Any]:
        event_id = f"Ev{self._run}{next(self._ids):06d}"  # unique across emulators, as Slack's are
        return {"token": "verification-token-unused", "team_id": self.team_id, "api_app_id": "A0HERMES",
                "event": event, "type": "event_callback", "event_id": event_id, "event_time": int(time.time()),
                "authorizations": [{"team_id": self.team_id, "user_id": self.bot_user_id, "is_bot": True}],
                "is_ext_shared_channel": False}

    async def push_event(self, event: dict[str, Any]) -> str:
        """Send one event to the app (Socket Mode when connected, else HTTP); returns its event id."""
        payload = self.event_payload(event)
        event_id = payload["event_id"]
        self._payloads[event_id] = payload
        self._acked[event_id] = asyncio.Event()
        if not self._sockets and self.events_url is None:
            self.missed.append(event_id)  # nobody to tell: only the history keeps the message
            return event_id
        await self._deliver(event_id, attempt=0)
        return event_id

    async def press_button(self, channel_id: str, ts: str, label: str, *, user: str = "U0ALICE",
                           times: int = 1) -> None:
        """A person presses the button ``label`` under the bot's message: a ``block_actions`` interaction.

        ``times=2`` is a double click: the same press sent twice, before the message can change."""
        channel = self.channel(channel_id)
        message = channel.find(ts)
        assert message is not None, f"no message {ts} in {channel_id}"
        element = self.blocks.button(ts, label)
        payload = {
            "type": "block_actions", "team": {"id": self.team_id, "domain": "hermes"},
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": self.team_id},
            "api_app_id": "A0HERMES", "token": "verification-token-unused", "trigger_id": f"tr{next(self._ids)}",
            "container": {"type": "message", "message_ts": ts, "channel_id": channel.id, "is_ephemeral": False},
            "channel": {"id": channel.id, "name": channel.id},
            "message": {"type": "message", "ts": ts, "text": message.text, "user": self.bot_user_id,
                        "bot_id": self.bot_id, **({"thread_ts": message.thread_ts} if message.thread_ts else {})},
            "response_url": f"{self.base_url}/response/{next(self._ids)}",
            "actions": [{"type": "button", "action_id": element["action_id"], "block_id": "choice",
                         "text": element["text"], "value": element.get("value", ""),
                         "action_ts": f"{time.time():.6f}"}],
            "state": {"values": {}},
        }
        if not self._sockets and self.interactivity_url is None:
            raise RuntimeError("nobody to send the press to: connect in Socket Mode or set interactivity_url")
        await asyncio.gather(*(self._send_press(payload) for _ in range(times)))

    async def _send_press(self, payload: dict[str, Any]) -> None:
        if self._sockets:
            envelope = {"envelope_id": f"env-{next(self._ids)}", "type": "interactive",
                        "accepts_response_payload": False, "payload": payload}
            await self._sockets[-1].send_str(json.dumps(envelope))
            return
        assert self._session is not None and self.interactivity_url is not None
        body = urlencode({"payload": json.dumps(payload)})
        headers = {**self.sign(body), "Content-Type": "application/x-www-form-urlencoded"}
        async with self._session.post(self.interactivity_url, data=body.encode(), headers=headers) as response:
            if response.status != 200:
                self.violations.append(f"interactivity POST answered {response.status}")

    async def redeliver(self, event_id: str) -> None:
        """Slack sends the same event again (a new envelope id, or ``X-Slack-Retry-Num``)."""
        attempt = max(d.attempt for d in self.deliveries if d.event_id == event_id) + 1
        await self._deliver(event_id, attempt=attempt)

    async def wait_acked(self, event_id: str, timeout: float = 10.0) -> None:
        await asyncio.wait_for(self._acked[event_id].wait(), timeout)

    def acked(self, event_id: str) -> bool:
        return self._acked[event_id].is_set()

    def _echo(self, event: dict[str, Any]) -> None:
        if self.echo and (self._sockets or self.events_url):
            event = {k: v for k, v in event.items() if v is not None}
            self._spawn(self.push_event(event))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, event_id: str, attempt: int) -> None:
        payload = self._payloads[event_id]
        if self._sockets:
            ws = self._sockets[-1]
            envelope_id = f"env-{next(self._ids)}"
            self.deliveries.append(Delivery(event_id, attempt, envelope_id, time.monotonic()))
            envelope = {"envelope_id": envelope_id, "type": "events_api", "accepts_response_payload": False,
                        "payload": payload, "retry_attempt": attempt,
                        "retry_reason": "timeout" if attempt else ""}
            await ws.send_str(json.dumps(envelope))
            if self.ack_timeout and attempt < 3:
                self._spawn(self._redeliver_unless_acked(event_id, envelope_id, attempt))
        elif self.events_url is not None:
            delivery = Delivery(event_id, attempt, None, time.monotonic())
            self.deliveries.append(delivery)
            status, _ = await self.post_signed(json.dumps(payload), retry_num=attempt or None)
            delivery.status = status
            if 200 <= status < 300:
                delivery.acked_at = time.monotonic()
                self._acked[event_id].set()
        else:
            raise RuntimeError("nobody to deliver events to: connect in Socket Mode or set events_url")

    async def _redeliver_unless_acked(self, event_id: str, envelope_id: str, attempt: int) -> None:
        await asyncio.sleep(self.ack_timeout)
        if not any(d.envelope_id == envelope_id and d.acked_at for d in self.deliveries) and self._sockets:
            await self._deliver(event_id, attempt + 1)

    # ------------------------------------------------------------------ the Events API over HTTP

    def sign(self, body: str, timestamp: int | None = None) -> dict[str, str]:
        """The headers Slack puts on an Events API request."""
        ts = str(int(time.time()) if timestamp is None else timestamp)
        digest = hmac.new(self.signing_secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}",
                "Content-Type": "application/json"}

    async def post_signed(self, body: str, *, timestamp: int | None = None, signature: str | None = None,
                          retry_num: int | None = None) -> tuple[int, str]:
        """POST ``body`` to ``events_url``, signed (or with ``signature`` forced); returns (status, text)."""
        assert self.events_url is not None and self._session is not None
        headers = self.sign(body, timestamp)
        if signature is not None:
            headers["X-Slack-Signature"] = signature
        if retry_num:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        async with self._session.post(self.events_url, data=body.encode(), headers=headers) as response:
            return response.status, await response.text()

    async def url_verification(self, challenge: str) -> tuple[int, str]:
        return await self.post_signed(json.dumps({"token": "unused", "challenge": challenge,
                                                  "type": "url_verification"}))

    # ------------------------------------------------------------------ Socket Mode

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if self.socket_mode_down:
            self.refused_connections += 1
            return web.Response(status=503, text="Service Unavailable")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._sockets.append(ws)
        self._connections += 1
        await ws.send_str(json.dumps({"type": "hello", "num_connections": len(self._sockets),
                                      "debug_info": {"host": "emulator", "approximate_connection_time": 3600},
                                      "connection_info": {"app_id": "A0HERMES"}}))
        missed, self.missed = self.missed, []
        for event_id in missed if self.retry_missed else ():
            self._spawn(self._deliver(event_id, attempt=1))
        try:
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                try:
                    data = json.loads(msg.data)
                except ValueError:
                    self.violations.append(f"socket mode: not JSON: {msg.data[:80]!r}")
                    continue
                envelope_id = data.get("envelope_id")
                for delivery in self.deliveries:
                    if delivery.envelope_id == envelope_id and delivery.acked_at is None:
                        delivery.acked_at = time.monotonic()
                        self._acked[delivery.event_id].set()
        finally:
            if ws in self._sockets:
                self._sockets.remove(ws)
        return ws

    @property
    def connections(self) -> int:
        """How many Socket Mode connections were opened so far."""
        return self._connections

    @property
    def connected(self) -> bool:
        return bool(self._sockets)

    async def wait_connected(self, count: int = 1, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not (self._sockets and self._connections >= count):
            if time.monotonic() > deadline:
                raise AssertionError(f"no Socket Mode connection #{count} after {timeout}s")
            await asyncio.sleep(0.01)

    async def send_disconnect(self, reason: str = "refresh_requested") -> None:
        """Ask the client to move to a new connection, as Slack does every few hours."""
        if self._sockets:
            await self._sockets[-1].send_str(json.dumps({"type": "disconnect", "reason": reason,
                                                         "debug_info": {"host": "emulator"}}))


class _SlackError(Exception):
    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


def with_buttons(params: dict[str, Any]) -> bool:
    """A message with buttons (an ``actions`` block): ``inject_rate_limit(..., when=with_buttons)``."""
    blocks = params.get("blocks")
    if isinstance(blocks, str):
        try:
            blocks = json.loads(blocks)
        except ValueError:
            return False
    return isinstance(blocks, list) and any(isinstance(b, dict) and b.get("type") == "actions" for b in blocks)


def _cursor(index: int) -> str:
    """An opaque next_cursor, as Slack's look (base64)."""
    import base64

    return base64.b64encode(f"next_ts:{index}".encode()).decode()


def _cursor_index(cursor: Any) -> int:
    import base64

    if not cursor:
        return 0
    try:
        return int(base64.b64decode(str(cursor)).decode().rsplit(":", 1)[1])
    except (ValueError, IndexError):
        raise _SlackError("invalid_cursor") from None


def _channel_of(p: dict[str, Any]) -> Any:
    """The channel a call is about: ``channel``, or ``channel_id`` (files.completeUploadExternal)."""
    return p.get("channel") or p.get("channel_id")


def _text_of(p: dict[str, Any]) -> str | None:
    """``markdown_text``, else ``chunks`` of type markdown_text, else ``text``."""
    if p.get("markdown_text") is not None:
        return str(p["markdown_text"])
    chunks = p.get("chunks")
    if isinstance(chunks, str):
        chunks = json.loads(chunks)
    if chunks:
        return "".join(c.get("text", "") for c in chunks if c.get("type") == "markdown_text")
    if p.get("text") is not None:
        return str(p["text"])
    return None
