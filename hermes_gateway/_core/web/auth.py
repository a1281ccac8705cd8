"""Who may use the web console: sign-in, sessions, CSRF, and the loopback rule.

The rules, in one place (every ``/ui`` route but the sign-in page and the
static files goes through :func:`require_session`):

* **Sign-in** with ``web.password`` or any key of ``api_server.api_keys``,
  compared in constant time (SHA-256 digests through
  :func:`hmac.compare_digest`, every candidate checked, so neither the
  length nor which key matched shows in the timing). Wrong guesses are
  throttled per client address: after :data:`FREE_GUESSES` failures each
  further try waits twice as long as the last (capped at
  :data:`MAX_LOCKOUT`), answered 429 with ``Retry-After``.
* **Open on loopback**: with no password and no keys configured, a browser
  on this machine (peer address loopback *and* a loopback ``Host``, so a
  DNS-rebound name gets nothing) is given a session without signing in.
  From any other address nothing but the sign-in page and static assets is
  served without a session — and with nothing configured, nobody can sign in.
* **The session cookie** (``hermes_console``) is an opaque random token
  (the session lives in this process's memory), ``HttpOnly``,
  ``SameSite=Strict``, ``Path=/ui``, and ``Secure`` when the request came
  over TLS — directly, or as ``X-Forwarded-Proto: https`` from a proxy on
  loopback (a header from anyone else is ignored, since a client could
  simply send it).
* **CSRF**: each session has its own token; every state-changing request
  (POST, PUT, PATCH, DELETE) must carry it in ``X-CSRF-Token`` (the page's
  script reads it from ``GET /ui/api/session``), compared in constant time;
  without it the answer is 403 JSON. The sign-in POST, which has no session
  yet, is checked by ``Origin`` instead (a foreign origin gets 403).

For other console routes (the dashboard, a third party's page), protect a
handler with the decorators::

    from hermes_gateway._core.web.auth import require_session, require_csrf

    @require_session          # GET pages and JSON: a session, else 401 JSON (or a redirect for a page)
    async def overview(request): ...

    @require_csrf             # POST/PUT/DELETE: a session AND the X-CSRF-Token header, else 401/403 JSON
    async def approve(request): ...

Inside, :func:`session_of` gives the :class:`WebSession`.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from aiohttp import web

from ..config import Config, is_loopback_host
from .responses import json_error

COOKIE = "hermes_console"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Failed sign-ins from one address before each further try must wait.
FREE_GUESSES = 5
#: The longest wait between two tries from one address, in seconds.
MAX_LOCKOUT = 300.0
#: Sessions kept at once (the oldest is dropped beyond it: a flood of sign-ins cannot fill memory).
MAX_SESSIONS = 10_000
#: Addresses whose failed guesses are remembered at once.
MAX_TRACKED = 10_000
#: Longest sign-in secret read (a password or an API key; anything longer is wrong anyway).
MAX_SECRET = 4096

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Where a request carries its session (RequestKey exists in aiohttp >= 3.12 only).
SESSION: Any = web.RequestKey("hermes_web_session", object) if hasattr(web, "RequestKey") else "hermes_web_session"
NEW_SESSION: Any = web.RequestKey("hermes_web_new_session", object) if hasattr(web, "RequestKey") \
    else "hermes_web_new_session"


@dataclass
class WebSession:
    """One signed-in browser: its CSRF token and its one chat (the web platform's ``chat_id``)."""

    token: str
    csrf: str
    chat_id: str
    created: float
    last_seen: float
    #: How it was opened: "password", "api_key" or "loopback" (the open console on this machine).
    via: str = "password"
    data: dict = field(default_factory=dict)  # other console parts keep per-session state here


@dataclass
class _Guesses:
    failures: int = 0
    next_try: float = 0.0


class WebAuth:
    """The sessions of one gateway's console and the rules above. Kept on the app (:data:`AUTH_KEY`)."""

    def __init__(self, config: Config, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.clock = clock
        self.ttl = config.web.session_hours * 3600.0
        self.sessions: OrderedDict[str, WebSession] = OrderedDict()
        self._guesses: OrderedDict[str, _Guesses] = OrderedDict()
        secrets_ = [("password", config.web.password)] if config.web.password else []
        secrets_ += [("api_key", key) for key in config.api_server.api_keys]
        self._digests = [(via, hashlib.sha256(s.encode()).digest()) for via, s in secrets_]

    # -- who is asking ----------------------------------------------------------------------------

    @property
    def can_sign_in(self) -> bool:
        """Whether any secret is configured (without one the console is open on loopback only)."""
        return bool(self._digests)

    def open_to(self, request: web.Request) -> bool:
        """No secret configured and the browser is on this machine (peer and Host both loopback)."""
        return not self.can_sign_in and peer_is_loopback(request) and host_is_loopback(request)

    def current(self, request: web.Request) -> WebSession | None:
        """The request's live session (its last use refreshed), or None."""
        token = request.cookies.get(COOKIE, "")
        if not token or len(token) > 128:
            return None
        session = self.sessions.get(token)
        if session is None:
            return None
        now = self.clock()
        if now - session.last_seen > self.ttl:
            self.sessions.pop(token, None)
            return None
        session.last_seen = now
        self.sessions.move_to_end(token)
        return session

    # -- signing in -------------------------------------------------------------------------------

    def wait_before_try(self, address: str) -> float:
        """Seconds this address must still wait before its next sign-in try (0: it may try now)."""
        guesses = self._guesses.get(address)
        if guesses is None:
            return 0.0
        return max(0.0, guesses.next_try - self.clock())

    def check_secret(self, address: str, secret: str) -> str | None:
        """How ``secret`` signs in ("password"/"api_key"), or None; a failure counts against ``address``."""
        digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()
        found: str | None = None
        for via, expected in self._digests:  # every candidate compared: the timing says nothing of which
            if hmac.compare_digest(digest, expected) and found is None:
                found = via
        if found is not None:
            self._guesses.pop(address, None)
            return found
        guesses = self._guesses.setdefault(address, _Guesses())
        self._guesses.move_to_end(address)
        while len(self._guesses) > MAX_TRACKED:
            self._guesses.popitem(last=False)
        guesses.failures += 1
        if guesses.failures >= FREE_GUESSES:
            delay = min(MAX_LOCKOUT, 2.0 ** (guesses.failures - FREE_GUESSES))
            guesses.next_try = self.clock() + delay
        return None

    def open_session(self, via: str) -> WebSession:
        """A new session with a fresh token, CSRF token and chat."""
        now = self.clock()
        session = WebSession(token=secrets.token_urlsafe(32), csrf=secrets.token_urlsafe(32),
                             chat_id="w" + secrets.token_hex(8), created=now, last_seen=now, via=via)
        self.sessions[session.token] = session
        while len(self.sessions) > MAX_SESSIONS:
            self.sessions.popitem(last=False)
        return session

    def close_session(self, session: WebSession) -> None:
        self.sessions.pop(session.token, None)

    def set_cookie(self, request: web.Request, response: web.StreamResponse, session: WebSession) -> None:
        """The session cookie with its flags (see the module docstring)."""
        response.set_cookie(COOKIE, session.token, path="/ui", httponly=True, samesite="Strict",
                            secure=came_over_tls(request), max_age=int(self.ttl))

    def clear_cookie(self, request: web.Request, response: web.StreamResponse) -> None:
        response.del_cookie(COOKIE, path="/ui")
        response.set_cookie(COOKIE, "", path="/ui", httponly=True, samesite="Strict", secure=came_over_tls(request),
                            max_age=0)

    def csrf_ok(self, request: web.Request, session: WebSession) -> bool:
        """The request carries the session's CSRF token (constant-time compare)."""
        sent = request.headers.get(CSRF_HEADER, "")
        return hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), session.csrf.encode())


