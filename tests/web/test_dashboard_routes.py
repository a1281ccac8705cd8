"""The dashboard's routes on a running gateway's listener: sign-in and CSRF, the JSON, the SSE feed, a stored
chat, pairing decisions, hostile input, and a bounded stop with a dashboard open."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from hermes_gateway.testing import eventually
from dashboard_support import CONSOLE, TOKEN, telegram_gateway, until_state
from web_helpers import OUTSIDE, browser_session, config, console_app, csrf_of

pytest.importorskip("hermes_telegram")
from hermes_telegram.emulator import BotApiEmulator  # noqa: E402

ROUTES = [("GET", "/ui/api/state"), ("GET", "/ui/api/state/events"), ("GET", "/ui/api/chats/telegram/42"),
          ("POST", "/ui/api/pairing/approve"), ("POST", "/ui/api/pairing/reject")]


@pytest.fixture
async def api():
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator


class StateFeed:
    """``/ui/api/state/events`` as the browser's EventSource reads it: each ``state`` event's snapshot."""

    def __init__(self, response) -> None:
        self.response = response
        self.states: list[dict] = []
        self.pings = 0
        self.ended = asyncio.Event()
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        event = None
        try:
            async for raw in self.response.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[len("event: "):]
                elif line.startswith("data: ") and event == "state":
                    self.states.append(json.loads(line[len("data: "):]))
                elif line.startswith(": ping"):
                    self.pings += 1
        finally:
            self.ended.set()

    async def until(self, predicate, timeout: float = 20.0) -> dict:
        await eventually(lambda: self.states and predicate(self.states[-1]), lambda: self.states[-1:], timeout=timeout)
        return self.states[-1]


def telegram_of(state: dict) -> dict:
    return next(p for p in state["platforms"] if p["name"] == "telegram")


async def test_nothing_of_the_dashboard_without_a_session_from_another_machine():
    async with console_app(config({"password": "correct horse battery"}), peer=OUTSIDE) as client:
        for method, path in [*ROUTES, ("GET", "/ui/dashboard")]:
            r = await client.request(method, path, allow_redirects=False, headers={"Accept": "application/json"})
            assert r.status == 401, (method, path, r.status)


async def test_the_state_as_json_and_live_over_sse_as_a_person_talks(api):
    gateway = telegram_gateway(api.base_url, builtins=CONSOLE)
    async with gateway, browser_session() as browser:
        await until_state(gateway, "telegram", "connected")
        url = gateway.url
        async with browser.get(f"{url}/ui/api/state") as r:
            assert r.status == 200 and r.headers["Content-Type"].startswith("application/json")
            assert telegram_of(await r.json())["connected"] is True
        page = await browser.get(f"{url}/ui/dashboard", headers={"Accept": "text/html"})
        assert page.status == 200 and "dashboard.js" in await page.text()
        response = await browser.get(f"{url}/ui/api/state/events")
        assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
        feed = StateFeed(response)
        first = await feed.until(lambda s: True)
        assert first["conversations"] == [] and telegram_of(first)["connected"] is True
        await api.push_message(42, "echo: <script>alert(1)</script> hello")
        state = await feed.until(lambda s: s["conversations"] and len(s["conversations"][0]["last_messages"]) == 2)
        assert state["conversations"][0]["last_messages"][1]["text"] == "<script>alert(1)</script> hello"
        async with browser.get(f"{url}/ui/api/chats/telegram/42") as r:
            chat = await r.json()
        assert r.status == 200 and [m["role"] for m in chat["messages"]] == ["user", "assistant"]
        assert chat["messages"][1]["text"] == "<script>alert(1)</script> hello"
        started = time.monotonic()
        await gateway.stop()  # a dashboard is still open: the bounded stop does not wait for it
        await asyncio.wait_for(feed.ended.wait(), 5)
        assert time.monotonic() - started < 4.0
        feed.task.cancel()


async def test_snapshots_come_only_on_change_and_at_most_a_few_a_second(api):
    gateway = telegram_gateway(api.base_url, builtins=CONSOLE, tokens_per_second=20)
    async with gateway, browser_session() as browser:
        await until_state(gateway, "telegram", "connected")  # its first poll answered: a change of its own
        feed = StateFeed(await browser.get(f"{gateway.url}/ui/api/state/events"))
        await feed.until(lambda s: True)
        await asyncio.sleep(1.2)
        assert len(feed.states) == 1, "nothing changed: nothing more was sent"
        started = time.monotonic()
        await api.push_message(43, "echo: " + " ".join(f"w{i}" for i in range(40)))  # ~2 s of words, calls rising
        await feed.until(lambda s: s["conversations"] != [], timeout=20)
        elapsed = time.monotonic() - started
        assert len(feed.states) - 1 <= 2 * elapsed + 2  # one read per half second at most
        assert any(s["in_flight"] for s in feed.states), "the reply in flight was seen"
        feed.task.cancel()
        feed.response.close()


async def test_open_streams_are_bounded(api):
    gateway = telegram_gateway(api.base_url, builtins=CONSOLE)
    async with gateway, browser_session() as browser:
        from hermes_gateway._core.web.dashboard import FEED_KEY

        gateway.app[FEED_KEY].max_listeners = 1
        first = await browser.get(f"{gateway.url}/ui/api/state/events")
        second = await browser.get(f"{gateway.url}/ui/api/state/events")
        assert first.status == 200 and second.status == 429 and second.headers["Retry-After"]
        first.close()
        await eventually(lambda: gateway.app[FEED_KEY].listeners == 0, lambda: gateway.app[FEED_KEY].listeners)
        third = await browser.get(f"{gateway.url}/ui/api/state/events")
        assert third.status == 200
        third.close()


async def test_approve_a_pairing_request_needs_the_csrf_token_and_lets_the_person_talk(api):
    gateway = telegram_gateway(api.base_url, builtins=CONSOLE, access={"unknown_users": "pair"})
    async with gateway, browser_session() as browser:
        url = gateway.url
        await api.push_message(60, "hello?", user_id=600)
        await eventually(lambda: "pairing code" in " ".join(api.screen(60)), lambda: api.screen(60))
        body = {"platform": "telegram", "user_id": "600"}
        refused = await browser.post(f"{url}/ui/api/pairing/approve", json=body)
        assert refused.status == 403 and (await refused.json())["error"]["code"] == "csrf"
        csrf = await csrf_of(browser, url)
        headers = {"X-CSRF-Token": csrf}
        for bad, status in [("not json", 400), ("[1]", 400), (json.dumps({"platform": 1}), 400),
                            (json.dumps({"platform": "telegram", "user_id": "x" * 300}), 400),
                            (json.dumps({"platform": "telegram", "user_id": "nobody"}), 404),
                            ("x" * 100_000, 413)]:
            r = await browser.post(f"{url}/ui/api/pairing/approve", data=bad, headers=headers)
            assert r.status == status, (bad[:40], r.status, await r.text())
        ok = await browser.post(f"{url}/ui/api/pairing/approve", json=body, headers=headers)
        assert ok.status == 200 and (await ok.json())["approved"] is True
        again = await browser.post(f"{url}/ui/api/pairing/approve", json=body, headers=headers)
        assert again.status == 404
        await api.push_message(60, "echo: I am in", user_id=600)
        await eventually(lambda: api.screen(60)[-1:] == ["I am in"], lambda: api.screen(60))


async def test_a_stored_chat_route_refuses_hostile_input_with_4xx(api):
    gateway = telegram_gateway(api.base_url, builtins=CONSOLE)
    async with gateway, browser_session() as browser:
        url = gateway.url
        for path, status in [("/ui/api/chats/telegram/nobody", 404), (f"/ui/api/chats/telegram/{'9' * 300}", 400),
                             ("/ui/api/chats/telegram/42?thread=" + "t" * 300, 400),
                             ("/ui/api/chats/%00%ff/..%2F..", 404)]:
            async with browser.get(f"{url}{path}") as r:
                assert r.status == status, (path, r.status)
                assert "error" in await r.json()


async def test_reject_a_pairing_request_and_the_person_is_asked_again_with_a_new_code(api):
    gateway = telegram_gateway(api.base_url, builtins=CONSOLE, access={"unknown_users": "pair"})
    async with gateway, browser_session() as browser:
        url = gateway.url
        await api.push_message(61, "hello?", user_id=610)
        await eventually(lambda: "pairing code" in " ".join(api.screen(61)), lambda: api.screen(61))
        [first] = await gateway.store.pairings(time.time())
        headers = {"X-CSRF-Token": await csrf_of(browser, url)}
        r = await browser.post(f"{url}/ui/api/pairing/reject", json={"platform": "telegram", "user_id": "610"},
                               headers=headers)
        assert r.status == 200 and (await r.json())["approved"] is False
        async with browser.get(f"{url}/ui/api/state") as state:
            assert (await state.json())["pairing"] == []
        assert not await gateway.store.is_approved("telegram", "610")
        await api.push_message(61, "please?", user_id=610)
        await eventually(lambda: len(api.screen(61)) == 2, lambda: api.screen(61))
        [second] = await gateway.store.pairings(time.time())
        assert second.code != first.code and "pairing code" in api.screen(61)[-1]
