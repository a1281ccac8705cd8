"""A strict Mattermost server on 127.0.0.1: the REST routes the plugin uses, and the websocket.

Run it by hand with ``python -m hermes_mattermost.emulator`` (it prints its
URL and the bot's token). Tests start one per module or test
(``async with MattermostEmulator() as mm``), make people post
(:meth:`post_as`), click buttons (:meth:`click`) and read the screen
(:meth:`screen`). What it refuses, as Mattermost does (mattermost/mattermost
``server/channels/api4/post.go``, ``app/ratelimit.go``,
``public/model/post.go``; ``/work/shared/PLATFORM_FACTS.md``):

* a request without a valid ``Authorization: Bearer`` token: 401
  ``api.context.session_expired.app_error``;
* a post longer than ``MaxPostSize`` runes (16,383): 400
  ``model.post.is_valid.message_length.app_error``; more than 5 files;
  props over 800,000 runes; a ``root_id`` that is unknown, in another
  channel or not a root: 400 ``api.post.create_post.root_id.app_error``;
  an unknown channel: 403;
* a patch of an unknown post or of another user's post: 403
  ``api.context.permissions.app_error`` (``patchPost`` answers a missing
  post with the permission error, not 404);
* a reaction for another user, on an unknown post, or with a bad emoji
  name: 403/400; a file over ``MaxFileSize``: 413; an unknown file: 404;
* ``GET /config/client`` without ``format=old``: 501;
* the rate limit of ``RateLimitSettings`` (GCRA per token, ``PerSec`` 10,
  ``MaxBurst`` 100 by default; :mod:`.emulator_ratelimit`), with its
  headers on every answer and 429 ``limit exceeded`` past it. A call made
  before a 429's wait has passed is recorded in :attr:`violations`.

The websocket (``/api/v4/websocket``) answers ``authentication_challenge``
(``{"status": "OK", "seq_reply": 1}`` then ``hello``; a bad token: FAIL,
error id unverified), and broadcasts ``posted`` (``data.post`` a JSON
string, ``channel_type``, ``mentions`` a JSON string of ids) and
``post_edited`` to every authenticated socket — the bot's own posts too,
as Mattermost does. A button's integration (url, context) is kept on the
server and never broadcast (Mattermost replaces it with an encrypted
cookie); :meth:`click` POSTs ``PostActionIntegrationRequest`` to its URL.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from hermes_gateway.testing import serve_file, serve_locally

from .emulator_ratelimit import Gcra

BOT_TOKEN = "hermesbottoken0000000000aa"
ALICE_TOKEN = "alicetoken00000000000000aa"
BOT_ID, ALICE_ID, BOB_ID = "botuserid00000000000000000", "aliceid0000000000000000000", "bobid000000000000000000000"
TEAM_ID = "teamid00000000000000000000"
MAX_POST_SIZE = 16383
MAX_FILE_SIZE = 100 * 1024 * 1024
MAX_PROPS_RUNES = 800_000
#: What the middleware hands the route: who asked, and the JSON body it already read.
USER_KEY: web.RequestKey[Any] = web.RequestKey("mm_user", object)
BODY_KEY: web.RequestKey[Any] = web.RequestKey("mm_body", object)
_EMOJI = re.compile(r"^[a-zA-Z0-9_+\-]{1,64}$")


def new_id() -> str:
    return uuid.uuid4().hex[:26]


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class User:
    id: str
    username: str
    token: str | None = None
    is_bot: bool = False


@dataclass
class Channel:
    id: str
    type: str  # O P D G
    name: str


@dataclass
class Post:
    id: str
    channel_id: str
    user_id: str
    message: str
    root_id: str = ""
    create_at: int = 0
    update_at: int = 0
    edit_at: int = 0
    props: dict[str, Any] = field(default_factory=dict)
    file_ids: list[str] = field(default_factory=list)
    reactions: list[tuple[str, str]] = field(default_factory=list)  # (user id, emoji name)

    def wire(self, files: dict[str, "File"], *, for_clients: bool = True) -> dict[str, Any]:
        props = json.loads(json.dumps(self.props))
        if for_clients:  # Mattermost never shows an action's integration to clients
            for attachment in props.get("attachments") or []:
                for action in attachment.get("actions") or [] if isinstance(attachment, dict) else []:
                    if isinstance(action, dict):
                        action.pop("integration", None)
        infos = [files[f].info() for f in self.file_ids if f in files]
        return {"id": self.id, "create_at": self.create_at, "update_at": self.update_at, "edit_at": self.edit_at,
                "delete_at": 0, "is_pinned": False, "user_id": self.user_id, "channel_id": self.channel_id,
                "root_id": self.root_id, "original_id": "", "message": self.message, "type": "", "props": props,
                "hashtags": "", "file_ids": list(self.file_ids), "pending_post_id": "",
                "metadata": {"files": infos} if infos else {}}


@dataclass
class File:
    id: str
    name: str
    data: bytes
    mime: str
    user_id: str
    channel_id: str
    post_id: str = ""

    def info(self) -> dict[str, Any]:
        return {"id": self.id, "user_id": self.user_id, "post_id": self.post_id, "name": self.name,
                "extension": self.name.rsplit(".", 1)[-1] if "." in self.name else "", "size": len(self.data),
                "mime_type": self.mime}


@dataclass
class Call:
    method: str
    path: str
    status: int
    at: float
    channel: str | None


@dataclass
class Injected:
    status: int
    path: re.Pattern[str] | None
    channel: str | None
    retry_after: float | None = None
    hang: float = 0.0
    landed: bool = False


class MattermostEmulator:
    """One Mattermost server with a team, a bot, Alice and Bob; channels made on demand (:meth:`channel`)."""

    def __init__(self, *, per_sec: float = 10.0, max_burst: int = 100, rate_limit: bool = True,
                 max_post_size: int = MAX_POST_SIZE, max_file_size: int = MAX_FILE_SIZE) -> None:
        self.users = {u.id: u for u in (User(BOT_ID, "hermes", BOT_TOKEN, is_bot=True),
                                        User(ALICE_ID, "alice", ALICE_TOKEN), User(BOB_ID, "bob"))}
        self.channels: dict[str, Channel] = {}
        self.posts: dict[str, Post] = {}
        self.files: dict[str, File] = {}
        self.calls: list[Call] = []
        self.violations: list[str] = []
        self.ephemeral: list[tuple[str, str, str]] = []  # (channel, user, text) shown to one person
        self.typing: list[tuple[str, str]] = []
        self.action_answers: list[int] = []  # the HTTP status of each click's integration request
        self.downloads: list[tuple[str, int]] = []
        self.limiter = Gcra(per_sec, max_burst) if rate_limit else None
        self.max_post_size = max_post_size
        self.max_file_size = max_file_size
        self.refusing_sockets = False
        #: Users for whom another client on the same token (another replica) uses up the limit before each call.
        self.busy_elsewhere: set[str] = set()
        #: Where the server reaches the gateway: a button's URL has its scheme, host and port replaced by this
        #: (the gateway listens on a port the system picks, after its actions_url was configured).
        self.actions_base: str | None = None
        self._injected: list[Injected] = []
        self._wait_until: dict[str, float] = {}  # token -> loop time before which a 429 said wait
        self._sockets: list[tuple[web.WebSocketResponse, dict[str, int]]] = []
        self._runner: web.AppRunner | None = None
        self._clock = time.monotonic
        self.base_url = ""

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> "MattermostEmulator":
        app = web.Application(middlewares=[self._middleware], client_max_size=self.max_file_size + 1024 * 1024)
        r = app.router
        r.add_get("/api/v4/websocket", self._websocket)
        r.add_get("/api/v4/users/me", self._me)
        r.add_get("/api/v4/config/client", self._client_config)
        r.add_post("/api/v4/posts", self._create_post)
        r.add_put("/api/v4/posts/{post_id}/patch", self._patch_post)
        r.add_get("/api/v4/channels/{channel_id}/posts", self._channel_posts)
        r.add_post("/api/v4/files", self._upload)
        r.add_get("/api/v4/files/{file_id}", self._download)
        r.add_post("/api/v4/reactions", self._react)
        r.add_post("/api/v4/users/{user_id}/typing", self._typing)
        self._runner = await serve_locally(app)
        host, port = self._runner.addresses[0][:2]
        self.base_url = f"http://{host}:{port}"
        return self

    async def stop(self) -> None:
        for ws, _ in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> "MattermostEmulator":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ---------------------------------------------------------------- what tests do and read

    def channel(self, channel_id: str, kind: str = "O") -> Channel:
        if channel_id not in self.channels:
            self.channels[channel_id] = Channel(channel_id, kind, channel_id.lower())
        return self.channels[channel_id]

    def bot_posts(self, channel_id: str) -> list[Post]:
        return [p for p in self.posts.values() if p.channel_id == channel_id and p.user_id == BOT_ID]

    def screen(self, channel_id: str, root_id: str | None = None) -> list[str]:
        """The bot's posts' texts in the channel (in one thread, when ``root_id`` is given), oldest first."""
        return [p.message for p in self.bot_posts(channel_id) if root_id is None or p.root_id == root_id]

    def attachments(self, channel_id: str) -> list[tuple[str, bytes]]:
        return [(self.files[f].name, self.files[f].data) for p in self.bot_posts(channel_id) for f in p.file_ids]

    def buttons(self, post_id: str) -> list[str]:
        post = self.posts[post_id]
        return [a.get("name", "") for att in post.props.get("attachments") or [] for a in att.get("actions") or []]

    def count(self, status: int) -> int:
        return sum(1 for c in self.calls if c.status == status)

    def inject(self, status: int = 429, *, path: str | None = None, channel: str | None = None,
               retry_after: float | None = None, hang: float = 0.0, landed: bool = False) -> None:
        """The next matching call answers ``status`` (429 with ``Retry-After``); ``hang``: it answers after
        that many seconds, having taken effect when ``landed``."""
        self._injected.append(Injected(status, re.compile(path) if path else None, channel, retry_after, hang, landed))

    def other_client_on(self, user_id: str) -> bool:
        return user_id in self.busy_elsewhere

    def spend(self, user_id: str = BOT_ID) -> int:
        """Another client on the same token (another replica) uses up what the limiter allows now; how many."""
        if self.limiter is None:
            return 0
        spent = 0
        while not self.limiter.take(user_id, self._clock()).limited:
            spent += 1
        return spent

    async def post_as(self, user_id: str, channel_id: str, message: str, *, root_id: str = "",
                      files: list[tuple[str, bytes, str]] = ()) -> str:  # type: ignore[assignment]
        """A person posts (as if from their app): stored and broadcast as ``posted``; the post's id."""
        channel = self.channel(channel_id)
        file_ids = []
        for name, data, mime in files:
            f = File(new_id(), name, data, mime, user_id, channel_id)
            self.files[f.id] = f
            file_ids.append(f.id)
        post = self._store(Post(new_id(), channel.id, user_id, message, root_id=root_id, file_ids=file_ids))
        await self._broadcast_posted(post)
        return post.id

    async def edit_as(self, post_id: str, message: str) -> None:
        post = self.posts[post_id]
        post.message, post.edit_at = message, now_ms()
        post.update_at = post.edit_at
        await self._broadcast("post_edited", {"post": json.dumps(post.wire(self.files))}, post.channel_id)

    async def click(self, post_id: str, name: str, user_id: str) -> dict[str, Any]:
        """A person clicks the button ``name`` of a post: ``PostActionIntegrationRequest`` to its URL."""
        post = self.posts[post_id]
        action = next(a for att in post.props.get("attachments") or [] for a in att.get("actions") or []
                      if a.get("name") == name)
        integration = action["integration"]
        url = str(integration["url"])
        if self.actions_base is not None:
            url = self.actions_base + "/" + url.split("/", 3)[3] if url.count("/") >= 3 else self.actions_base
        channel = self.channels[post.channel_id]
        body = {"user_id": user_id, "user_name": self.users[user_id].username, "channel_id": channel.id,
                "channel_name": channel.name, "team_id": TEAM_ID, "team_domain": "team", "post_id": post.id,
                "trigger_id": new_id(), "type": "", "data_source": "", "context": integration.get("context") or {}}
        async with aiohttp.ClientSession() as session:
            async with session.post(url, json=body) as response:
                self.action_answers.append(response.status)
                self.last_action_answer = await response.text()
                answer = await response.json(content_type=None) if response.status == 200 else {}
        if not isinstance(answer, dict):
            answer = {}
        if answer.get("ephemeral_text"):
            self.ephemeral.append((channel.id, user_id, str(answer["ephemeral_text"])))
        update = answer.get("update")
        if isinstance(update, dict) and isinstance(update.get("message"), str):
            post.message = update["message"]
        return answer

    async def send_raw(self, frame: str) -> None:
        """A frame as is, to every authenticated socket (hostile-input tests)."""
        for ws, state in list(self._sockets):
            if state["authed"] and not ws.closed:
                try:
                    await ws.send_str(frame)
                except ConnectionError:
                    pass  # the client hung up on it (a frame over its limit)

    async def drop_sockets(self, *, refuse: bool = True) -> None:
        """Close every websocket; with ``refuse``, upgrades are answered 503 until :meth:`accept_sockets`."""
        self.refusing_sockets = refuse
        for ws, _ in list(self._sockets):
            await ws.close()

    def accept_sockets(self) -> None:
        self.refusing_sockets = False

    def connected(self) -> int:
        return sum(1 for ws, state in self._sockets if state["authed"] and not ws.closed)

    # ---------------------------------------------------------------- the middleware: auth, limits, faults

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path == "/api/v4/websocket":
            return await handler(request)
        channel = request.match_info.get("channel_id")
        token = request.headers.get("Authorization", "")
        user = self._user_of(token)
        loop_now = self._clock()
        if user is None:
            return self._log(request, channel, _error(401, "api.context.session_expired.app_error",
                                                      "Invalid or expired session, please login again."))
        body: Any = None
        if request.content_type == "application/json" and request.can_read_body:
            try:
                body = await request.json()
            except ValueError:
                return self._log(request, channel, _error(400, "api.context.invalid_body_param.app_error",
                                                          "Invalid or missing post in request body."))
            if isinstance(body, dict) and isinstance(body.get("channel_id"), str):
                channel = body["channel_id"]
        if channel is None and "post_id" in request.match_info:
            post = self.posts.get(request.match_info["post_id"])
            channel = post.channel_id if post else None
        if loop_now < self._wait_until.get(user.id, 0.0):
            self.violations.append(f"{request.method} {request.path} {self._wait_until[user.id] - loop_now:.3f}s "
                                   f"before a 429's wait ended")
        headers: dict[str, str] = {}
        if self.limiter is not None:
            if self.other_client_on(user.id):
                self.spend(user.id)  # another client on this token used up the limit just before this call
            verdict = self.limiter.take(user.id, loop_now)
            headers = verdict.headers
            if verdict.limited:
                self._wait_until[user.id] = loop_now + verdict.retry_after
                return self._log(request, channel, web.Response(status=429, text="limit exceeded\n", headers=headers))
        fault = self._fault(request, channel)
        if fault is not None and fault.status == 429:
            wait = fault.retry_after if fault.retry_after is not None else 1.0
            self._wait_until[user.id] = loop_now + wait
            return self._log(request, channel, web.Response(
                status=429, text="limit exceeded\n",
                headers={**headers, "Retry-After": str(max(1, round(wait))), "X-RateLimit-Remaining": "0"}))
        if fault is not None and not fault.hang:
            return self._log(request, channel, _error(fault.status, "api.context.permissions.app_error",
                                                      "You do not have the appropriate permissions."))
        if fault is not None and fault.hang and not fault.landed:
            await asyncio.sleep(fault.hang)  # no answer in time, and nothing happened
            return self._log(request, channel, web.Response(status=504, text="timed out"))
        request[USER_KEY], request[BODY_KEY] = user, body
        response = await handler(request)
        for name, value in headers.items():
            response.headers[name] = value
        if fault is not None and fault.hang:
            await asyncio.sleep(fault.hang)  # it took effect, but the answer comes after the client gave up
        return self._log(request, channel, response)

    def _user_of(self, header: str) -> User | None:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            return None
        return next((u for u in self.users.values() if u.token and u.token == token.strip()), None)

    def _fault(self, request: web.Request, channel: str | None) -> Injected | None:
        for fault in self._injected:
            if fault.path is not None and not fault.path.search(f"{request.method} {request.path}"):
                continue
            if fault.channel is not None and fault.channel != channel:
                continue
            self._injected.remove(fault)
            return fault
        return None

    def _log(self, request: web.Request, channel: str | None, response: web.StreamResponse) -> web.StreamResponse:
        self.calls.append(Call(request.method, request.path, response.status, self._clock(), channel))
        return response

    # ---------------------------------------------------------------- REST routes

    async def _me(self, request: web.Request) -> web.Response:
        user: User = request[USER_KEY]
        return web.json_response({"id": user.id, "username": user.username, "is_bot": user.is_bot,
                                  "roles": "system_user", "delete_at": 0})

    async def _client_config(self, request: web.Request) -> web.Response:
        if request.query.get("format") != "old":
            return _error(501, "api.config.client.old_format.app_error",
                          "New format for the client configuration is not supported yet.")
        return web.json_response({"MaxPostSize": str(self.max_post_size), "Version": "10.5.0",
                                  "MaxFileSize": str(self.max_file_size)})

    async def _create_post(self, request: web.Request) -> web.Response:
        user: User = request[USER_KEY]
        body = request[BODY_KEY]
        if not isinstance(body, dict) or not isinstance(body.get("channel_id"), str):
            return _error(400, "api.context.invalid_body_param.app_error", "Invalid or missing post in request body.")
        channel = self.channels.get(body["channel_id"])
        if channel is None:
            return _error(403, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
        message = body.get("message", "")
        props = body.get("props") or {}
        file_ids = body.get("file_ids") or []
        root_id = body.get("root_id") or ""
        if not isinstance(message, str) or not isinstance(props, dict) or not isinstance(file_ids, list) \
                or not isinstance(root_id, str):
            return _error(400, "api.context.invalid_body_param.app_error", "Invalid or missing post in request body.")
        problem = self._too_long(message) or self._props_too_large(props)
        if problem:
            return problem
        if len(file_ids) > 5 or any(f not in self.files or self.files[f].user_id != user.id or self.files[f].post_id
                                    for f in file_ids):
            return _error(400, "model.post.is_valid.file_ids.app_error", "Invalid file ids.")
        if root_id:
            root = self.posts.get(root_id)
            if root is None or root.channel_id != channel.id or root.root_id:
                return _error(400, "api.post.create_post.root_id.app_error", "Invalid RootId parameter.")
        if not message and not file_ids and not props:
            return _error(400, "model.post.is_valid.msg.app_error", "Invalid message.")
        if user.is_bot:
            props = {**props, "from_bot": "true"}
        post = self._store(Post(new_id(), channel.id, user.id, message, root_id=root_id, props=props,
                                file_ids=list(file_ids)))
        for f in file_ids:
            self.files[f].post_id = post.id
        await self._broadcast_posted(post)
        return web.json_response(post.wire(self.files), status=201)

    async def _patch_post(self, request: web.Request) -> web.Response:
        user: User = request[USER_KEY]
        body = request[BODY_KEY]
        post = self.posts.get(request.match_info["post_id"])
        if post is None or post.user_id != user.id:  # patchPost: a missing post is a permission error too
            return _error(403, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
        if not isinstance(body, dict):
            return _error(400, "api.context.invalid_body_param.app_error", "Invalid or missing post in request body.")
        if "message" in body:
            if not isinstance(body["message"], str):
                return _error(400, "api.context.invalid_body_param.app_error", "Invalid or missing post.")
            problem = self._too_long(body["message"])
            if problem:
                return problem
            post.message = body["message"]
        if "props" in body:
            if not isinstance(body["props"], dict) or self._props_too_large(body["props"]):
                return _error(400, "model.post.is_valid.props.app_error", "Invalid props.")
            post.props = {**body["props"], **({"from_bot": "true"} if user.is_bot else {})}
        post.edit_at = post.update_at = max(now_ms(), post.update_at + 1)
        await self._broadcast("post_edited", {"post": json.dumps(post.wire(self.files))}, post.channel_id)
        return web.json_response(post.wire(self.files))

    async def _channel_posts(self, request: web.Request) -> web.Response:
        channel = self.channels.get(request.match_info["channel_id"])
        if channel is None:
            return _error(403, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
        try:
            since = int(request.query.get("since", "0"))
        except ValueError:
            return _error(400, "api.context.invalid_url_param.app_error", "Invalid or missing since parameter.")
        found = [p for p in self.posts.values() if p.channel_id == channel.id and p.update_at > since]
        found.sort(key=lambda p: p.create_at, reverse=True)
        return web.json_response({"order": [p.id for p in found], "posts": {p.id: p.wire(self.files) for p in found},
                                  "next_post_id": "", "prev_post_id": ""})

    async def _upload(self, request: web.Request) -> web.Response:
        user: User = request[USER_KEY]
        if request.content_length is not None and request.content_length > self.max_file_size + 64 * 1024:
            return _error(413, "api.file.upload_file.too_large.app_error", "Unable to upload file. File is too large.")
        reader = await request.multipart()
        channel_id, parts = None, []
        async for part in reader:
            if not isinstance(part, aiohttp.BodyPartReader):
                return _error(400, "api.file.upload_file.read_request.app_error", "Unable to read the request.")
            if part.name == "channel_id":
                channel_id = (await part.text()).strip()
            elif part.name == "files":
                data = await part.read()
                if len(data) > self.max_file_size:
                    return _error(413, "api.file.upload_file.too_large.app_error",
                                  "Unable to upload file. File is too large.")
                parts.append((part.filename or "file", bytes(data), part.headers.get("Content-Type", "")))
        if channel_id is None or channel_id not in self.channels:
            return _error(400, "api.file.upload_file.incorrect_channelId.app_error", "Unable to upload the file.")
        if not parts:
            return _error(400, "api.file.upload_file.incorrect_number_of_files.app_error", "No file.")
        infos = []
        for name, data, mime in parts:
            f = File(new_id(), name, data, mime or "application/octet-stream", user.id, channel_id)
            self.files[f.id] = f
            infos.append(f.info())
        return web.json_response({"file_infos": infos, "client_ids": []}, status=201)

    async def _download(self, request: web.Request) -> web.StreamResponse:
        f = self.files.get(request.match_info["file_id"])
        if f is None:
            return _error(404, "app.file_info.get.app_error", "Unable to find the file.")
        return await serve_file(request, f.data, sent=lambda n: self.downloads.append((f.id, n)),
                                content_type=f.mime)

    async def _react(self, request: web.Request) -> web.Response:
        user: User = request[USER_KEY]
        body = request[BODY_KEY]
        if not isinstance(body, dict):
            return _error(400, "api.context.invalid_body_param.app_error", "Invalid or missing reaction.")
        if body.get("user_id") != user.id:
            return _error(403, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
        post = self.posts.get(str(body.get("post_id")))
        if post is None:
            return _error(403, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
        name = body.get("emoji_name")
        if not isinstance(name, str) or not _EMOJI.match(name):
            return _error(400, "model.reaction.is_valid.emoji_name.app_error", "Invalid emoji name.")
        if (user.id, name) not in post.reactions:
            post.reactions.append((user.id, name))
        return web.json_response({"user_id": user.id, "post_id": post.id, "emoji_name": name,
                                  "create_at": now_ms()}, status=201)

    async def _typing(self, request: web.Request) -> web.Response:
        user: User = request[USER_KEY]
        body = request[BODY_KEY]
        if request.match_info["user_id"] != user.id:
            return _error(403, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
        if not isinstance(body, dict) or body.get("channel_id") not in self.channels:
            return _error(400, "api.context.invalid_body_param.app_error", "Invalid or missing channel_id.")
        self.typing.append((body["channel_id"], str(body.get("parent_id") or "")))
        return web.json_response({"status": "OK"})

    # ---------------------------------------------------------------- the websocket

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        if self.refusing_sockets:
            return web.Response(status=503, text="unavailable")
        ws = web.WebSocketResponse(autoping=True, heartbeat=None)
        await ws.prepare(request)
        state = {"authed": 0, "seq": 0}
        entry = (ws, state)
        self._sockets.append(entry)
        try:
            async for message in ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    continue
                try:
                    frame = json.loads(message.data)
                except ValueError:
                    continue
                if not isinstance(frame, dict):
                    continue
                seq = frame.get("seq", 0)
                if frame.get("action") == "authentication_challenge":
                    token = (frame.get("data") or {}).get("token") if isinstance(frame.get("data"), dict) else None
                    user = self._user_of(f"Bearer {token}") if isinstance(token, str) else None
                    if user is None:
                        await ws.send_json({"status": "FAIL", "seq_reply": seq, "error": {
                            "id": "api.web_socket_router.not_authenticated.app_error", "message": "not authenticated"}})
                        continue
                    state["authed"] = 1
                    await ws.send_json({"status": "OK", "seq_reply": seq})
                    await self._send(ws, state, "hello", {"server_version": "10.5.0", "connection_id": new_id()}, "")
                elif not state["authed"]:
                    await ws.send_json({"status": "FAIL", "seq_reply": seq, "error": {
                        "id": "api.web_socket_router.not_authenticated.app_error", "message": "not authenticated"}})
        finally:
            self._sockets.remove(entry)
        return ws

    async def _send(self, ws: web.WebSocketResponse, state: dict[str, int], event: str, data: dict[str, Any],
                    channel_id: str) -> None:
        frame = {"event": event, "data": data, "seq": state["seq"],
                 "broadcast": {"omit_users": None, "user_id": "", "channel_id": channel_id, "team_id": TEAM_ID}}
        state["seq"] += 1
        try:
            await ws.send_json(frame)
        except (ConnectionError, RuntimeError):
            pass

    async def _broadcast(self, event: str, data: dict[str, Any], channel_id: str) -> None:
        for ws, state in list(self._sockets):
            if state["authed"] and not ws.closed:
                await self._send(ws, state, event, data, channel_id)

    async def _broadcast_posted(self, post: Post) -> None:
        channel = self.channels[post.channel_id]
        author = self.users[post.user_id]
        data: dict[str, Any] = {"channel_display_name": channel.name, "channel_name": channel.name,
                                "channel_type": channel.type, "post": json.dumps(post.wire(self.files)),
                                "sender_name": f"@{author.username}", "set_online": True, "team_id": TEAM_ID}
        named = {u.id for u in self.users.values()
                 if re.search(rf"(?<![\w@])@{re.escape(u.username)}\b", post.message, re.IGNORECASE)}
        if channel.type == "D":
            named |= {BOT_ID} - {post.user_id}
        if named:
            data["mentions"] = json.dumps(sorted(named))
        if post.file_ids:
            data["otherFile"] = "true"
        await self._broadcast("posted", data, channel.id)

    # ---------------------------------------------------------------- helpers

    def _store(self, post: Post) -> Post:
        last = max((p.create_at for p in self.posts.values()), default=0)
        post.create_at = post.update_at = max(now_ms(), last + 1)  # distinct, increasing: `since` is exact
        self.posts[post.id] = post
        return post

    def _too_long(self, message: str) -> web.Response | None:
        if len(message) > self.max_post_size:
            return _error(400, "model.post.is_valid.message_length.app_error",
                          f"Invalid Message property length: {len(message)} > {self.max_post_size}.")
        return None

    def _props_too_large(self, props: dict[str, Any]) -> web.Response | None:
        if len(json.dumps(props, ensure_ascii=False)) > MAX_PROPS_RUNES:
            return _error(400, "model.post.is_valid.props.app_error", "Invalid props.")
        return None


def _error(status: int, error_id: str, message: str) -> web.Response:
    return web.json_response({"id": error_id, "message": message, "detailed_error": "", "request_id": new_id(),
                              "status_code": status, "is_oauth": False}, status=status)


async def _main() -> None:  # pragma: no cover - by hand
    async with MattermostEmulator() as emulator:
        emulator.channel("town-square", "O")
        emulator.channel("dm-alice", "D")
        print(f"Mattermost emulator at {emulator.base_url} (bot token {BOT_TOKEN}); Ctrl-C stops it", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    asyncio.run(_main())