AUTH_KEY = web.AppKey("hermes_gateway._core.web.auth", WebAuth)


def peer_is_loopback(request: web.Request) -> bool:
    """The TCP peer is this machine (``request.remote``: never a header a client can set)."""
    return bool(request.remote) and is_loopback_host(request.remote or "")


def host_is_loopback(request: web.Request) -> bool:
    """The ``Host`` the browser asked for is a loopback name (a DNS-rebound name is not)."""
    host = request.host or ""
    if host.startswith("["):
        name = host[1:].partition("]")[0]
    else:
        name = host.rpartition(":")[0] if host.count(":") == 1 else host
    return is_loopback_host(name) if name else False


def came_over_tls(request: web.Request) -> bool:
    """TLS to us, or ``X-Forwarded-Proto: https`` set by a reverse proxy on this machine."""
    if request.secure:
        return True
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return forwarded == "https" and peer_is_loopback(request)


def same_origin(request: web.Request) -> bool:
    """No ``Origin`` header (not a browser's cross-site request), or one naming this very host."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    scheme, sep, rest = origin.partition("://")
    return bool(sep) and rest == request.host and scheme in ("http", "https")


def auth_of(request: web.Request) -> WebAuth:
    return request.app[AUTH_KEY]


def session_of(request: web.Request) -> WebSession:
    """The session :func:`require_session` found for this request."""
    session = request.get(SESSION)
    if not isinstance(session, WebSession):
        raise RuntimeError("session_of() outside a handler wrapped by require_session")
    return session


def ensure_session(request: web.Request) -> WebSession | None:
    """The request's session; on the open loopback console, a new one (the cookie is set by the caller)."""
    auth = auth_of(request)
    session = auth.current(request)
    if session is None and auth.open_to(request):
        session = auth.open_session("loopback")
        request[NEW_SESSION] = session
    return session


def wants_page(request: web.Request) -> bool:
    return request.method == "GET" and "text/html" in request.headers.get("Accept", "")


def require_session(handler: Handler) -> Handler:
    """Serve ``handler`` only with a live session: else a redirect to the sign-in page (a page) or 401 JSON."""

    @functools.wraps(handler)
    async def guarded(request: web.Request) -> web.StreamResponse:
        session = ensure_session(request)
        if session is None:
            if wants_page(request):
                raise web.HTTPSeeOther("/ui/login")
            return json_error(401, "sign in first", "unauthorized")
        if request.method not in SAFE_METHODS and not auth_of(request).csrf_ok(request, session):
            return json_error(403, f"missing or wrong {CSRF_HEADER} header", "csrf")
        request[SESSION] = session
        response = await handler(request)
        new = request.get(NEW_SESSION)
        if new is not None and not response.prepared:
            auth_of(request).set_cookie(request, response, new)
        return response

    return guarded


def require_csrf(handler: Handler) -> Handler:
    """For a state-changing route: a session and the CSRF header, also if it is mounted for GET by mistake."""

    @functools.wraps(handler)
    async def checked(request: web.Request) -> web.StreamResponse:
        if not auth_of(request).csrf_ok(request, session_of(request)):
            return json_error(403, f"missing or wrong {CSRF_HEADER} header", "csrf")
        return await handler(request)

    return require_session(checked)
