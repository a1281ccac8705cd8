"""Every HTTP route a platform mounts, under hostile input: never a 5xx, nothing reaches the agent, still answering.

The routes: Telegram's webhook, WhatsApp's webhook (POST, and the GET
verification), Slack's Events API and its interactivity (button) callbacks,
and the ``new-plugin`` template's webhook (Discord mounts none: it receives
over its gateway socket). Each runs in a real in-process gateway with its
installed plugin, its emulator for the calls the plugin makes, the demo
model, and the listener's body cap lowered to :data:`CAP`.

Each hostile request is sent as raw bytes (so headers can be garbled, huge
or missing), and after each one a valid signed request must still be
answered: the reply on the emulator's screen. A spy on
``Gateway.receive`` sees everything any route hands to the core: only the
valid requests may appear there.

What a signed but unreadable body gets is each platform's documented
choice, not always a 4xx: Telegram and Meta deliver a webhook again until
it is acknowledged, so their routes answer a body that can never be read
with 200 and one log line (``hermes_telegram.webhook``, ``hermes_whatsapp.plugin``);
a 4xx would only bring the same bytes back, and on Telegram hold every
later update behind them. Without a valid signature, every route refuses.

What the matrix found, fixed where it arose: a sender announcing a body it
never sent held a webhook handler for as long as it kept the connection
(now a 408 within ``http.body_deadline.BODY_SECONDS``, connection closed);
a signed empty body on Slack's routes was bolt's "no listener" 404 (now 400,
like every other unreadable body there).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import sys
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable
from urllib.parse import urlencode, urlsplit

import pytest

from hermes_gateway import RateBudget
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.http import body_deadline
from hermes_gateway.testing import TestGateway, eventually

#: The listener's body cap in these tests (``api_server.max_body_bytes``): an oversized body is one byte over.
CAP = 64 * 1024

TELEGRAM_TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
TELEGRAM_SECRET = "hostile-Webhook_secret-0123456789"
WA = {"access_token": "EAAGm0PX4ZCpsBAKZCZBq3w0ZCkWx8ZAXfrE7tG1nMeV0tQ", "phone_number_id": "106540352242922",
      "app_secret": "3f1c9a0be5d7f24e6a8b0c1d2e3f4a5b", "verify_token": "hermes-verify-7Q2x"}
SCAFFOLD_SECRET = "scaffold-webhook-secret-42"
#: Pacing no test waits for: one reply after each hostile request, all in one chat.
FAST = {"budgets": {"default": RateBudget(rate=200, burst=20)}, "bot_budget": RateBudget(rate=400, burst=40),
        "edit_interval": 0.0}


@dataclass
class Route:
    """One mounted route, and how its platform signs a request to it."""

    method: str
    path: str
    #: headers that sign ``body`` as the platform does
    sign: Callable[[bytes], dict[str, str]]
    #: headers that sign ``body`` with the wrong key
    forge: Callable[[bytes], dict[str, str]]
    #: the n-th valid request: its body and extra headers (a person's message, or a button press)
    valid: Callable[[int], tuple[bytes, dict[str, str]]]
    #: whether the n-th valid request was answered, as the person sees it
    answered: Callable[[int], bool]
    #: the status of a correctly signed body that is not the platform's (malformed, not UTF-8, empty)
    unreadable: int
    #: the header that carries the signature (garbled and stretched by the matrix)
    signature_header: str
    #: whether the valid request is a message for the agent (a button press is not)
    reaches_agent: bool = True
    #: whether the signature covers the body (Telegram's secret header does not: any body with it is Telegram's)
    signs_body: bool = True
    port: int = 0
    received: list[Any] = field(default_factory=list)


async def send(port: int, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None,
               raw_headers: bytes = b"", content_length: int | None = None) -> int:
    """One request as raw bytes on a new connection; the status the listener answered (0: it hung up)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close",
             f"Content-Length: {len(body) if content_length is None else content_length}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    head = ("\r\n".join(lines) + "\r\n").encode("latin-1") + raw_headers + b"\r\n"
    try:
        writer.write(head + body)
        await writer.drain()
    except ConnectionError:
        pass  # the listener refused before reading it all (a 413): its answer is still there to read
    try:
        status_line = await asyncio.wait_for(reader.readline(), 30)
    finally:
        writer.close()
    return int(status_line.split()[1]) if status_line else 0


