"""The console's answers: JSON errors, live feeds, and the security headers every page carries.

Errors use the same ``{"error": {message, type, param, code}}`` shape as
the rest of the listener (:mod:`..http.errors`), so one client-side helper
reads them all. Every console response forbids framing, sniffing and any
script but the console's own files (a Content-Security-Policy with no
``unsafe-inline``): even if model text ever reached the DOM as HTML, the
browser would not run it.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ..http.errors import error_body

#: Only the console's own files run; images also from ``data:``/``blob:`` (nothing else leaves the page).
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
       "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def under_console(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


async def add_security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """Every response under ``/ui`` carries the console's headers (``on_response_prepare``): also the
    router's own 404 and 405, a 413 aiohttp raises, anything a handler forgot. What a response set itself
    (a static file's ``Cache-Control``) stays."""
    if under_console(request.path):
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)


def json_error(status: int, message: str, code: str | None = None, *,
               headers: dict[str, str] | None = None) -> web.Response:
    """A refusal as JSON (never aiohttp's HTML page), with the console's headers."""
    kind = "authentication_error" if status in (401, 403) else "invalid_request_error"
    return web.Response(status=status, text=json.dumps(error_body(message, type=kind, code=code)),
                        content_type="application/json", headers={**SECURITY_HEADERS, **(headers or {})})


def json_ok(value: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, text=json.dumps(value), content_type="application/json",
                        headers=SECURITY_HEADERS)


async def read_json(request: web.Request, limit: int) -> dict | web.Response:
    """The request's JSON object, or the 4xx to answer: too large (413), not JSON or not an object (400)."""
    if request.content_length is not None and request.content_length > limit:
        return json_error(413, f"the body is larger than {limit} bytes", "too_large")
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= limit:  # read(n) gives what has arrived: a body sent in pieces takes several reads
            chunk = await request.content.read(limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except Exception:  # a body cut short by the client
        return json_error(400, "the body could not be read", "bad_body")
    raw = b"".join(chunks)
    if len(raw) > limit:
        return json_error(413, f"the body is larger than {limit} bytes", "too_large")
    try:
        value = json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return json_error(400, "the body is not JSON", "bad_json")
    if not isinstance(value, dict):
        return json_error(400, "the body must be a JSON object", "bad_json")
    return value


#: An idle feed sends a comment this often, so proxies and browsers keep it open (and a gone browser is noticed).
PING_EVERY = 15.0
PING = b": ping\n\n"


async def open_event_stream(request: web.Request, retry_ms: int) -> web.StreamResponse:
    """A live feed (``text/event-stream``), prepared, telling the browser to reconnect after ``retry_ms``.

    ``X-Accel-Buffering: no`` keeps a reverse proxy (nginx) from holding
    events back; the console's security headers apply as to any page.
    """
    response = web.StreamResponse(headers={**SECURITY_HEADERS, "Content-Type": "text/event-stream",
                                           "X-Accel-Buffering": "no"})
    await response.prepare(request)
    await response.write(b"retry: %d\n\n" % retry_ms)
    return response
