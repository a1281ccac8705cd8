"""Hostile input on every console route: a 4xx (or a normal answer), never a 5xx, and the chat still works."""

from __future__ import annotations

import random

from web_helpers import browser_session, config, csrf_of, open_feed, running

BODIES = [b"", b"\x00" * 64, b"{", b'{"text": null}', b'{"text": {"a": 1}}', b'{"secret": ["x"]}', b"\xff" * 100,
          b'{"text": "' + b"\\u0000" * 10 + b'"}', b'"just a string"', b"1e999999", b"[" * 5000 + b"]" * 5000,
          bytes(random.Random(7).randrange(256) for _ in range(3000))]
PATHS = ["/ui/api/chat/send", "/ui/api/chat/stop", "/ui/api/chat/upload", "/ui/api/chat/choose", "/ui/login",
         "/ui/logout"]
GETS = ["/ui/api/chat/files/" + "A" * 5000, "/ui/api/chat/files/%00", "/ui/static/" + "x" * 3000,
        "/ui/static/%2e%2e", "/ui/api/session?x=" + "y" * 2000, "/ui/api/chat/history?limit=-1", "/ui/nope",
        "/ui/login?next=javascript:alert(1)"]
HEADERS = [{"Content-Type": "text/plain"}, {"Content-Type": "multipart/form-data; boundary=b0undary"},
           {"Content-Type": "multipart/form-data"}, {"Content-Type": "multipart/mixed; boundary=x"}, {"Content-Type": "application/json; charset=latin-1"},
           {"X-CSRF-Token": "\u00e9" * 10}, {"X-Forwarded-Proto": "https, http"}, {"Origin": "null"},
           {"Host": "[::1"}, {"Host": ""}, {"Cookie": "hermes_console=" + "z" * 300}]


async def test_no_route_answers_a_5xx_to_anything_and_the_chat_still_answers():
    async with running(config({"password": "hostile-test-password"})) as gateway, browser_session() as browser:
        url = gateway.url
        statuses = []
        for signed_in in (False, True):
            if signed_in:
                async with browser.post(f"{url}/ui/login", json={"secret": "hostile-test-password"}) as r:
                    assert r.status == 200
            csrf = await csrf_of(browser, url) if signed_in else "x"
            for path in PATHS:
                for body in BODIES:
                    for headers in [{}, *HEADERS]:
                        headers = {"X-CSRF-Token": csrf, **headers} if "X-CSRF-Token" not in headers else headers
                        if path == "/ui/logout":
                            headers = {k: v for k, v in headers.items() if k != "X-CSRF-Token"}
                        async with browser.post(url + path, data=body, headers=headers) as r:
                            statuses.append((path, r.status))
                            assert r.status < 500, (path, body[:40], headers, r.status, await r.text())
            for path in GETS:
                for headers in [{}, *HEADERS, {"Last-Event-ID": "-5"}, {"Accept": "text/html"}]:
                    async with browser.get(url + path, headers=headers, allow_redirects=False) as r:
                        assert r.status < 500, (path, headers, r.status, await r.text())
            async with browser.get(f"{url}/ui/api/chat/events", headers={"Last-Event-ID": "not a number"},
                                   timeout=None) as r:
                assert r.status in (200, 401)
        assert any(status == 202 for _, status in statuses)  # some hostile-looking bodies are fine messages
        feed = await open_feed(browser, url)
        async with browser.post(f"{url}/ui/api/chat/send", json={"text": "echo: still answering"},
                                headers={"X-CSRF-Token": await csrf_of(browser, url)}) as r:
            assert r.status == 202
        await feed.until(lambda ev: any(e["type"] == "text" and e["final"] and e["text"] == "still answering"
                                        for e in ev))
        feed.close()
