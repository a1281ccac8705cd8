"""The HTTP listener's defences: idle timeouts, a connection cap, JSON parse errors, quiet accept floods.

What a careless or hostile client can do to a bare ``aiohttp`` listener
(issue 13) and what this module does about it:

* Connections that send nothing, half a request line or half the headers
  are closed after :data:`IDLE_TIMEOUT` (aiohttp's keep-alive timer, which
  runs from the moment a connection opens until a request's headers are
  complete; the body has its own deadline in :mod:`.validation`).
* At most :data:`MAX_CONNECTIONS` connections at once, and never more than
  the process's file limit allows (each stream also holds an upstream
  socket). At the cap, the longest-idle connection (one with no request
  in progress: a slow-loris, a pooled keep-alive) is closed to admit the
  new one; if every connection is busy, the new one gets a 503 in
  OpenAI's error shape and is closed. So ``/health`` stays reachable.
* A request the HTTP parser rejects (oversized headers, a bad method, a
  malformed line) is answered in OpenAI's JSON error shape, and neither the
  log nor the body repeats what the client sent: an oversized
  ``Authorization`` header would otherwise be echoed back and logged.
* A burst of simultaneous connects waits in the kernel's accept queue
  until the event loop accepts it. aiohttp listens with a backlog of 128:
  a burst of 200 overflowed it (``ListenOverflows`` in ``/proc/net/netstat``),
  the kernel dropped the extra SYNs and their clients retried after a
  second (issue 28's "slowest wait about a second"). :func:`listen_backlog`
  queues up to :data:`MAX_BACKLOG` instead.
* When ``accept()`` fails for lack of file descriptors, asyncio logs an
  error with a traceback on every retry; :class:`AcceptFloodFilter` lets
  one through per :data:`ACCEPT_LOG_INTERVAL` and counts the rest.

:func:`hardened_site` is what the gateway's listener calls; the knobs are
module constants (tests lower them).
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import socket
import time
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from .errors import INVALID_REQUEST, SERVER_ERROR, error_body

log = logging.getLogger(__name__)

#: Seconds a connection may stay open without a complete request (before the first or between them).
IDLE_TIMEOUT = 15.0
#: Open connections at most (further lowered to what the file limit allows).
MAX_CONNECTIONS = 4096
#: File descriptors kept free for everything else (the store, logs, upstream DNS...).
RESERVED_FDS = 64
#: The listen backlog at least (aiohttp's default), and the descriptors kept for one batch of accepts at least.
ACCEPT_BATCH = 128
#: The listen backlog at most (the kernel also caps it at ``net.core.somaxconn``), see :func:`listen_backlog`.
MAX_BACKLOG = 1024
#: One "socket.accept() out of system resource" log line per this many seconds.
ACCEPT_LOG_INTERVAL = 60.0

_ACCEPT_FAILED = "socket.accept() out of system resource"


def runner_options() -> dict[str, Any]:
    """Keyword arguments for ``web.AppRunner`` (they reach every connection's handler)."""
    return {"keepalive_timeout": IDLE_TIMEOUT}


def hardened_site(runner: web.AppRunner, host: str, port: int, *, sock: Any = None) -> "GuardedSite":
    """The listening site for ``runner``: capped, idle-limited, JSON errors (see the module doc).

    ``sock``: an already listening socket to serve instead of binding ``host:port`` (one worker of
    ``api_server.workers``, see :mod:`.workers`).
    """
    install_accept_flood_filter()
    backlog = listen_backlog()
    return GuardedSite(runner, host, port, max_connections=connection_cap(backlog), sock=sock, backlog=backlog)


def listen_backlog() -> int:
    """The accept queue's length: ``net.core.somaxconn`` up to :data:`MAX_BACKLOG`, at least :data:`ACCEPT_BATCH`.

    Long enough that a burst of a few hundred simultaneous connects waits in the queue instead of
    having SYNs dropped (retried by the client a second later). asyncio accepts up to the backlog in
    one go before an evicted connection's descriptor is released, so with a low file limit the
    backlog is kept to a quarter of the descriptors (never below aiohttp's 128): the connection cap
    (:func:`connection_cap`) reserves a backlog's worth of them.
    """
    soft = raise_file_limit()
    backlog = min(_somaxconn(), MAX_BACKLOG)
    if soft != resource.RLIM_INFINITY:
        backlog = min(backlog, (soft - RESERVED_FDS) // 4)
    return max(ACCEPT_BATCH, backlog)


def _somaxconn() -> int:
    """The kernel's cap on any listen backlog (Linux), or ``socket.SOMAXCONN`` where it cannot be read."""
    try:
        with open("/proc/sys/net/core/somaxconn", "rb") as f:
            return int(f.read().strip() or 0) or socket.SOMAXCONN
    except (OSError, ValueError):
        return socket.SOMAXCONN


def raise_file_limit() -> int:
    """Raise the soft ``RLIMIT_NOFILE`` towards the hard one (as most servers do); return the soft limit.

    So a default limit of 1,024 does not cap the gateway at a few hundred streams.
    """
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = 2 * MAX_CONNECTIONS + RESERVED_FDS + MAX_BACKLOG
        if soft != resource.RLIM_INFINITY and soft < wanted and (hard == resource.RLIM_INFINITY or hard > soft):
            soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    except (ValueError, OSError):  # not allowed here: live with the limit as it is
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft


def connection_cap(backlog: int = ACCEPT_BATCH) -> int:
    """:data:`MAX_CONNECTIONS`, or less when the file limit is lower: two descriptors per stream, plus room
    for a whole batch of accepts, ``backlog`` (closing an evicted connection frees its descriptor only
    afterwards). Raises the soft file limit first (:func:`raise_file_limit`).
    """
    soft = raise_file_limit()
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return min(MAX_CONNECTIONS, max(8, (soft - RESERVED_FDS - backlog) // 2))


def json_error_response(status: int, message: str, *, code: str | None = None,
                        headers: dict[str, str] | None = None) -> web.Response:
    kind = SERVER_ERROR if status >= 500 else INVALID_REQUEST
    return web.Response(status=status, text=json.dumps(error_body(message, type=kind, code=code)),
                        content_type="application/json", headers=headers)


class HardenedHandler(RequestHandler):
    """aiohttp's per-connection handler, with parse errors in OpenAI's shape and a hook when it closes."""

    __slots__ = ("on_lost", "doomed")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_lost: Any = None
        self.doomed = False  # evicted before its connection was made: close it as soon as it is

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self.doomed:
            self.force_close()

    def connection_lost(self, exc: BaseException | None) -> None:
        on_lost, self.on_lost = self.on_lost, None
        if on_lost is not None:
            on_lost(self)
        super().connection_lost(exc)

    def log_exception(self, *args: Any, **kw: Any) -> None:
        """A body that fails to decode is the client's fault, already answered with a 400: one line, no
        traceback (aiohttp logs it again when it drains the rest of the body)."""
        exc = kw.get("exc_info")
        if _is_parse_error(exc):
            log.warning("dropped the rest of a malformed request body: %s", type(exc).__name__)
            return
        super().log_exception(*args, **kw)

    @property
    def busy(self) -> bool:
        """A request is being handled (idle connections may be closed to admit new ones)."""
        return bool(getattr(self, "_request_in_progress", True))

    def handle_error(self, request: Any, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """Answer a request aiohttp could not parse (or a handler that crashed) without echoing any of it.

        The parser's message quotes the offending bytes (an oversized header's value, which may be a
        key), so neither the log nor the response includes it: only the exception's type and the status.
        """
        if request.writer.output_size > 0:
            raise ConnectionError("the response had started; the connection is closed instead")
        remote = request.remote
        if status >= 500:
            log.error("request from %s failed: %s (%s)", remote, type(exc).__name__ if exc else "error", status,
                      exc_info=exc if exc is not None and not _is_parse_error(exc) else None)
            text = "The gateway failed to handle this request (see the gateway's log)."
            code = "internal_error"
        else:
            log.warning("refused a malformed request from %s: %s (%d)", remote,
                        type(exc).__name__ if exc else "bad request", status)
            text = _PARSE_ERRORS.get(type(exc).__name__ if exc else "", "The HTTP request could not be parsed.")
            code = "bad_http_request"
        response = json_error_response(status, text, code=code)
        response.force_close()
        return response


_PARSE_ERRORS = {
    "LineTooLong": "A request line or header is longer than the gateway accepts (8,190 bytes).",
    "BadHttpMethod": "The request method is not valid HTTP.",
    "BadStatusLine": "The request line is not valid HTTP.",
    "InvalidHeader": "A request header is not valid HTTP.",
    "TransferEncodingError": "The request's Transfer-Encoding is invalid.",
    "ContentLengthError": "The request's Content-Length is invalid.",
}


def _is_parse_error(exc: Any) -> bool:
    from aiohttp.http_exceptions import HttpProcessingError
    from aiohttp.web_protocol import RequestPayloadError

    return isinstance(exc, (HttpProcessingError, RequestPayloadError))


class _Refuse(asyncio.Protocol):
    """A connection over the cap with nothing idle to close: one 503, then close."""

    BODY = json.dumps(error_body("The gateway has too many open connections; retry shortly.",
                                 type=SERVER_ERROR, code="too_many_connections")).encode()
    RESPONSE = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                b"Connection: close\r\nContent-Length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(self.RESPONSE)
        transport.close()


class GuardedSite(web.TCPSite):
    """A ``TCPSite`` whose connections are :class:`HardenedHandler` s, at most ``max_connections`` at once."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, *, max_connections: int,
                 sock: Any = None, backlog: int = ACCEPT_BATCH) -> None:
        super().__init__(runner, host, port, backlog=backlog)
        self.max_connections = max_connections
        self.sock = sock  # a socket the parent bound (several workers), or None: bind host:port
        self.connections: dict[HardenedHandler, None] = {}  # oldest first
        self.evicted = 0
        self.refused = 0

    async def start(self) -> None:
        """``TCPSite.start`` with our protocol factory in place of the runner's server."""
        await web.BaseSite.start(self)
        loop = asyncio.get_running_loop()
        if self.sock is not None:
            self._server = await loop.create_server(self._make_protocol, sock=self.sock, backlog=self._backlog)
            return
        self._server = await loop.create_server(
            self._make_protocol, self._host, self._port, ssl=self._ssl_context, backlog=self._backlog,
            reuse_address=self._reuse_address, reuse_port=self._reuse_port)

    def _make_protocol(self) -> asyncio.BaseProtocol:
        if len(self.connections) >= self.max_connections and not self._evict_idle():
            self.refused += 1
            if self.refused == 1 or self.refused % 1000 == 0:
                log.warning("refused a connection: %d open (the cap); %d refused so far", len(self.connections),
                            self.refused)
            return _Refuse()
        server = self._runner.server
        assert server is not None
        handler = HardenedHandler(server, loop=server._loop, **server._kwargs)  # what Server.__call__ does
        handler.on_lost = self._lost
        self.connections[handler] = None
        return handler

    def _evict_idle(self) -> bool:
        """Close the oldest connection with no request in progress; False if every one is busy.

        One accepted in this same batch is not connected yet (closing it now would do nothing): it is
        marked to close the moment it is, and taken only when no connected one is idle.
        """
        pending = None
        for handler in self.connections:
            if handler.transport is None:
                if pending is None and not handler.doomed:
                    pending = handler
            elif not handler.busy:
                self._drop(handler)
                handler.force_close()
                return True
        if pending is not None:
            self._drop(pending)
            pending.doomed = True
            return True
        return False

    def _drop(self, handler: HardenedHandler) -> None:
        del self.connections[handler]
        handler.on_lost = None
        self.evicted += 1

    def _lost(self, handler: HardenedHandler) -> None:
        self.connections.pop(handler, None)


class AcceptFloodFilter(logging.Filter):
    """Let one "socket.accept() out of system resource" error through per interval, with the count."""

    def __init__(self, interval: float | None = None) -> None:
        super().__init__()
        self.interval = interval
        self.next_at = 0.0
        self.suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not isinstance(record.msg, str) or not record.msg.startswith(_ACCEPT_FAILED):
            return True
        now = time.monotonic()
        if now < self.next_at:
            self.suppressed += 1
            return False
        interval = ACCEPT_LOG_INTERVAL if self.interval is None else self.interval
        self.next_at = now + interval
        errno = getattr(record.exc_info[1], "errno", None) if record.exc_info else None
        record.msg = (f"{_ACCEPT_FAILED} (errno {errno}): new connections wait until descriptors free up"
                      + (f"; {self.suppressed} more since the last report" if self.suppressed else "")
                      + f"; next report in {interval:g} s at the earliest")
        record.args = ()
        record.exc_info = None  # the traceback says nothing new, and it is what made the log huge
        record.exc_text = None
        self.suppressed = 0
        return True


def install_accept_flood_filter() -> AcceptFloodFilter:
    """Add the filter to asyncio's logger once per process; return it."""
    logger = logging.getLogger("asyncio")
    for existing in logger.filters:
        if isinstance(existing, AcceptFloodFilter):
            return existing
    flood = AcceptFloodFilter()
    logger.addFilter(flood)
    return flood
