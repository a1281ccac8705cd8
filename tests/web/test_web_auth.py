"""Who gets into the console: sign-in, the loopback rule, cookie flags, CSRF, throttling (issue 27 item 1)."""

from __future__ import annotations

import pytest

from hermes_gateway._core.web.auth import AUTH_KEY
from web_helpers import OUTSIDE, browser_session, config, console_app

PASSWORD = "correct horse battery"
KEY = "sk-console-test-key-0001"
GATED = [("GET", "/ui"), ("GET", "/ui/dashboard"), ("GET", "/ui/api/session"), ("GET", "/ui/api/chat/events"),
         ("GET", "/ui/api/chat/history"), ("GET", "/ui/api/chat/files/abc"), ("POST", "/ui/api/chat/send"),
         ("POST", "/ui/api/chat/stop"), ("POST", "/ui/api/chat/upload"), ("POST", "/ui/api/chat/choose"),
         ("POST", "/ui/logout")]


def cookie_header(response) -> str:
    return "; ".join(v for k, v in response.headers.items() if k.lower() == "set-cookie")


async def sign_in(client, secret: str, **headers: str):
    return await client.post("/ui/login", json={"secret": secret}, headers=headers)


@pytest.mark.parametrize("web", [{"password": PASSWORD}, {"enabled": True}], ids=["password-set", "nothing-set"])
async def test_from_another_machine_nothing_but_the_sign_in_page_and_assets_without_a_session(web):
    async with console_app(config(web), peer=OUTSIDE) as client:
        for method, path in GATED:
            r = await client.request(method, path, allow_redirects=False, headers={"Accept": "application/json"})
            assert r.status == 401, (method, path, r.status)
            assert (await r.json())["error"]["code"] == "unauthorized"
        page = await client.get("/ui", allow_redirects=False, headers={"Accept": "text/html"})
        assert page.status == 303 and page.headers["Location"] == "/ui/login"
        assert "Set-Cookie" not in page.headers  # no session is handed out
        assert (await client.get("/ui/login")).status == 200
        for asset in ("console.css", "login.js"):
            assert (await client.get(f"/ui/static/{asset}")).status == 200


async def test_with_nothing_configured_nobody_signs_in_from_another_machine():
    async with console_app(config({"enabled": True}), peer=OUTSIDE) as client:
        r = await sign_in(client, "anything at all")
        assert r.status == 401 and (await r.json())["error"]["code"] == "no_secret"
        assert (await client.get("/ui/api/session")).status == 401


async def test_the_open_console_is_for_this_machine_only_and_not_for_a_rebound_host_name():
    async with console_app(config(), peer="127.0.0.1") as client:
        r = await client.get("/ui/api/session")
        assert r.status == 200 and (await r.json())["via"] == "loopback"
        client.session.cookie_jar.clear()  # a browser keeps 127.0.0.1's cookie from evil.example's pages
        rebound = await client.get("/ui/api/session", headers={"Host": "evil.example:8642"})
        assert rebound.status == 401  # DNS rebinding: a page of evil.example resolved to 127.0.0.1
    async with console_app(config(), peer=OUTSIDE) as client:
        assert (await client.get("/ui/api/session")).status == 401


async def test_a_password_is_needed_on_this_machine_too_once_one_is_set():
    async with console_app(config({"password": PASSWORD}), peer="127.0.0.1") as client:
        assert (await client.get("/ui/api/session")).status == 401


async def test_signing_in_with_the_password_gives_an_httponly_strict_cookie_then_access():
    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client:
        r = await sign_in(client, PASSWORD)
        assert r.status == 200, await r.text()
        flags = cookie_header(r)
        assert "hermes_console=" in flags and "HttpOnly" in flags and "SameSite=Strict" in flags
        assert "Path=/ui" in flags and "Secure" not in flags  # plain http: a Secure cookie would never come back
        session = await client.get("/ui/api/session")
        assert session.status == 200 and (await session.json())["via"] == "password"
        assert (await client.get("/ui", headers={"Accept": "text/html"})).status == 200


async def test_the_cookie_is_secure_behind_tls_from_a_local_proxy_only():
    async with console_app(config({"password": PASSWORD}), peer="127.0.0.1") as client:
        r = await sign_in(client, PASSWORD, **{"X-Forwarded-Proto": "https"})
        assert r.status == 200 and "Secure" in cookie_header(r)
    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client:
        r = await sign_in(client, PASSWORD, **{"X-Forwarded-Proto": "https"})  # anyone can send the header
        assert r.status == 200 and "Secure" not in cookie_header(r)