def hostile_cases(route: Route) -> dict[str, Callable[[], Any]]:
    """Each hostile request, by name: a coroutine factory giving the status."""
    body, _ = route.valid(0)
    post = route.method
    sig = route.signature_header

    def signed(data: bytes) -> dict[str, str]:
        return {"Content-Type": "application/json", **route.sign(data)}

    port, path = route.port, route.path
    oversized = b'{"pad": "' + b"x" * CAP + b'"}'
    cases: dict[str, Callable[[], Any]] = {
        "unsigned": lambda: send(port, post, path, body, {"Content-Type": "application/json"}),
        "wrongly signed": lambda: send(port, post, path, body, {"Content-Type": "application/json",
                                                                **route.forge(body)}),
        "signed for another body": lambda: send(port, post, path, body + b" ", signed(body)),
        "malformed JSON": lambda: send(port, post, path, b'{"update_id": 1, "message": {', signed(b'{"update_id": 1, '
                                                                                                b'"message": {')),
        "not UTF-8": lambda: send(port, post, path, b'\xff\xfe{"\xc3\x28": "\xa0\xa1"}',
                                  signed(b'\xff\xfe{"\xc3\x28": "\xa0\xa1"}')),
        "JSON but not an object": lambda: send(port, post, path, b"[1, 2, 3]", signed(b"[1, 2, 3]")),
        "empty body": lambda: send(port, post, path, b"", signed(b"")),
        "oversized body": lambda: send(port, post, path, oversized, signed(oversized)),
        "oversized, unsigned": lambda: send(port, post, path, oversized, {"Content-Type": "application/json"}),
        "huge header": lambda: send(port, post, path, body, signed(body), raw_headers=b"X-Pad: " + b"a" * 20000
                                    + b"\r\n"),
        "long signature": lambda: send(port, post, path, body, {"Content-Type": "application/json",
                                                                sig: "v0=" + "9" * 4000}),
        "garbled signature bytes": lambda: send(port, post, path, body, {"Content-Type": "application/json"},
                                                raw_headers=sig.encode() + b": \xff\xfe\x80sha256=\xc3\x28\r\n"),
        "header line without a colon": lambda: send(port, post, path, body, signed(body),
                                                    raw_headers=b"this is no header\r\n"),
        "a lying Content-Length": lambda: send(port, post, path, body[: len(body) // 2], signed(body),
                                               content_length=len(body)),
        "wrong method PUT": lambda: send(port, "PUT", path, body, signed(body)),
        "wrong method DELETE": lambda: send(port, "DELETE", path),
    }
    if not route.signs_body:
        del cases["signed for another body"]
    return cases


def expected_status(route: Route, case: str) -> set[int]:
    if case in ("unsigned", "wrongly signed", "signed for another body", "long signature", "garbled signature bytes",
                "oversized, unsigned"):
        return {400, 401, 403, 413}  # refused before anything is read as a message (the cap may come first)
    if case in ("malformed JSON", "not UTF-8", "JSON but not an object", "empty body"):
        return {route.unreadable}
    if case == "oversized body":
        return {413}
    if case in ("huge header", "header line without a colon"):
        return {400, 431}
    if case == "a lying Content-Length":
        return {408}  # the body never comes: the listener stops waiting (hermes_gateway/_core/http/body_deadline.py)
    return {405}


async def check_the_matrix(route: Route) -> None:
    """Every hostile case, each followed by a valid request that must be answered; one table of what happened."""
    got: dict[str, int] = {}
    want: dict[str, set[int]] = {}
    for number, (case, request) in enumerate(hostile_cases(route).items(), start=1):
        before = list(route.received)
        got[case] = await request()
        want[case] = expected_status(route, case)
        assert route.received == before, f"{case}: reached the core: {route.received[len(before):]}"
        body, headers = route.valid(number)
        status = await send(route.port, route.method, route.path, body, {**route.sign(body), **headers})
        assert status == 200, f"the valid request after {case!r} was answered {status}"
        await eventually(lambda n=number: route.answered(n), lambda n=number, c=case: f"no answer to {n} after {c!r}")
    assert {c: s for c, s in got.items() if s not in want[c]} == {}, got
    assert all(s < 500 for s in got.values()), got
    assert len(route.received) == (len(got) if route.reaches_agent else 0), "only the valid requests reached the core"


@pytest.fixture
def spy(monkeypatch):
    """Everything any route hands to the core (``PlatformContext.receive`` is the gateway's ``receive``).

    Also: a body that has not arrived after half a second is late (the listener's deadline, shortened).
    """
    monkeypatch.setattr(body_deadline, "BODY_SECONDS", 0.5)
    received: list[Any] = []
    original = Gateway.receive

    def receive(self: Gateway, incoming: Any) -> Any:
        received.append(incoming)
        return original(self, incoming)

    monkeypatch.setattr(Gateway, "receive", receive)
    return received


def gateway_config(section_name: str, section: dict[str, Any], port: int = 0) -> dict[str, Any]:
    return {"model": {"demo": {"tokens_per_second": 0}}, "api_server": {"max_body_bytes": CAP, "port": port},
            "platforms": {section_name: {"enabled": True, **section}}}


#: Every route the matrix sends hostile input to; a platform mounting one more fails here until it is added.
COVERED = {("POST", "/webhooks/telegram"), ("POST", "/webhooks/whatsapp"), ("GET", "/webhooks/whatsapp"),
           ("POST", "/webhooks/slack/events"), ("POST", "/webhooks/slack/interactivity"),
           ("POST", "/webhooks/hostile")}


@asynccontextmanager
async def running(config: dict[str, Any], plugin: Any, route: Route) -> AsyncIterator[TestGateway]:
    async with TestGateway(config, plugin, limits=FAST) as gateway:
        assert gateway.url is not None
        route.port = urlsplit(gateway.url).port or 0
        app = gateway._gateway.app
        assert app is not None
        mounted = {(r.method, r.resource.canonical) for r in app.router.routes()
                   if r.resource is not None and r.resource.canonical.startswith("/webhooks/") and r.method != "HEAD"}
        assert (route.method, route.path) in mounted and mounted <= COVERED, mounted - COVERED
        yield gateway


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- Telegram ---------------------------------------------------------------------------------------------------

async def test_telegram_webhook(spy):
    from hermes_telegram import plugin
    from hermes_telegram.emulator import BotApiEmulator

    def update(n: int) -> bytes:
        return json.dumps({"update_id": 1000 + n, "message": {
            "message_id": 10 + n, "date": int(time.time()), "chat": {"id": 4242, "type": "private"},
            "from": {"id": 4242, "is_bot": False, "first_name": "Ada"}, "text": f"echo: answer {n}"}}).encode()

    async with BotApiEmulator(TELEGRAM_TOKEN) as api:
        route = Route("POST", "/webhooks/telegram", received=spy, signature_header="X-Telegram-Bot-Api-Secret-Token",
                      sign=lambda body: {"X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET},
                      forge=lambda body: {"X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET[:-1] + "x"},
                      valid=lambda n: (update(n), {"Content-Type": "application/json"}),
                      answered=lambda n: f"answer {n}" in api.screen(4242), unreadable=200,
                      signs_body=False)
        port = free_port()
        section = {"token": TELEGRAM_TOKEN, "base_url": api.base_url, "mode": "webhook",
                   "webhook_url": f"http://127.0.0.1:{port}/webhooks/telegram", "webhook_secret": TELEGRAM_SECRET}
        async with running(gateway_config("telegram", section, port), plugin, route):
            await check_the_matrix(route)


# -- WhatsApp ---------------------------------------------------------------------------------------------------

def meta_signature(secret: str, body: bytes) -> dict[str, str]:
    return {"X-Hub-Signature-256": "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()}


@asynccontextmanager
async def whatsapp(spy: list[Any]) -> AsyncIterator[tuple[Any, Route]]:
    from hermes_whatsapp import plugin
    from hermes_whatsapp.emulator import GraphApiEmulator

    async with GraphApiEmulator(WA["access_token"], WA["phone_number_id"], WA["app_secret"]) as api:
        user = "4915112345678"

        def valid(n: int) -> tuple[bytes, dict[str, str]]:
            body = json.dumps(api.text_message(user, f"echo: answer {n}"), separators=(",", ":")).encode()
            return body, {"Content-Type": "application/json"}

        route = Route("POST", "/webhooks/whatsapp", received=spy, signature_header="X-Hub-Signature-256",
                      sign=lambda body: meta_signature(WA["app_secret"], body),
                      forge=lambda body: meta_signature("not-the-app-secret", body),
                      valid=valid, answered=lambda n: f"answer {n}" in api.screen(user), unreadable=200)
        async with running(gateway_config("whatsapp", {**WA, "api_base_url": api.base_url}), plugin, route):
            yield api, route


async def test_whatsapp_webhook_post(spy):
    async with whatsapp(spy) as (api, route):
        await check_the_matrix(route)


async def test_whatsapp_webhook_verification_get(spy):
    """Meta's subscription check: only the right verify token gets the challenge back; nothing else is a 5xx."""
    async with whatsapp(spy) as (api, route):
        path = route.path

        def query(**params: str) -> str:
            return f"{path}?{urlencode(params)}"

        good = {"hub.mode": "subscribe", "hub.verify_token": WA["verify_token"], "hub.challenge": "1158201444"}
        cases = {
            "no query": (path, b"", b""),
            "wrong verify token": (query(**{**good, "hub.verify_token": "guess"}), b"", b""),
            "wrong mode": (query(**{**good, "hub.mode": "unsubscribe"}), b"", b""),
            "no challenge": (query(**{k: v for k, v in good.items() if k != "hub.challenge"}), b"", b""),
            "token not UTF-8": (f"{path}?hub.mode=subscribe&hub.verify_token=%ff%fe%c3%28&hub.challenge=1", b"",
                                b""),
            "query of 20000 characters": (query(**{**good, "hub.verify_token": "v" * 20000}), b"", b""),
            "a body on the GET": (query(**{**good, "hub.verify_token": "guess"}), b"\xff" * 1000, b""),
            "garbled header bytes": (query(**{**good, "hub.verify_token": "guess"}), b"", b"X-Odd: \xff\xfe\r\n"),
        }
        got = {}
        for case, (target, body, raw) in cases.items():
            got[case] = await send(route.port, "GET", target, body, raw_headers=raw)
        assert {c: s for c, s in got.items() if s not in (400, 403, 413, 414, 431)} == {}, got
        assert await send(route.port, "GET", query(**good)) == 200, "still answering after all that"
        status, text = await api.verify(f"http://127.0.0.1:{route.port}{path}", WA["verify_token"])
        assert (status, text) == (200, "1158201444")
        assert spy == []


# -- Slack ------------------------------------------------------------------------------------------------------

def slack_headers(secret: str, body: bytes) -> dict[str, str]:
    ts = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


@asynccontextmanager
async def slack(spy: list[Any], path_name: str) -> AsyncIterator[tuple[Any, Route]]:
    from hermes_slack import plugin
    from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SlackEmulator

    async with SlackEmulator() as api:
        channel = api.channel("D0HOSTILE", "im")

        def event(n: int) -> tuple[bytes, dict[str, str]]:
            payload = api.event_payload({"type": "message", "channel": channel.id, "user": "U0ALICE",
                                         "text": f"echo: answer {n}", "ts": f"18000{n:05d}.000001",
                                         "channel_type": "im"})
            return json.dumps(payload).encode(), {"Content-Type": "application/json"}

        def press(n: int) -> tuple[bytes, dict[str, str]]:
            payload = {"type": "block_actions", "team": {"id": api.team_id, "domain": "hermes"},
                       "user": {"id": "U0ALICE", "username": "alice", "name": "alice", "team_id": api.team_id},
                       "api_app_id": "A0HERMES", "token": "verification-token-unused", "trigger_id": f"tr{n}",
                       "container": {"type": "message", "message_ts": "1800000000.000100", "channel_id": channel.id,
                                     "is_ephemeral": False},
                       "channel": {"id": channel.id, "name": channel.id},
                       "message": {"type": "message", "ts": "1800000000.000100", "text": "Run it?",
                                   "user": api.bot_user_id},
                       "actions": [{"type": "button", "action_id": f"hgc:q{n}:approve", "block_id": "choice",
                                    "text": {"type": "plain_text", "text": "Approve"}, "value": "approve",
                                    "action_ts": f"{time.time():.6f}"}],
                       "state": {"values": {}}}
            body = urlencode({"payload": json.dumps(payload)}).encode()
            return body, {"Content-Type": "application/x-www-form-urlencoded"}

        def pressed(n: int) -> bool:  # the question is not open: the person is told so, in an ephemeral line
            return len(api.blocks.ephemeral) >= n

        if path_name == "events":
            from hermes_slack import EVENTS_PATH

            route = Route("POST", EVENTS_PATH, received=spy, signature_header="X-Slack-Signature",
                          sign=lambda body: slack_headers(api.signing_secret, body),
                          forge=lambda body: slack_headers("not-the-signing-secret", body), valid=event,
                          answered=lambda n: f"answer {n}" in api.screen(channel.id), unreadable=400)
        else:
            from hermes_slack.choices import INTERACTIVITY_PATH

            route = Route("POST", INTERACTIVITY_PATH, received=spy, signature_header="X-Slack-Signature",
                          sign=lambda body: slack_headers(api.signing_secret, body),
                          forge=lambda body: slack_headers("not-the-signing-secret", body), valid=press,
                          answered=pressed, unreadable=400, reaches_agent=False)
        section = {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "signing_secret": api.signing_secret,
                   "api_base_url": api.base_url, "mode": "http"}
        async with running(gateway_config("slack", section), plugin, route):
            yield api, route


async def test_slack_events(spy):
    async with slack(spy, "events") as (api, route):
        await check_the_matrix(route)


async def test_slack_interactivity(spy):
    async with slack(spy, "interactivity") as (api, route):
        await check_the_matrix(route)
        assert all(text == "This question is no longer open." for _, _, text in api.blocks.ephemeral), \
            api.blocks.ephemeral


# -- the new-plugin template ------------------------------------------------------------------------------------

async def test_the_scaffolded_plugins_webhook(spy, tmp_path, monkeypatch):
    from hermes_gateway._core.scaffold import scaffold

    target = scaffold("hostile", tmp_path)
    monkeypatch.syspath_prepend(str(target))
    for name in [m for m in sys.modules if m == "hermes_hostile" or m.startswith("hermes_hostile.")]:
        monkeypatch.delitem(sys.modules, name)
    import hermes_hostile
    from hermes_hostile.emulator import Emulator

    def signed(secret: str, body: bytes) -> dict[str, str]:
        return {"X-Hostile-Signature": "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()}

    async with Emulator("hostile-token", webhook_secret=SCAFFOLD_SECRET) as api:
        def valid(n: int) -> tuple[bytes, dict[str, str]]:
            # a chat each: the template's emulator allows one message a second per chat, as its platform would
            body = json.dumps({"id": f"in-{n}", "chat_id": f"7{n}", "user_id": "7", "text": f"echo: answer {n}"})
            return body.encode(), {"Content-Type": "application/json"}

        route = Route("POST", "/webhooks/hostile", received=spy, signature_header="X-Hostile-Signature",
                      sign=lambda body: signed(SCAFFOLD_SECRET, body), forge=lambda body: signed("guess", body),
                      valid=valid, answered=lambda n: f"answer {n}" in api.screen(f"7{n}"), unreadable=400)
        section = {"base_url": api.base_url, "token": "hostile-token", "webhook_secret": SCAFFOLD_SECRET}
        async with running(gateway_config("hostile", section), hermes_hostile.plugin, route):
            await check_the_matrix(route)
    for name in [m for m in sys.modules if m == "hermes_hostile" or m.startswith("hermes_hostile.")]:
        del sys.modules[name]


# -- Discord ----------------------------------------------------------------------------------------------------

async def test_discord_mounts_no_route():
    """Discord delivers over its gateway socket (and interactions come the same way): nothing to attack over HTTP."""
    from hermes_discord import plugin

    from hermes_gateway.testing import PlatformRunner

    token = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhXk2a.q9Zr3Yb7Lw1Nc5Vt8Pd2Sf6Gh0Jk4Mn7Qr1Tu3Wx"
    async with PlatformRunner(plugin, settings={"token": token}, start=False) as runner:
        assert runner.client is not None and runner.url is None
