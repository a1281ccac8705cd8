"""The console's two roles on a running gateway (issue 33 item 4): ``web.password`` is the operator, an API key a
user of that key — the chat and the key's own API conversations, 403 on everything of the dashboard, 404 on
every other conversation. The routes are read from the app's router, so a route added later is checked too."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest

from hermes_gateway._core.operator.store_ops import issue_code
from hermes_gateway._core.store.base import ConversationKey
from web_helpers import browser_session, config, csrf_of, running

PASSWORD = "operator-password-1234"
KEY_A, KEY_B = "sk-roles-test-key-aaaa", "sk-roles-test-key-bbbb"
#: Routes (method, canonical path) open to a user of an API key; every other /ui route is the operator's.
USER_ROUTES = {
    ("GET", "/ui"), ("GET", "/ui/"), ("GET", "/ui/login"), ("POST", "/ui/login"), ("POST", "/ui/logout"),
    ("GET", "/ui/api/session"), ("GET", "/ui/static/{name}"),
    ("POST", "/ui/api/chat/send"), ("POST", "/ui/api/chat/stop"), ("POST", "/ui/api/chat/upload"),
    ("POST", "/ui/api/chat/choose"), ("GET", "/ui/api/chat/history"), ("GET", "/ui/api/chat/events"),
    ("GET", "/ui/api/chat/files/{token}"),
    ("GET", "/ui/api/chats/{platform}/{chat}"),  # only the user's own chats: 404 for any other (below)
}
#: What a route's parameters are filled with; a pairing decision gets a well-formed body (so 403 means the role).
PARAMS = {"name": "console.css", "token": "abc", "platform": "telegram", "chat": "42"}
BODY = {"platform": "telegram", "user_id": "42", "text": "hi", "payload": "x"}


def console_routes(app: Any) -> list[tuple[str, str]]:
    """Every (method, path) the app serves under /ui, HEAD included, as its router holds them."""
    out = []
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        if path == "/ui" or path.startswith("/ui/"):
            out.append((route.method, path))
    return sorted(set(out))


def filled(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: PARAMS[m.group(1)], path)


@contextlib.asynccontextmanager
async def signed_in(url: str, secret: str):
    async with browser_session() as browser:
        async with browser.post(f"{url}/ui/login", json={"secret": secret}) as r:
            assert r.status == 200, await r.text()
        yield browser, await csrf_of(browser, url)


async def status_of(browser: aiohttp.ClientSession, url: str, method: str, path: str, csrf: str) -> tuple[int, Any]:
    """The status (and JSON error code) of one request; a stream that opens (200) is closed at once."""
    async with browser.request(method, url + filled(path), json=BODY if method == "POST" else None,
                               headers={"X-CSRF-Token": csrf, "Accept": "application/json"},
                               allow_redirects=False) as r:
        code = None
        if r.status >= 400 and method != "HEAD" and r.content_type == "application/json":
            code = (await r.json())["error"]["code"]
        return r.status, code


async def api_conversations(url: str, key: str, tag: str) -> None:
    """One stored Chat Completions conversation and one Responses conversation, made with ``key``."""
    headers = {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/v1/chat/completions", headers=headers, json={
                "model": "hermes-gateway", "store": True,
                "messages": [{"role": "user", "content": f"echo: chat of {tag}"}]}) as r:
            assert r.status == 200, await r.text()
        async with http.post(f"{url}/v1/responses", headers=headers,
                             json={"model": "hermes-gateway", "input": f"echo: response of {tag}"}) as r:
            assert r.status == 200, await r.text()


async def stored_chats(gateway: Any, platform: str, first_text: str) -> list[str]:
    return [c.chat_id for c in await gateway.store.list_conversations(100)
            if c.platform == platform and first_text in c.first_text]


async def until_stored(gateway: Any, platform: str, first_text: str, count: int) -> list[str]:
    for _ in range(1000):
        found = await stored_chats(gateway, platform, first_text)
        if len(found) >= count:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"{platform} conversations starting {first_text!r} never stored")


async def test_a_key_reads_its_own_conversations_only_and_the_operator_reads_all():
    cfg = config({"password": PASSWORD}, api={"api_keys": [KEY_A, KEY_B]})
    async with running(cfg) as gateway:
        url = gateway.url
        await api_conversations(url, KEY_A, "A")
        await api_conversations(url, KEY_B, "B")
        a_api = await until_stored(gateway, "api", "of A", 2)
        b_api = await until_stored(gateway, "api", "of B", 2)
        async with signed_in(url, KEY_A) as (a, a_csrf), signed_in(url, KEY_B) as (b, b_csrf), \
                signed_in(url, PASSWORD) as (operator, _):
            async with a.post(f"{url}/ui/api/chat/send", json={"text": "echo: web chat of A"},
                              headers={"X-CSRF-Token": a_csrf}) as r:
                assert r.status == 202
            [a_web] = await until_stored(gateway, "web", "web chat of A", 1)
            assert await gateway.store.current(ConversationKey("web", a_web)) is not None

            for chat_id in a_api:
                assert (await status_of(b, url, "GET", f"/ui/api/chats/api/{chat_id}", b_csrf))[0] == 404
                async with a.get(f"{url}/ui/api/chats/api/{chat_id}") as r:
                    assert r.status == 200, await r.text()
                    assert "of A" in (await r.json())["messages"][0]["text"]
            for chat_id in b_api:
                assert (await status_of(a, url, "GET", f"/ui/api/chats/api/{chat_id}", a_csrf))[0] == 404
                assert (await status_of(b, url, "GET", f"/ui/api/chats/api/{chat_id}", b_csrf))[0] == 200
            refused = await b.get(f"{url}/ui/api/chats/web/{a_web}")  # another browser session's web chat
            assert refused.status == 404 and (await refused.json())["error"]["code"] == "not_found"
            async with a.get(f"{url}/ui/api/chats/web/{a_web}") as r:
                assert r.status == 200 and (await r.json())["messages"][0]["text"] == "echo: web chat of A"
            async with b.get(f"{url}/ui/api/chat/history") as r:  # B's own chat: empty, not A's
                assert r.status == 200 and (await r.json())["messages"] == []

            for platform, chat_id in [*(("api", c) for c in (*a_api, *b_api)), ("web", a_web)]:
                async with operator.get(f"{url}/ui/api/chats/{platform}/{chat_id}") as r:
                    assert r.status == 200, (platform, chat_id, r.status)
            async with operator.get(f"{url}/ui/api/state") as r:
                state = await r.json()
            listed = {(c["platform"], c["chat_id"]) for c in state["conversations"]}
            assert {("web", a_web), *(("api", c) for c in (*a_api, *b_api))} <= listed


async def test_a_key_gets_403_on_every_dashboard_route_and_the_operator_gets_them_all():
    cfg = config({"password": PASSWORD}, api={"api_keys": [KEY_A, KEY_B]})
    async with running(cfg) as gateway:
        url = gateway.url
        routes = console_routes(gateway.app)
        operators = [r for r in routes if r not in USER_ROUTES and (r[0] != "HEAD" or ("GET", r[1]) not in USER_ROUTES)]
        assert ("GET", "/ui/api/state") in operators and ("POST", "/ui/api/pairing/approve") in operators
        assert len(operators) >= 7, operators  # the page, state, its feed, pairing x2 (+ HEADs)
        async with signed_in(url, KEY_B) as (user, csrf):
            for method, path in operators:
                status, code = await status_of(user, url, method, path, csrf)
                assert status == 403, (method, path, status)
                if method != "HEAD":
                    assert code == "operator_only", (method, path, code)
            for method, path in sorted(USER_ROUTES - {("GET", "/ui/api/chats/{platform}/{chat}"),
                                                      ("POST", "/ui/logout")}):
                status, _ = await status_of(user, url, method, path, csrf)
                assert status not in (401, 403), (method, path, status)  # the chat is the user's
            assert (await status_of(user, url, "GET", "/ui/api/chats/telegram/42", csrf))[0] == 404
            async with user.get(f"{url}/ui/api/session") as r:
                assert (await r.json())["role"] == "user"
            assert (await status_of(user, url, "POST", "/ui/logout", csrf))[0] == 200
        async with signed_in(url, PASSWORD) as (operator, csrf):
            for method, path in operators:
                status, code = await status_of(operator, url, method, path, csrf)
                assert status not in (401, 403), (method, path, status, code)
            async with operator.get(f"{url}/ui/api/session") as r:
                assert (await r.json())["role"] == "operator"


async def test_a_key_cannot_decide_a_pairing_and_the_operator_can():
    cfg = config({"password": PASSWORD}, api={"api_keys": [KEY_A]})
    async with running(cfg) as gateway:
        url = gateway.url
        person = SimpleNamespace(platform="telegram", chat_id="42", sender_id="42")
        await issue_code(gateway.store, person, time.time(), 600)  # what the gate does for an unknown person
        body = {"platform": "telegram", "user_id": "42"}
        async with signed_in(url, KEY_A) as (user, csrf):
            for action in ("approve", "reject"):
                async with user.post(f"{url}/ui/api/pairing/{action}", json=body, headers={"X-CSRF-Token": csrf}) as r:
                    assert r.status == 403
        assert await gateway.store.pairing_for("telegram", "42", time.time()) is not None  # still waiting
        async with signed_in(url, PASSWORD) as (operator, csrf):
            async with operator.post(f"{url}/ui/api/pairing/approve", json=body,
                                     headers={"X-CSRF-Token": csrf}) as r:
                assert r.status == 200 and (await r.json())["approved"] is True


async def test_the_open_loopback_console_is_the_operator():
    async with running(config({"enabled": True})) as gateway, browser_session() as browser:
        async with browser.get(f"{gateway.url}/ui/api/session") as r:
            assert r.status == 200 and (await r.json())["role"] == "operator"
        async with browser.get(f"{gateway.url}/ui/api/state") as r:
            assert r.status == 200


@pytest.mark.parametrize("total, per_account", [(30, 10), (10, 1000)], ids=["account-bound", "total-bound"])
async def test_one_key_signing_in_again_and_again_never_pushes_out_the_operators_session(monkeypatch, total,
                                                                                          per_account):
    from hermes_gateway._core.web import auth as auth_module
    from web_helpers import OUTSIDE, console_app

    monkeypatch.setattr(auth_module, "MAX_SESSIONS", total)  # the bounds, made small enough to reach
    monkeypatch.setattr(auth_module, "MAX_SESSIONS_PER_ACCOUNT", per_account)
    cfg = config({"password": PASSWORD}, api={"api_keys": [KEY_B]})
    async with console_app(cfg, peer=OUTSIDE) as client:
        assert (await client.post("/ui/login", json={"secret": PASSWORD})).status == 200
        operator_cookie = client.session.cookie_jar.filter_cookies(client.make_url("/ui"))["hermes_console"].value
        auth = client.server.app[auth_module.AUTH_KEY]
        for _ in range(40):  # each a browser of its own, the same key
            client.session.cookie_jar.clear()
            assert (await client.post("/ui/login", json={"secret": KEY_B})).status == 200
        assert len(auth.sessions) <= total and len([s for s in auth.sessions.values() if s.via == "api_key"]) <= per_account
        assert (await client.get("/ui/api/session")).status == 200  # the newest key session is kept
        client.session.cookie_jar.clear()
        r = await client.get("/ui/api/state", headers={"Cookie": f"hermes_console={operator_cookie}"})
        assert r.status == 200
