"""Who may use the web console: sign-in, roles, sessions, CSRF, and the loopback rule.

The rules, in one place (every ``/ui`` route but the sign-in page and the
static files goes through :func:`require_session`):

* **Sign-in** with ``web.password`` or any key of ``api_server.api_keys``,
  compared in constant time (SHA-256 digests through
  :func:`hmac.compare_digest`, every candidate checked, so neither the
  length nor which key matched shows in the timing). Wrong guesses are
  throttled per client address (:mod:`.throttle`: an attempt is counted
  before its secret is compared, so parallel tries cannot slip past it), the
  address read from ``X-Forwarded-For`` only when the peer is one of
  ``web.trusted_proxies`` (:mod:`.client_address`).
* **Two roles.** ``web.password`` (and the open loopback console) is the
  **operator**: the dashboard, every conversation, pairing, approvals. An
  API key is a **user** of that key: the web chat and the key's own API
  conversations, nothing else — every other route answers 403 JSON (a
  route is the operator's unless it says otherwise: :func:`user_session`),
  and another chat's conversation 404 (:func:`may_read`). Each account (the
  operator, each key) holds at most :data:`MAX_SESSIONS_PER_ACCOUNT`
  sessions, so one key signing in again and again cannot push anyone
  else's session out.
* **Open on loopback**: with no password and no keys configured, a browser
  on this machine (peer address loopback *and* a well-formed loopback
  ``Host``, so a DNS-rebound name gets nothing, and no proxy's forwarding
  header) is given a session without signing in.
  From any other address nothing but the sign-in page and static assets is
  served without a session — and with nothing configured, nobody can sign in.
  A malformed ``Host`` (``[::1``) is refused with 400 on every guarded route.
* **The session cookie** (``hermes_console``) is an opaque random token
  (the session lives in this process's memory), ``HttpOnly``,
  ``SameSite=Strict``, ``Path=/ui``, and ``Secure`` when the request came
  over TLS — directly, or as ``X-Forwarded-Proto: https`` from a proxy on
  loopback or in ``web.trusted_proxies`` (a header from anyone else is
  ignored, since a client could simply send it).
* **CSRF**: each session has its own token; every state-changing request
  (POST, PUT, PATCH, DELETE) must carry it in ``X-CSRF-Token`` (the page's
  script reads it from ``GET /ui/api/session``), compared in constant time;
  without it the answer is 403 JSON. The sign-in POST, which has no session
  yet, is checked by ``Origin`` instead (a foreign origin gets 403).

For other console routes (the dashboard, a third party's page), protect a
handler with the decorators::

    from hermes_gateway._core.web.auth import require_session, require_csrf, user_session

    @require_session          # GET pages and JSON, the operator's: a session, else 401 JSON (or a redirect
    async def overview(request): ...  # for a page); a user's session gets 403

    @require_csrf             # POST/PUT/DELETE: a session AND the X-CSRF-Token header, else 401/403 JSON
    async def approve(request): ...

    @user_session             # open to a user (an API key) too: the handler shows them only what is theirs
    async def mine(request): ...

Inside, :func:`session_of` gives the :class:`WebSession`.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from aiohttp import web

from ..config import Config, is_loopback_host
from ..store.api_owners import API_PLATFORM, owned_by, owner_fingerprint
from .client_address import client_of, parse_address, parse_networks, throttle_key, trusted, was_forwarded
from .responses import json_error
from .throttle import Throttle

COOKIE = "hermes_console"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Sessions kept at once (the largest account's oldest is dropped beyond it: a flood cannot fill memory).
MAX_SESSIONS = 10_000
#: Sessions one account (the operator, one API key, the open console) keeps; its own oldest goes beyond it.
MAX_SESSIONS_PER_ACCOUNT = 1_000
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
    #: An API key's session: the key's fingerprint (:func:`..store.api_owners.owner_fingerprint`), else None.
    owner: str | None = None
    data: dict = field(default_factory=dict)  # other console parts keep per-session state here

    @property
    def operator(self) -> bool:
        """The operator (the password, the open loopback console), not a user of an API key."""
        return self.via != "api_key"

    @property
    def role(self) -> str:
        return "operator" if self.operator else "user"

    @property
    def account(self) -> str:
        """Whose session this is, for the per-account bound: the way in, and which key (its fingerprint)."""
        return f"key:{self.owner}" if self.owner else self.via


@dataclass(frozen=True)
class Account:
    """Who a right secret signs in: ``via`` ("password" or "api_key") and, for a key, its fingerprint."""

    via: str
    owner: str | None = None


class WebAuth:
    """The sessions of one gateway's console and the rules above. Kept on the app (:data:`AUTH_KEY`)."""

    def __init__(self, config: Config, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.clock = clock
        self.ttl = config.web.session_hours * 3600.0
        self.sessions: OrderedDict[str, WebSession] = OrderedDict()
        self._by_account: dict[str, OrderedDict[str, None]] = {}  # account -> its tokens, oldest first
        self.throttle = Throttle(clock=clock)
        self.proxies = parse_networks(config.web.trusted_proxies)
        accounts = [(Account("password"), config.web.password)] if config.web.password else []
        accounts += [(Account("api_key", owner_fingerprint(key)), key) for key in config.api_server.api_keys]
        self._digests = [(account, hashlib.sha256(s.encode()).digest()) for account, s in accounts]

    # -- who is asking ----------------------------------------------------------------------------

    @property
    def can_sign_in(self) -> bool:
        """Whether any secret is configured (without one the console is open on loopback only)."""
        return bool(self._digests)

    def open_to(self, request: web.Request) -> bool:
        """No secret configured and the browser is on this machine (peer and Host loopback, not forwarded)."""
        return not self.can_sign_in and peer_is_loopback(request) and host_is_loopback(request) \
            and not was_forwarded(request)

    def client_key(self, request: web.Request) -> str:
        """What the sign-in throttle counts this request's tries under (its client's address or network)."""
        return throttle_key(client_of(request, self.proxies))

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
            self.close_session(session)
            return None
        session.last_seen = now
        self.sessions.move_to_end(token)
        mine = self._by_account.setdefault(session.account, OrderedDict())
        mine[token] = None
        mine.move_to_end(token)  # the per-account bound drops the account's least recently used first
        return session

    # -- signing in -------------------------------------------------------------------------------

    def check_secret(self, secret: str) -> Account | None:
        """Whom ``secret`` signs in, or None. Call it with an attempt reserved (:meth:`Throttle.reserve`)."""
        digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()
        found: Account | None = None
        for account, expected in self._digests:  # every candidate compared: the timing says nothing of which
            if hmac.compare_digest(digest, expected) and found is None:
                found = account
        return found

    def open_session(self, via: str, owner: str | None = None) -> WebSession:
        """A new session with a fresh token, CSRF token and chat; the account's (or the largest's) oldest
        session goes when a bound is reached."""
        now = self.clock()
        session = WebSession(token=secrets.token_urlsafe(32), csrf=secrets.token_urlsafe(32),
                             chat_id="w" + secrets.token_hex(8), created=now, last_seen=now, via=via, owner=owner)
        self.sessions[session.token] = session
        mine = self._by_account.setdefault(session.account, OrderedDict())
        mine[session.token] = None
        # the open console (no secret set: the only account) opens one per cookie-less request, as before
        while len(mine) > (MAX_SESSIONS if via == "loopback" else MAX_SESSIONS_PER_ACCOUNT):
            self._drop(next(iter(mine)))
        while len(self.sessions) > MAX_SESSIONS:
            largest = max(self._by_account.values(), key=len)
            self._drop(next(iter(largest)))
        return session

    def close_session(self, session: WebSession) -> None:
        self._drop(session.token)

    def _drop(self, token: str) -> None:
        session = self.sessions.pop(token, None)
        mine = self._by_account.get(session.account) if session is not None else None
        if session is not None and mine is not None:
            mine.pop(token, None)
            if not mine:
                del self._by_account[session.account]

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

    def from_proxy(self, request: web.Request) -> bool:
        """The TCP peer is a reverse proxy whose forwarding headers count: on loopback or trusted."""
        return peer_is_loopback(request) or trusted(parse_address(request.remote or ""), self.proxies)


AUTH_KEY = web.AppKey("hermes_gateway._core.web.auth", WebAuth)


def peer_is_loopback(request: web.Request) -> bool:
    """The TCP peer is this machine (``request.remote``: never a header a client can set)."""
    return bool(request.remote) and is_loopback_host(request.remote or "")


#: ``Host`` as RFC 9110 has it: a bracketed IPv6 literal, or a name or IPv4 address; then maybe ``:port``.
_HOST = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9._~-]+))(?::(?P<port>[0-9]{1,5}))?", re.ASCII)


