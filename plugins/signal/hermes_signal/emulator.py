"""A strict stand-in for a ``signal-cli -a +NUMBER daemon --http`` on 127.0.0.1, and the phones around it.

What it serves, as signal-cli 0.14 does (``http/HttpServerHandler.java``,
``http/SseEventBuffer.java``, ``jsonrpc/SignalJsonRpcCommandHandler.java``,
``man/signal-cli-jsonrpc.5.adoc``):

- ``POST /api/v1/rpc``: one JSON-RPC 2.0 request (or a batch); a body that is
  not ``Content-Type: application/json`` is a 415; the answer is a 200 with
  ``{"jsonrpc":"2.0","id":…,"result"|"error"}``, a notification (no id) a 201.
  Errors use signal-cli's codes: -32700 parse error, -32600 invalid request,
  -32601 "Method not implemented", -32602 invalid params, -32603 internal,
  -1 user error, -3 IO error, -5 rate limit ("Failed to send message due to
  rate limiting", ``error.data.response`` the send result whose results say
  ``RATE_LIMIT_FAILURE`` with ``retryAfterSeconds``, as 0.14.3+ reports the
  server's Retry-After).
- ``GET /api/v1/events``: Server-Sent Events ``id:``/``event:receive``/
  ``data:{"envelope":…,"account":…}``; the last 1000 events are kept, and a
  client reconnecting with ``Last-Event-ID`` first gets what it missed (an id
  of an earlier run: everything kept).
- ``GET /api/v1/check``: 200.

Methods: ``send``, ``sendReaction``, ``sendTyping``, ``getAttachment``,
``getUserStatus``, ``version``; anything else is -32601.

Where it is STRICTER than signal-cli, on purpose, so a test sees a mistake the
real daemon would pass on silently (each is also in :attr:`violations`):

- an unknown parameter is -32602 (signal-cli ignores it: a misspelt
  ``editTimestamp`` would send a second message instead of an edit);
- an edit (``editTimestamp``) of a message that is not the bot's in that chat,
  or past Signal's 10 edits of one message (Signal-Android
  ``MessageConstraintsUtil.MAX_EDIT_COUNT``, Signal-Desktop
  ``MESSAGE_MAX_EDIT_COUNT``), is -1: signal-cli sends it and the recipients'
  apps drop it;
- a reaction on a message the chat does not have is -1 (apps drop it);
- a text over 2000 UTF-8 bytes is recorded as a violation (signal-cli cuts it
  at 2000 bytes and uploads the whole as a long-text attachment, so every
  long edit costs an upload: the plugin declares 2000 and must never pass it).

The screen: each chat (a person's number, or ``group:<groupId>``) keeps its
messages top to bottom, the bot's with their edits applied, and the bot's
reactions. People are driven from the test: :meth:`push_message`,
:meth:`push_edit`, :meth:`push_reaction`, :meth:`push_raw` (any bytes as an
SSE event, for hostile-input tests). :meth:`inject_rate_limit` makes the next
call answer -5; :meth:`hang` delays the next send past the client's timeout;
:meth:`take_down`/:meth:`bring_back` stop and restart the daemon on its port.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import itertools
import json
import re
import time
import uuid as uuidlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from hermes_gateway.testing import serve_locally

ACCOUNT = "+15550000001"
ACCOUNT_UUID = "0b0b0b0b-1111-4222-8333-444455556666"
VERSION = "0.14.6"
#: Signal's edit limit per message (Android MAX_EDIT_COUNT, Desktop MESSAGE_MAX_EDIT_COUNT).
MAX_EDITS = 10
#: signal-cli's MAX_MESSAGE_SIZE_BYTES: past it the text goes as a long-text attachment.
MAX_TEXT_BYTES = 2000
#: SseEventBuffer.MAX_EVENTS.
KEPT_EVENTS = 1000

SEND_PARAMS = {"recipient", "recipients", "groupId", "groupIds", "noteToSelf", "notifySelf", "message",
               "attachment", "attachments", "mention", "mentions", "textStyle", "textStyles", "quoteTimestamp",
               "quoteAuthor", "quoteMessage", "quoteMention", "quoteMentions", "quoteTextStyle",
               "quoteTextStyles", "quoteAttachment", "quoteAttachments", "editTimestamp", "noUrgent", "sticker",
               "previewUrl", "previewTitle", "previewDescription", "previewImage", "storyTimestamp",
               "storyAuthor", "viewOnce", "endSession", "username", "usernames", "account"}
REACTION_PARAMS = {"recipient", "recipients", "groupId", "groupIds", "noteToSelf", "emoji", "targetAuthor",
                   "targetTimestamp", "remove", "story", "account"}
TYPING_PARAMS = {"recipient", "recipients", "groupId", "groupIds", "stop", "account"}
NUMBER = re.compile(r"^\+[1-9]\d{5,14}$")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
DATA_URI = re.compile(r"^data:([\w.+-]+/[\w.+-]+)((?:;[\w-]+=[^;,]*)*);base64,(.*)$", re.S)


class RpcError(Exception):
    """A JSON-RPC error the emulator answers, with signal-cli's code."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


