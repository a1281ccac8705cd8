"""Helpers shared by the matrix plugin's tests (a module with a unique name, not a conftest).

:class:`FaultProxy` sits between the bot and Synapse on 127.0.0.1 and
passes everything through, except what a test asks for: a 429 with
Synapse's own shape (``M_LIMIT_EXCEEDED``, ``retry_after_ms`` and
``Retry-After``), an edit refused for good, a call that hangs (after it
took effect, or not), an outage. It counts every 429 the bot got, injected
or Synapse's own. :class:`Person` is a person's account, talking to
Synapse directly: it makes rooms, writes, reacts, and reads the room back
as a client shows it (the latest ``m.replace`` edit of each message wins,
by ``origin_server_ts`` then ``event_id``, as the spec says).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable

import aiohttp
from aiohttp import web

from hermes_gateway import RateBudget, StreamSettings
from hermes_gateway.testing import PlatformRunner, eventually  # noqa: F401  (tests import it from here)

import hermes_matrix

#: Pacing no test waits for (the bot is exempt from rc_message unless a test gives it the stock limit).
FAST = {"default": RateBudget(rate=200, burst=20)}
LIMITS = {"budgets": {"default": FAST["default"], "private": FAST["default"], "group": FAST["default"]},
          "bot_budget": RateBudget(rate=400, burst=40), "edit_interval": 0.0}
SETTINGS = StreamSettings(enabled=True, edit_interval=0.05, min_tokens=2)
FILE_TYPES = ("m.image", "m.file", "m.audio", "m.video")


def quoted(room: str) -> str:
    return urllib.parse.quote(room, safe="")


@dataclass
class Fault:
    matches: Callable[[str, str, bytes], bool]
    status: int = 429
    retry_after: float = 0.0
    hang: float = 0.0
    landed: bool = False
    errcode: str = "M_LIMIT_EXCEEDED"


@dataclass
class FaultProxy:
    """Synapse's client API on another port of 127.0.0.1, with faults on demand."""

    upstream: str
    faults: list[Fault] = field(default_factory=list)
    rate_limited: int = 0
    down: bool = False
    requests: list[tuple[str, str]] = field(default_factory=list)
    #: ``rewrite(request, status, body) -> body``: a hostile server's answers (None: passed through as they are).
    rewrite: Callable[[web.Request, int, bytes], bytes] | None = None

    async def start(self) -> "FaultProxy":
        self._session = aiohttp.ClientSession(auto_decompress=False)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        await self._runner.cleanup()
        await self._session.close()

    # -- what a test asks for -----------------------------------------------------------------------

    def into_chat(self, room: str) -> Callable[[str, str, bytes], bool]:
        """A call into ``room`` (a send, typing, a reaction) or an upload (it carries no room)."""
        needle = quoted(room)
        return lambda method, path, body: method != "GET" and (needle in path or "/media/v3/upload" in path)

    def inject_rate_limit(self, room: str, retry_after: float) -> None:
        self.faults.append(Fault(self.into_chat(room), retry_after=retry_after))

    def inject_edit_failure(self, room: str) -> None:
        into = self.into_chat(room)
        self.faults.append(Fault(lambda m, p, b: into(m, p, b) and b'"m.replace"' in b, status=403,
                                 errcode="M_FORBIDDEN"))

    def hang_file_event(self, room: str, seconds: float, landed: bool) -> None:
        into = self.into_chat(room)
        self.faults.append(Fault(lambda m, p, b: into(m, p, b) and "/send/" in p and b'"mxc://' in b,
                                 hang=seconds, landed=landed))

    # -- the proxy --------------------------------------------------------------------------------

    async def forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        path = request.raw_path
        self.requests.append((request.method, path.split("?")[0]))
        if self.down:
            return web.json_response({"errcode": "M_UNKNOWN", "error": "the test took the server away"},
                                     status=502)
        fault = next((f for f in self.faults if f.matches(request.method, path, body)), None)
        if fault is not None:
            self.faults.remove(fault)
            if fault.hang:
                if fault.landed:
                    await self._upstream(request, body)
                await asyncio.sleep(fault.hang)
                return web.json_response({"errcode": "M_UNKNOWN", "error": "late"}, status=504)
            if fault.status == 429:
                self.rate_limited += 1
                return web.json_response(
                    {"errcode": "M_LIMIT_EXCEEDED", "error": "Too Many Requests",
                     "retry_after_ms": int(fault.retry_after * 1000)},
                    status=429, headers={"Retry-After": str(math.ceil(fault.retry_after))})
            return web.json_response({"errcode": fault.errcode, "error": "refused by the test"}, status=fault.status)
        status, headers, data = await self._upstream(request, body)
        if self.rewrite is not None:
            data = self.rewrite(request, status, data)
        if status == 429:
            self.rate_limited += 1
        return web.Response(status=status, body=data, headers=headers)

    async def _upstream(self, request: web.Request, body: bytes) -> tuple[int, dict[str, str], bytes]:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        async with self._session.request(request.method, self.upstream + request.raw_path, data=body,
                                         headers=headers, allow_redirects=False,
                                         timeout=aiohttp.ClientTimeout(total=120)) as answer:
            data = await answer.read()
            keep = {k: v for k, v in answer.headers.items()
                    if k.lower() in ("content-type", "retry-after", "content-disposition")}
            return answer.status, keep, data