def host_name(request: web.Request) -> str | None:
    """The name in the request's ``Host`` header, or None when it is missing or malformed (``[::1``,
    ``::1``, ``localhost:x``, a port past 65535)."""
    match = _HOST.fullmatch(request.headers.get("Host", ""))
    if match is None or (match.group("port") is not None and not 0 < int(match.group("port")) < 65536):
        return None
    if match.group("v6") is not None:
        address = parse_address(match.group("v6"))
        return match.group("v6") if address is not None and address.version == 6 else None
    return match.group("name")


def host_is_loopback(request: web.Request) -> bool:
    """The ``Host`` the browser asked for is a well-formed loopback name (a DNS-rebound name is not)."""
    name = host_name(request)
    return is_loopback_host(name) if name else False


def bad_host(request: web.Request) -> web.Response | None:
    """The 400 for a missing or malformed ``Host`` (never mistaken for loopback), or None when it is fine."""
    if host_name(request) is None:
        return json_error(400, "the Host header is missing or malformed", "bad_host")
    return None


def came_over_tls(request: web.Request) -> bool:
    """TLS to us, or ``X-Forwarded-Proto: https`` set by a reverse proxy on this machine or a trusted one."""
    if request.secure:
        return True
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return forwarded == "https" and auth_of(request).from_proxy(request)


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


