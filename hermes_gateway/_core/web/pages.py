"""The console's pages, static files, sign-in and sign-out.

Static files are the package's ``static/`` folder, read once at mount into
memory (with a gzip copy for browsers that accept it): only names in that
folder are served, so no path from a request ever reaches the file system.
The HTML pages are static too; a page's script asks ``GET /ui/api/session``
for its CSRF token.

Pages: ``/ui`` (the chat), ``/ui/login``, ``/ui/dashboard`` (a placeholder
until the dashboard mounts its own page there: :func:`add_page`).
"""

from __future__ import annotations

import gzip
import mimetypes
from dataclasses import dataclass
from importlib import resources

from aiohttp import web

from .auth import (MAX_SECRET, Handler, WebSession, auth_of, bad_host, require_session, same_origin, session_of,
                   user_csrf, user_session)
from .responses import SECURITY_HEADERS, json_error, json_ok, read_json
from .throttle import Attempt

#: A sign-in body holds one secret; nothing bigger is read.
LOGIN_BODY_LIMIT = MAX_SECRET + 256


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    gzipped: bytes
    content_type: str


def load_static(package: str = __package__ + ".static") -> dict[str, StaticFile]:
    """Every file of a package's ``static`` folder (one level, no subfolders), by name."""
    out: dict[str, StaticFile] = {}
    for entry in resources.files(package).iterdir():
        if not entry.is_file() or entry.name.startswith((".", "_")):
            continue
        body = entry.read_bytes()
        kind = mimetypes.guess_type(entry.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript", "image/svg+xml"):
            kind += "; charset=utf-8"
        out[entry.name] = StaticFile(body, gzip.compress(body, 9, mtime=0), kind)
    return out


STATIC_KEY = web.AppKey("hermes_gateway._core.web.static", dict)


def file_response(request: web.Request, file: StaticFile, *, cache: bool = False) -> web.Response:
    """One static file, gzipped when the browser takes it; HTML is never cached (it carries no secret either)."""
    headers = dict(SECURITY_HEADERS)
    headers["Content-Type"] = file.content_type
    if cache:
        headers["Cache-Control"] = "private, max-age=300"
    headers["Vary"] = "Accept-Encoding"
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        headers["Content-Encoding"] = "gzip"
        return web.Response(body=file.gzipped, headers=headers)
    return web.Response(body=file.body, headers=headers)


def page(name: str, *, signed_in: bool = True, users: bool = False) -> Handler:
    """A handler serving the static page ``name``; behind a session unless ``signed_in=False``, the
    operator's unless ``users``."""

    async def serve(request: web.Request) -> web.StreamResponse:
        file = request.app[STATIC_KEY].get(name)
        if file is None:
            return json_error(404, "no such page", "not_found")
        return file_response(request, file)

    return require_session(serve, users=users) if signed_in else serve


def add_page(app: web.Application, path: str, name: str, *, users: bool = False) -> None:
    """Mount the static page ``name`` at ``path`` behind a session (the dashboard uses it for its page)."""
    app.router.add_get(path, page(name, users=users))


async def static(request: web.Request) -> web.StreamResponse:
    """``/ui/static/{name}``: a file of the static folder by exact name (anything else 404)."""
    file = request.app[STATIC_KEY].get(request.match_info["name"])
    if file is None:
        return json_error(404, "no such file", "not_found")
    return file_response(request, file, cache=True)


async def login_page(request: web.Request) -> web.StreamResponse:
    """The sign-in page; a browser already signed in, or on the open loopback console, goes to the chat."""
    auth = auth_of(request)
    refused = bad_host(request)
    if refused is not None:
        return refused
    if auth.open_to(request) or auth.current(request) is not None:
        raise web.HTTPSeeOther("/ui")
    return file_response(request, request.app[STATIC_KEY]["login.html"])


def throttled(wait: float) -> web.Response:
    return json_error(429, f"too many wrong tries; wait {wait:.0f} s", "throttled",
                      headers={"Retry-After": str(max(1, int(wait + 0.999)))})


async def login(request: web.Request) -> web.StreamResponse:
    """``POST /ui/login`` ``{"secret": ...}``: a session cookie, or 400/401/403/429 JSON.

    The try is reserved with the throttle (counted as wrong) before the secret
    is compared, and given back only when it was right (:mod:`.throttle`)."""
    auth = auth_of(request)
    refused = bad_host(request)
    if refused is not None:
        return refused
    if not same_origin(request):
        return json_error(403, "sign-in from another site is refused", "origin")
    client = auth.client_key(request)
    wait = auth.throttle.wait(client)
    if wait > 0:  # cheap: a locked-out client's body is not even read
        return throttled(wait)
    body = await read_json(request, LOGIN_BODY_LIMIT)
    if isinstance(body, web.Response):
        return body
    secret = body.get("secret")
    if not isinstance(secret, str) or not secret or len(secret) > MAX_SECRET:
        return json_error(400, "send {\"secret\": \"your password or API key\"}", "bad_secret")
    if not auth.can_sign_in:
        return json_error(401, "no web.password or api_server.api_keys is configured: nobody can sign in "
                               "from another machine", "no_secret")
    attempt = auth.throttle.reserve(client)  # after the await above: the tries that arrived meanwhile count
    if not isinstance(attempt, Attempt):
        return throttled(attempt)
    account = auth.check_secret(secret)
    if account is None:
        return json_error(401, "wrong password or key", "wrong_secret")
    auth.throttle.succeeded(attempt)
    old = auth.current(request)
    if old is not None:
        auth.close_session(old)  # a fresh token at each sign-in: a cookie planted before it is worthless
    session = auth.open_session(account.via, account.owner)
    response = json_ok({"ok": True})
    auth.set_cookie(request, response, session)
    return response


@user_csrf
async def logout(request: web.Request) -> web.StreamResponse:
    auth = auth_of(request)
    auth.close_session(session_of(request))
    response = json_ok({"ok": True})
    auth.clear_cookie(request, response)
    return response


@user_session
async def session_info(request: web.Request) -> web.StreamResponse:
    """What the page's script needs: the CSRF token, the role (a user's page hides the dashboard), and
    whether signing out means anything."""
    session: WebSession = session_of(request)
    return json_ok({"csrf": session.csrf, "via": session.via, "role": session.role,
                    "can_sign_out": auth_of(request).can_sign_in})


async def redirect_home(request: web.Request) -> web.StreamResponse:
    raise web.HTTPMovedPermanently("/ui")


def add_routes(app: web.Application) -> None:
    app[STATIC_KEY] = load_static()
    app.router.add_get("/ui", page("index.html", users=True))
    app.router.add_get("/ui/", redirect_home)
    app.router.add_get("/ui/login", login_page)
    app.router.add_post("/ui/login", login)
    app.router.add_post("/ui/logout", logout)
    app.router.add_get("/ui/api/session", session_info)
    app.router.add_get("/ui/static/{name}", static)