async def test_an_api_key_signs_in_too():
    async with console_app(config(api={"api_keys": [KEY]}), peer=OUTSIDE) as client:
        assert (await sign_in(client, "sk-console-test-key-0002")).status == 401
        r = await sign_in(client, KEY)
        assert r.status == 200
        assert (await (await client.get("/ui/api/session")).json())["via"] == "api_key"


async def test_wrong_guesses_are_throttled_even_when_the_next_one_is_right():
    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client:
        client.server.app[AUTH_KEY].throttle.clock = lambda: 1000.0  # no wait runs out on a slow machine
        for _ in range(5):
            r = await sign_in(client, "wrong guess")
            assert r.status == 401
        blocked = await sign_in(client, PASSWORD)
        assert blocked.status == 429 and int(blocked.headers["Retry-After"]) >= 1
        assert (await blocked.json())["error"]["code"] == "throttled"
        assert (await client.get("/ui/api/session")).status == 401


async def test_state_changing_requests_without_the_csrf_token_are_refused():
    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client:
        assert (await sign_in(client, PASSWORD)).status == 200
        csrf = (await (await client.get("/ui/api/session")).json())["csrf"]
        for path in ("/ui/api/chat/send", "/ui/api/chat/stop", "/ui/api/chat/upload", "/ui/api/chat/choose",
                     "/ui/logout"):
            for headers in ({}, {"X-CSRF-Token": "not-the-token"}, {"X-CSRF-Token": csrf[:-1]}):
                r = await client.post(path, json={"text": "hi"}, headers=headers)
                assert r.status == 403, (path, headers)
                assert r.headers["Content-Type"].startswith("application/json")
                assert (await r.json())["error"]["code"] == "csrf"
        out = await client.post("/ui/logout", headers={"X-CSRF-Token": csrf})
        assert out.status == 200
        assert (await client.get("/ui/api/session")).status == 401  # the session is gone, not just the cookie


async def test_the_open_console_still_wants_the_csrf_token():
    async with console_app(config(), peer="127.0.0.1") as client:
        r = await client.post("/ui/api/chat/send", json={"text": "hi"})
        assert r.status == 403 and (await r.json())["error"]["code"] == "csrf"


async def test_sign_in_from_a_foreign_origin_is_refused():
    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client:
        r = await sign_in(client, PASSWORD, Origin="https://evil.example")
        assert r.status == 403 and "Set-Cookie" not in r.headers


@pytest.mark.parametrize("body, status", [
    (b"", 400), (b"not json", 400), (b"[1, 2]", 400), (b'{"secret": 5}', 400), (b'{"secret": ""}', 400),
    (b'{"secret": "' + b"x" * 4200 + b'"}', 400), (b'{"secret": "' + b"x" * 5000 + b'"}', 413), (b"\xff\xfe", 400), (b"[" * 100_000, 413), (b"{" * 4000, 400),
])
async def test_a_malformed_sign_in_is_a_4xx(body, status):
    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client:
        r = await client.post("/ui/login", data=body, headers={"Content-Type": "application/json"})
        assert r.status == status, await r.text()
        assert r.headers["Content-Type"].startswith("application/json")


async def test_static_files_are_served_by_exact_name_only():
    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client:
        for name in ("..%2Fauth.py", "nope.js", "__init__.py", "%2e%2e%2fplugin.py"):
            r = await client.get(f"/ui/static/{name}")
            assert r.status == 404, name
        gz = await client.get("/ui/static/chat.js", headers={"Accept-Encoding": "gzip"})
        plain = await client.get("/ui/static/chat.js", headers={"Accept-Encoding": "identity"})
        assert gz.status == plain.status == 200 and gz.headers["Content-Encoding"] == "gzip"
        assert "Content-Encoding" not in plain.headers
        assert await gz.read() == await plain.read()  # the client unpacks it: the same script either way