def may_read(session: WebSession, platform: str, chat_id: str, thread_id: str | None = None) -> bool:
    """Whether ``session`` may read the stored conversation of a chat: the operator any; a user (an API
    key) the session's own web chat and the key's own API conversations (:mod:`..store.api_owners`)."""
    if session.operator:
        return True
    if platform == "web":
        return chat_id == session.chat_id and thread_id is None
    return platform == API_PLATFORM and thread_id is None and owned_by(chat_id, session.owner)


def require_session(handler: Handler, *, users: bool = False) -> Handler:
    """Serve ``handler`` only with a live session: else a redirect to the sign-in page (a page) or 401 JSON;
    to the operator only unless ``users`` (a user's session gets 403 JSON)."""

    @functools.wraps(handler)
    async def guarded(request: web.Request) -> web.StreamResponse:
        refused = bad_host(request)
        if refused is not None:
            return refused
        session = ensure_session(request)
        if session is None:
            if wants_page(request):
                raise web.HTTPSeeOther("/ui/login")
            return json_error(401, "sign in first", "unauthorized")
        if request.method not in SAFE_METHODS and not auth_of(request).csrf_ok(request, session):
            return json_error(403, f"missing or wrong {CSRF_HEADER} header", "csrf")
        if not users and not session.operator:
            return json_error(403, "this is the operator's: sign in with web.password (an API key signs in to "
                                   "the chat and its own conversations only)", "operator_only")
        request[SESSION] = session
        response = await handler(request)
        new = request.get(NEW_SESSION)
        if new is not None and not response.prepared:
            auth_of(request).set_cookie(request, response, new)
        return response

    return guarded


def require_csrf(handler: Handler, *, users: bool = False) -> Handler:
    """For a state-changing route: a session and the CSRF header, also if it is mounted for GET by mistake."""

    @functools.wraps(handler)
    async def checked(request: web.Request) -> web.StreamResponse:
        if not auth_of(request).csrf_ok(request, session_of(request)):
            return json_error(403, f"missing or wrong {CSRF_HEADER} header", "csrf")
        return await handler(request)

    return require_session(checked, users=users)


def user_session(handler: Handler) -> Handler:
    """:func:`require_session` open to a user (an API key) too: the handler shows them only what is theirs."""
    return require_session(handler, users=True)


def user_csrf(handler: Handler) -> Handler:
    """:func:`require_csrf` open to a user (an API key) too: the handler acts on what is theirs only."""
    return require_csrf(handler, users=True)