@dataclass
class Person:
    number: str
    uuid: str
    name: str = ""


@dataclass
class Message:
    """One message on a chat's screen: ``timestamp`` is its id (with ``author``); ``revisions`` its edits'."""

    author: str                         # a number, or the bot's ACCOUNT
    timestamp: int
    text: str
    revisions: list[int] = field(default_factory=list)
    attachments: list[tuple[str, bytes]] = field(default_factory=list)
    reactions: dict[str, str] = field(default_factory=dict)   # reactor -> emoji (one each, as Signal shows)
    quote: int | None = None

    @property
    def edits(self) -> int:
        return len(self.revisions)


@dataclass
class Chat:
    key: str                            # "+number" or "group:<groupId>"
    messages: list[Message] = field(default_factory=list)
    typing: int = 0


@dataclass
class Group:
    group_id: str
    name: str
    members: list[str]


class SignalDaemonEmulator:
    """signal-cli's HTTP daemon for the bot ``account``, and the people who write to it."""

    def __init__(self, account: str = ACCOUNT, account_uuid: str = ACCOUNT_UUID, *,
                 keepalive: float = 15.0) -> None:
        self.account = account
        self.account_uuid = account_uuid
        self.keepalive = keepalive
        self.people: dict[str, Person] = {}
        self.groups: dict[str, Group] = {}
        self.chats: dict[str, Chat] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.violations: list[str] = []
        self.files: dict[str, tuple[str, str, bytes]] = {}   # attachment id -> (content type, filename, bytes)
        self._failures: list[tuple[str | None, RpcError, int]] = []   # (chat, error, calls to let pass first)
        self._edit_failures: list[str | None] = []
        self._pace: tuple[float, float] | None = None          # (rate, burst) per chat, when enforced
        self._buckets: dict[str, tuple[float, float]] = {}    # chat -> (tokens, at)
        self.rate_limited = 0                                  # -5 answers given (injected or enforced)
        self._hangs: list[tuple[str | None, float, bool]] = []
        self._events: deque[tuple[int, str]] = deque(maxlen=KEPT_EVENTS)
        self._sequence = itertools.count(1)
        self._run_prefix = f"{int(time.time() * 1000)}-"
        self._listeners: set[asyncio.Queue[tuple[int, str] | None]] = set()
        self._last_timestamp = 0
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self.port = 0
        self.connections = 0          # SSE connections ever opened
        self.down = False

    # ---------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> "SignalDaemonEmulator":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/api/v1/rpc", self._rpc)
        app.router.add_route("*", "/api/v1/events", self._events_route)
        app.router.add_route("*", "/api/v1/check", self._check)
        return app

    async def start(self) -> None:
        self._runner = await serve_locally(self.app())
        self.port = self._runner.addresses[0][1]
        self._site = next(iter(self._runner.sites))  # type: ignore[assignment]

    async def stop(self) -> None:
        self._end_streams()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def take_down(self) -> None:
        """The daemon stops: its event streams end and its port refuses connections until :meth:`bring_back`."""
        self.down = True
        self._end_streams()
        if self._site is not None:
            await self._site.stop()
            self._site = None

    async def bring_back(self) -> None:
        """The daemon runs again on the same port (it kept its events: a reconnect with Last-Event-ID gets them)."""
        assert self._runner is not None
        self._site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await self._site.start()
        self.down = False

    def _end_streams(self) -> None:
        for queue in list(self._listeners):
            queue.put_nowait(None)

    @property
    def listening(self) -> int:
        """How many clients hold an event stream open now."""
        return len(self._listeners)

    # ---------------------------------------------------------------- people, groups, screens

    def person(self, number: str, name: str = "") -> Person:
        if number not in self.people:
            self.people[number] = Person(number, str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, number)), name)
        return self.people[number]

    def group(self, group_id: str, members: list[str], name: str = "A group") -> Group:
        for member in members:
            self.person(member)
        self.groups[group_id] = Group(group_id, name, list(members))
        return self.groups[group_id]

    def chat(self, key: str) -> Chat:
        return self.chats.setdefault(key, Chat(key))

    def screen(self, key: str) -> list[str]:
        """The bot's messages in the chat, top to bottom, each as it reads now (edits applied)."""
        return [m.text for m in self.chat(key).messages if m.author == self.account and (m.text or not m.attachments)]

    def bot_messages(self, key: str) -> list[Message]:
        return [m for m in self.chat(key).messages if m.author == self.account]

    def attachments(self, key: str) -> list[tuple[str, bytes]]:
        return [a for m in self.bot_messages(key) for a in m.attachments]

    def reactions(self, key: str) -> dict[str, list[str]]:
        """The bot's reactions: ``"author/timestamp"`` of the reacted message -> [emoji]."""
        return {f"{m.author}/{m.timestamp}": [m.reactions[self.account]]
                for m in self.chat(key).messages if self.account in m.reactions}

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.calls if name == method]

    # ---------------------------------------------------------------- faults

    def inject_rate_limit(self, retry_after: float | None, chat: str | None = None, token: str | None = None,
                          after: int = 0) -> None:
        """The next call (into ``chat``, or any) answers signal-cli's rate-limit error (-5); ``after``: the one
        after that many more calls."""
        result: dict[str, Any] = {"recipientAddress": {"uuid": None, "number": chat}, "type": "RATE_LIMIT_FAILURE"}
        if retry_after is not None:
            result["retryAfterSeconds"] = retry_after
        if token is not None:
            result["token"] = token
        self._failures.append((chat, RpcError(-5, "Failed to send message due to rate limiting",
                                              {"response": {"timestamp": self._now(), "results": [result]}}),
                               after))

    def enforce(self, rate: float, burst: int) -> None:
        """Answer -5 (retry after the refill) to calls into one chat faster than ``rate`` a second, bursts of
        ``burst`` (Signal's real limits are unpublished: a test sets the pace the plugin declares)."""
        self._pace = (rate, float(burst))

    def _over_pace(self, key: str) -> float | None:
        if self._pace is None:
            return None
        rate, burst = self._pace
        now = time.monotonic()
        tokens, at = self._buckets.get(key, (burst, now))
        tokens = min(burst, tokens + (now - at) * rate)
        if tokens < 1:
            self._buckets[key] = (tokens, now)
            return (1 - tokens) / rate
        self._buckets[key] = (tokens - 1, now)
        return None

    def fail_next_edit(self, chat: str | None = None) -> None:
        """The next edit (into ``chat``) is refused for good (-1), as for a message Signal no longer lets edit."""
        self._edit_failures.append(chat)

    def inject_error(self, code: int, message: str, chat: str | None = None) -> None:
        self._failures.append((chat, RpcError(code, message), 0))

    def hang(self, seconds: float, *, landed: bool, chat: str | None = None) -> None:
        """The next ``send`` (into ``chat``) answers only after ``seconds``; it took effect first when ``landed``."""
        self._hangs.append((chat, seconds, landed))

    # ---------------------------------------------------------------- what people do

    def _now(self) -> int:
        self._last_timestamp = max(int(time.time() * 1000), self._last_timestamp + 1)
        return self._last_timestamp

    def _envelope(self, sender: str, body: dict[str, Any], timestamp: int) -> dict[str, Any]:
        person = self.person(sender)
        return {"envelope": {"source": person.number, "sourceNumber": person.number, "sourceUuid": person.uuid,
                             "sourceName": person.name or person.number, "sourceDevice": 1, "timestamp": timestamp,
                             "serverReceivedTimestamp": timestamp, "serverDeliveredTimestamp": timestamp, **body},
                "account": self.account}

    def push_message(self, sender: str, text: str | None, *, group: str | None = None,
                     mentions: list[dict[str, Any]] | None = None, attachments: list[dict[str, Any]] | None = None,
                     quote: int | None = None) -> int:
        """A person writes; returns the message's timestamp (its id, with the sender)."""
        timestamp = self._now()
        data: dict[str, Any] = {"timestamp": timestamp, "message": text, "expiresInSeconds": 0, "viewOnce": False}
        if group is not None:
            data["groupInfo"] = {"groupId": group, "groupName": self.groups[group].name if group in self.groups
                                 else "", "revision": 1, "type": "DELIVER"}
        if mentions:
            data["mentions"] = mentions
        if attachments:
            data["attachments"] = attachments
        if quote is not None:
            data["quote"] = {"id": quote, "author": self.account, "authorNumber": self.account,
                             "authorUuid": self.account_uuid, "text": ""}
        self.chat(f"group:{group}" if group else sender).messages.append(Message(sender, timestamp, text or ""))
        self.push_event(self._envelope(sender, {"dataMessage": data}, timestamp))
        return timestamp

    def mention_of_bot(self, start: int = 0) -> dict[str, Any]:
        return {"name": self.account, "number": self.account, "uuid": self.account_uuid, "start": start,
                "length": 1}

    def upload(self, data: bytes, content_type: str, filename: str) -> dict[str, Any]:
        """A file a person's phone uploaded; the attachment entry of their message (signal-cli's JSON)."""
        attachment_id = f"{uuidlib.uuid4().hex[:20]}.bin"
        self.files[attachment_id] = (content_type, filename, data)
        return {"contentType": content_type, "filename": filename, "id": attachment_id, "size": len(data)}

    def push_edit(self, sender: str, target: int, text: str, *, group: str | None = None) -> int:
        timestamp = self._now()
        data: dict[str, Any] = {"timestamp": timestamp, "message": text}
        if group is not None:
            data["groupInfo"] = {"groupId": group, "type": "DELIVER"}
        self.push_event(self._envelope(sender, {"editMessage": {"targetSentTimestamp": target, "dataMessage": data}},
                                       timestamp))
        return timestamp

    def push_reaction(self, sender: str, target_author: str, target: int, emoji: str,
                      group: str | None = None) -> int:
        timestamp = self._now()
        data: dict[str, Any] = {"timestamp": timestamp, "reaction": {
            "emoji": emoji, "targetAuthor": target_author, "targetAuthorNumber": target_author,
            "targetAuthorUuid": self.account_uuid if target_author == self.account else None,
            "targetSentTimestamp": target, "isRemove": False}}
        if group is not None:
            data["groupInfo"] = {"groupId": group, "type": "DELIVER"}
        self.push_event(self._envelope(sender, {"dataMessage": data}, timestamp))
        return timestamp

    def push_event(self, payload: dict[str, Any]) -> None:
        self.push_raw(json.dumps(payload, ensure_ascii=False))

    def push_raw(self, data: str) -> None:
        """Any text as the ``data`` of one ``receive`` event (hostile-input tests)."""
        event = (next(self._sequence), data)
        self._events.append(event)
        for queue in list(self._listeners):
            queue.put_nowait(event)

    # ---------------------------------------------------------------- HTTP routes

    async def _check(self, request: web.Request) -> web.StreamResponse:
        if request.method != "GET":
            return web.Response(status=405)
        return web.Response(status=200)

    async def _events_route(self, request: web.Request) -> web.StreamResponse:
        if request.method != "GET":
            return web.Response(status=405)
        account = request.query.get("account")
        if account is not None and account != self.account:
            return web.Response(status=400)
        queue: asyncio.Queue[tuple[int, str] | None] = asyncio.Queue()
        last = request.headers.get("Last-Event-ID")
        if last is not None:
            seen = int(last[len(self._run_prefix):]) if last.startswith(self._run_prefix) and \
                last[len(self._run_prefix):].isdigit() else 0
            for kept in self._events:
                if kept[0] > seen:
                    queue.put_nowait(kept)
        response = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        self._listeners.add(queue)
        self.connections += 1
        try:
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), self.keepalive)
                except TimeoutError:
                    await response.write(b":\n\n")
                    continue
                if event is None:
                    break
                lines = "".join(f"data:{line}\n" for line in event[1].split("\n"))
                await response.write(f"id:{self._run_prefix}{event[0]}\nevent:receive\n{lines}\n".encode())
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self._listeners.discard(queue)
        return response

    async def _rpc(self, request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            return web.Response(status=405)
        if not request.headers.get("Content-Type", "").startswith("application/json"):
            return web.Response(status=415)
        try:
            body = json.loads(await request.read())
        except (ValueError, UnicodeDecodeError) as exc:
            return web.json_response({"jsonrpc": "2.0", "id": None,
                                      "error": {"code": -32700, "message": f"Parse error: {exc}"}})
        if isinstance(body, list):
            answers = [a for a in [await self._one(item) for item in body] if a is not None]
            return web.json_response(answers) if answers else web.Response(status=201)
        answer = await self._one(body)
        return web.json_response(answer) if answer is not None else web.Response(status=201)

    async def _one(self, body: Any) -> dict[str, Any] | None:
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0" or not isinstance(body.get("method"), str):
            return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request"}}
        request_id = body.get("id")
        params = body.get("params") or {}
        try:
            if not isinstance(params, dict):
                raise RpcError(-32602, "params must be an object")
            self.calls.append((body["method"], params))
            result = await self._dispatch(body["method"], params)
        except RpcError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        return None if "id" not in body else {"jsonrpc": "2.0", "id": request_id, "result": result}

    # ---------------------------------------------------------------- methods

    async def _dispatch(self, method: str, params: dict[str, Any]) -> Any:
        if method == "version":
            return {"version": VERSION}
        if method == "getUserStatus":
            recipients = params.get("recipient") or params.get("recipients") or []
            recipients = [recipients] if isinstance(recipients, str) else recipients
            return [{"recipient": r, "number": r, "uuid": self.account_uuid if r == self.account
                     else self.person(r).uuid, "isRegistered": True} for r in recipients]
        if method == "getAttachment":
            found = self.files.get(str(params.get("id")))
            if found is None:
                raise RpcError(-32603, f"An error occurred reading attachment: {params.get('id')}")
            return {"data": base64.b64encode(found[2]).decode()}
        handlers = {"send": (SEND_PARAMS, self._send), "sendReaction": (REACTION_PARAMS, self._react),
                    "sendTyping": (TYPING_PARAMS, self._typing)}
        if method not in handlers:
            raise RpcError(-32601, "Method not implemented")
        allowed, handler = handlers[method]
        unknown = sorted(set(params) - allowed)
        if unknown:
            self.violations.append(f"{method}: unknown params {unknown}")
            raise RpcError(-32602, f"Unknown params for {method}: {', '.join(unknown)}")
        key = self._chat_key(params)
        for i, (chat, failure, after) in enumerate(self._failures):
            if chat is None or chat == key:
                if after > 0:
                    self._failures[i] = (chat, failure, after - 1)
                    break
                del self._failures[i]
                if failure.code == -5:
                    self.rate_limited += 1
                raise failure
        if method == "send" and params.get("editTimestamp") is not None:
            for i, chat in enumerate(self._edit_failures):
                if chat is None or chat == key:
                    del self._edit_failures[i]
                    raise RpcError(-1, "Failed to send message: the message can no longer be edited")
        wait = self._over_pace(key)
        if wait is not None:
            self.rate_limited += 1
            self.violations.append(f"{method}: into {key} faster than the enforced pace")
            self.inject_rate_limit(round(wait, 3) + 0.001, chat=key)
            failure = self._failures.pop()[1]
            raise failure
        return await handler(key, params)

    def _chat_key(self, params: dict[str, Any]) -> str:
        group = params.get("groupId")
        recipient = params.get("recipient", params.get("recipients"))
        if group is not None and recipient is not None:
            raise RpcError(-1, "You cannot specify recipients by phone number and groups at the same time")
        if group is not None:
            if not isinstance(group, str) or group not in self.groups:
                raise RpcError(-1, "Invalid group id" if not isinstance(group, str) else "Group not found")
            return f"group:{group}"
        if isinstance(recipient, str):
            recipient = [recipient]
        if not isinstance(recipient, list) or len(recipient) != 1 or not isinstance(recipient[0], str):
            raise RpcError(-1, "No recipients given" if not recipient else "one recipient per chat in this emulator")
        who = recipient[0]
        if not NUMBER.match(who) and not UUID.match(who):
            raise RpcError(-1, f"Invalid number: {who}")
        for person in self.people.values():
            if who == person.uuid:
                return person.number
        return who

    def _result(self, key: str) -> dict[str, Any]:
        members = self.groups[key[6:]].members if key.startswith("group:") else [key]
        return {"timestamp": self._now(), "results": [
            {"recipientAddress": {"uuid": self.person(m).uuid, "number": m}, "type": "SUCCESS"} for m in members]}

    def _find(self, key: str, author: str, timestamp: int) -> Message | None:
        for message in self.chat(key).messages:
            if message.author == author and (message.timestamp == timestamp or timestamp in message.revisions):
                return message
        return None

    async def _send(self, key: str, params: dict[str, Any]) -> dict[str, Any]:
        text = params.get("message", "")
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise RpcError(-32602, "message must be a string")
        files = params.get("attachments", params.get("attachment", []))
        files = [files] if isinstance(files, str) else files
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise RpcError(-32602, "attachments must be strings")
        if not text and not files:
            raise RpcError(-1, "Message is empty")
        decoded = [self._attachment(f) for f in files]
        if len(text.encode()) > MAX_TEXT_BYTES:
            self.violations.append(f"send: {len(text.encode())} bytes of text (signal-cli cuts at {MAX_TEXT_BYTES})")
        edit = params.get("editTimestamp")
        target: Message | None = None
        if edit is not None:
            if not isinstance(edit, int) or isinstance(edit, bool):
                raise RpcError(-32602, "editTimestamp must be a number")
            target = self._find(key, self.account, edit)
            if target is None:
                self.violations.append(f"send: edit of {edit}, not a message of the bot in {key}")
                raise RpcError(-1, f"Edit target {edit} is not a message of this account in this chat")
            if target.edits >= MAX_EDITS:
                self.violations.append(f"send: edit {target.edits + 1} of message {target.timestamp}")
                raise RpcError(-1, f"Signal apps accept at most {MAX_EDITS} edits of one message")
        quote = params.get("quoteTimestamp")
        if quote is not None and (not isinstance(quote, int) or self._find(
                key, str(params.get("quoteAuthor")), quote) is None):
            self.violations.append(f"send: quote of {quote} by {params.get('quoteAuthor')}, not in {key}")
        for i, (chat, seconds, landed) in enumerate(self._hangs):
            if chat is None or chat == key:
                del self._hangs[i]
                if landed:
                    self._apply(key, text, decoded, target, quote)
                await asyncio.sleep(seconds)
                if landed:
                    return self._result(key)
                raise RpcError(-3, "Failed to send message: timeout")
        result = self._result(key)
        self._apply(key, text, decoded, target, quote, result["timestamp"])
        return result

    def _apply(self, key: str, text: str, files: list[tuple[str, bytes]], target: Message | None,
               quote: Any, timestamp: int | None = None) -> None:
        timestamp = timestamp or self._now()
        if target is not None:
            target.text = text
            target.revisions.append(timestamp)
            return
        self.chat(key).messages.append(Message(self.account, timestamp, text, attachments=files,
                                               quote=quote if isinstance(quote, int) else None))

    def _attachment(self, value: str) -> tuple[str, bytes]:
        match = DATA_URI.match(value)
        if match is None:
            raise RpcError(-1, "Failed to send message: attachment is not a data URI (this emulator has no files)")
        names = dict(p.split("=", 1) for p in match.group(2).split(";") if "=" in p)
        try:
            data = base64.b64decode(match.group(3), validate=True)
        except (binascii.Error, ValueError):
            raise RpcError(-1, "Failed to send message: invalid base64 in attachment") from None
        return names.get("filename", "attachment"), data

    async def _react(self, key: str, params: dict[str, Any]) -> dict[str, Any]:
        emoji, author, target = params.get("emoji"), params.get("targetAuthor"), params.get("targetTimestamp")
        if not isinstance(emoji, str) or not emoji or not isinstance(author, str) \
                or not isinstance(target, int) or isinstance(target, bool):
            raise RpcError(-32602, "sendReaction needs emoji, targetAuthor and targetTimestamp")
        for person in self.people.values():
            if author == person.uuid:
                author = person.number
        message = self._find(key, author, target)
        if message is None:
            self.violations.append(f"sendReaction: no message {author}/{target} in {key}")
            raise RpcError(-1, f"No message {target} by {author} in this chat")
        if params.get("remove"):
            message.reactions.pop(self.account, None)
        else:
            message.reactions[self.account] = emoji
        return self._result(key)

    async def _typing(self, key: str, params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("stop"):
            self.chat(key).typing += 1
        return {}