async def test_every_page_forbids_inline_scripts_and_framing():
    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client:
        r = await client.get("/ui/login")
        csp = r.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert r.headers["X-Content-Type-Options"] == "nosniff"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_unused_for_session_hours_is_gone():
    from aiohttp.test_utils import make_mocked_request

    from hermes_gateway._core.web.auth import COOKIE, WebAuth

    clock = Clock()
    auth = WebAuth(config({"password": PASSWORD, "session_hours": 1}), clock=clock)
    session = auth.open_session("password")
    request = make_mocked_request("GET", "/ui", headers={"Cookie": f"{COOKIE}={session.token}"})
    clock.now += 3500
    assert auth.current(request) is session  # used: its hour starts again
    clock.now += 3500
    assert auth.current(request) is session
    clock.now += 3601
    assert auth.current(request) is None and session.token not in auth.sessions


async def test_the_sign_in_page_sends_a_browser_that_needs_none_to_the_chat():
    async with console_app(config(), peer="127.0.0.1") as client:  # the open console
        r = await client.get("/ui/login", allow_redirects=False)
        assert r.status == 303 and r.headers["Location"] == "/ui"
    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client:
        assert (await client.get("/ui/login", allow_redirects=False)).status == 200
        assert (await sign_in(client, PASSWORD)).status == 200
        r = await client.get("/ui/login", allow_redirects=False)
        assert r.status == 303 and r.headers["Location"] == "/ui"


@pytest.mark.parametrize("host", ["[::1", "[::1]x", "[::1]:", "[::1]:port", "[::1]]", "[::1]:8642:1", "[]", "[::1]:99999",
                                  "localhost:", "localhost:x", "127.0.0.1:1:2", "::1", "localhost/x"])
async def test_a_malformed_host_is_refused_never_taken_for_loopback(host):
    async with console_app(config(), peer="127.0.0.1") as client:  # the open console
        for path, accept in (("/ui/api/session", "application/json"), ("/ui", "text/html"),
                             ("/ui/login", "text/html")):
            r = await client.get(path, headers={"Host": host, "Accept": accept}, allow_redirects=False)
            assert r.status == 400, (host, path, r.status)
            assert (await r.json())["error"]["code"] == "bad_host" and "Set-Cookie" not in r.headers


@pytest.mark.parametrize("host", ["127.0.0.1:8642", "localhost", "LOCALHOST:1", "[::1]:8642", "[::1]", "127.0.0.1"])
async def test_a_well_formed_loopback_host_opens_the_console(host):
    async with console_app(config(), peer="127.0.0.1") as client:
        r = await client.get("/ui/api/session", headers={"Host": host})
        assert r.status == 200 and (await r.json())["via"] == "loopback"


async def test_every_answer_under_ui_carries_the_pages_security_headers_404_and_405_included():
    from hermes_gateway._core.web.responses import SECURITY_HEADERS

    from web_helpers import running

    async with running(config({"password": PASSWORD})) as gateway, browser_session() as browser:
        url = gateway.url
        for method, path, status in [("GET", "/ui/nope", 404), ("GET", "/ui/api/nope/deeper", 404),
                                     ("GET", "/ui/static/nope.js", 404), ("DELETE", "/ui/api/state", 405),
                                     ("PUT", "/ui/login", 405), ("HEAD", "/ui/api/chat/events", 405),
                                     ("GET", "/ui/api/state", 401), ("GET", "/ui/login", 200),
                                     ("GET", "/ui/api/session", 400)]:
            headers = {"Host": "[::1"} if status == 400 else {}
            async with browser.request(method, url + path, headers=headers, allow_redirects=False) as r:
                assert r.status == status, (method, path, r.status)
                for name, value in SECURITY_HEADERS.items():
                    assert r.headers.get(name) == value, (method, path, name, r.headers.get(name))
        async with browser.get(f"{url}/v1/nope") as r:  # the API's answers are not the console's
            assert r.status in (401, 404) and "Content-Security-Policy" not in r.headers


async def test_the_open_console_is_not_opened_through_a_proxy_on_this_machine():
    async with console_app(config(), peer="127.0.0.1") as client:  # nginx on this machine, Host rewritten
        r = await client.get("/ui/api/session", headers={"X-Forwarded-For": "203.0.113.7"})
        assert r.status == 401 and "Set-Cookie" not in r.headers


async def test_the_cookie_is_secure_behind_tls_from_a_trusted_proxy_on_another_machine():
    cfg = config({"password": PASSWORD, "trusted_proxies": [f"{OUTSIDE}/32"]})
    async with console_app(cfg, peer=OUTSIDE) as client:
        r = await sign_in(client, PASSWORD, **{"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.3"})
        assert r.status == 200 and "Secure" in cookie_header(r)