class Person:
    """A person's Matrix account, straight on Synapse: rooms, messages, reactions, and the room as shown."""

    def __init__(self, url: str, account: Any) -> None:
        self.url = url
        self.account = account
        self.user_id = account.user_id
        self._session: aiohttp.ClientSession | None = None
        self._txn = 0

    async def call(self, method: str, path: str, body: Any = None, **params: str) -> Any:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        data = body if isinstance(body, bytes) else (None if body is None else json.dumps(body).encode())
        async with self._session.request(method, self.url + path, data=data, params=params or None,
                                         headers={"Authorization": f"Bearer {self.account.access_token}"}) as answer:
            text = await answer.read()
            if answer.status != 200:
                raise AssertionError(f"{method} {path}: {answer.status} {text[:300]!r}")
            return json.loads(text) if answer.content_type == "application/json" else text

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def create_room(self, invite: str | None = None, *, direct: bool = False, encrypted: bool = False) -> str:
        body: dict[str, Any] = {"preset": "trusted_private_chat" if direct else "private_chat",
                                "is_direct": direct, "invite": [invite] if invite else []}
        if encrypted:
            body["initial_state"] = [{"type": "m.room.encryption", "state_key": "",
                                      "content": {"algorithm": "m.megolm.v1.aes-sha2"}}]
        return str((await self.call("POST", "/_matrix/client/v3/createRoom", body))["room_id"])

    async def send(self, room: str, text: str = "", event_type: str = "m.room.message", **content: Any) -> str:
        self._txn += 1
        body = {"msgtype": "m.text", "body": text, **content} if event_type == "m.room.message" else content
        answer = await self.call("PUT", f"/_matrix/client/v3/rooms/{quoted(room)}/send/{event_type}/"
                                        f"t{self._txn}-{id(self)}", body)
        return str(answer["event_id"])

    async def react(self, room: str, event_id: str, key: str) -> str:
        return await self.send(room, event_type="m.reaction",
                               **{"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}})

    async def upload(self, data: bytes, filename: str, mime: str) -> str:
        answer = await self.call("POST", "/_matrix/media/v3/upload", data, filename=filename)
        return str(answer["content_uri"])

    async def events(self, room: str) -> list[dict[str, Any]]:
        """Every event of the room, oldest first."""
        found: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            params = {"dir": "b", "limit": "1000", **({"from": token} if token else {})}
            page = await self.call("GET", f"/_matrix/client/v3/rooms/{quoted(room)}/messages", **params)
            found.extend(page.get("chunk", []))
            token = page.get("end")
            if not page.get("chunk") or not token:
                return list(reversed(found))

    async def shown(self, room: str, sender: str) -> list[dict[str, Any]]:
        """``sender``'s messages as a client shows them: each original with its latest edit's content."""
        events = await self.events(room)
        edits: dict[str, dict[str, Any]] = {}
        for event in events:
            relation = event.get("content", {}).get("m.relates_to", {})
            if event.get("type") == "m.room.message" and relation.get("rel_type") == "m.replace" \
                    and event.get("sender") == sender:
                target = relation["event_id"]
                best = edits.get(target)
                if best is None or (event["origin_server_ts"], event["event_id"]) > \
                        (best["origin_server_ts"], best["event_id"]):
                    edits[target] = event
        shown = []
        for event in events:
            content = event.get("content", {})
            if event.get("type") != "m.room.message" or event.get("sender") != sender or not content:
                continue
            if content.get("m.relates_to", {}).get("rel_type") == "m.replace":
                continue
            latest = edits.get(event["event_id"])
            shown.append({**event, "content": latest["content"]["m.new_content"] if latest else content})
        return shown

    async def screen(self, room: str, sender: str) -> list[str]:
        return [e["content"]["body"] for e in await self.shown(room, sender)
                if e["content"].get("msgtype") not in FILE_TYPES]

    async def download(self, mxc: str) -> bytes:
        server, media_id = mxc[len("mxc://"):].split("/", 1)
        return bytes(await self.call("GET", f"/_matrix/client/v1/media/download/{server}/{media_id}"))

    def reactions_now(self, room: str, sender: str) -> dict[str, list[str]]:
        """``sender``'s reactions per event (blocking: the conformance kit reads it synchronously)."""
        request = urllib.request.Request(
            f"{self.url}/_matrix/client/v3/rooms/{quoted(room)}/messages?dir=b&limit=1000",
            headers={"Authorization": f"Bearer {self.account.access_token}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            chunk = json.loads(answer.read())["chunk"]
        found: dict[str, list[str]] = {}
        for event in reversed(chunk):
            relation = event.get("content", {}).get("m.relates_to", {})
            if event.get("type") == "m.reaction" and event.get("sender") == sender:
                found.setdefault(relation.get("event_id"), []).append(relation.get("key"))
        return found


async def join(url: str, account: Any, room: str) -> None:
    """``account`` joins ``room`` (the harness does it for the bot, without waiting for its sync)."""
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{url}/_matrix/client/v3/join/{quoted(room)}", json={},
                                headers={"Authorization": f"Bearer {account.access_token}"}) as answer:
            assert answer.status == 200, await answer.text()


def section(url: str, bot: Any, **matrix: Any) -> dict[str, Any]:
    """``platforms.matrix`` for the account ``bot`` on the homeserver at ``url``."""
    return {"homeserver": url, "user_id": bot.user_id, "access_token": bot.access_token, "sync_timeout": 10,
            **matrix}


def runner(url: str, bot: Any, *, start: bool = True, limits: Any = LIMITS, **matrix: Any) -> PlatformRunner:
    return PlatformRunner(hermes_matrix.plugin, settings=section(url, bot, **matrix), limits=limits, start=start)


WORD = re.compile(r"\S+")


async def until(read: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 60.0) -> Any:
    """Poll ``await read()`` until ``ok(value)``; a generous bound that only catches hangs (then says what it saw)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await read()
        if ok(value):
            return value
        if loop.time() > deadline:
            raise AssertionError(f"still not there after {timeout}s: {value!r}")
        await asyncio.sleep(0.5)  # each look is a /messages on Synapse: its CPU is the suite's


def gateway_config(url: str, bot: Any, *, store: str | None = None, tokens_per_second: float = 300,
                   reactions: dict[str, str] | None = None, **matrix: Any) -> dict[str, Any]:
    """A gateway's config: the demo model, streaming on for Matrix, the bot's account on ``url``."""
    config: dict[str, Any] = {
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"matrix": {"enabled": True, "edit_interval": 0.3, "min_tokens": 3}},
        "platforms": {"matrix": {"enabled": True, **section(url, bot, **matrix)}},
    }
    if store is not None:
        config["store"] = {"path": store}
    if reactions:
        config["reactions"] = reactions
    return config


def gateway(url: str, bot: Any, *, limits: Any = LIMITS, **options: Any) -> Any:
    """A whole gateway answering the bot's rooms through the homeserver at ``url``."""
    from hermes_gateway.testing import TestGateway

    return TestGateway(gateway_config(url, bot, **options), hermes_matrix.plugin, limits=limits, shutdown_grace=1.0)
