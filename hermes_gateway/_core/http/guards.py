"""Who may talk to the gateway's listener at all: DNS rebinding, browsers, and routes nobody mounted.

A server on ``127.0.0.1`` without keys trusts "whoever is on this machine".
A web page in the user's browser is not that, but can reach the port two
ways: a rebinding DNS name (``evil.example`` resolving to 127.0.0.1, so the
browser thinks it is same-origin) and a cross-origin request. So:

* without keys, on a loopback address, only loopback ``Host`` values are
  served (``localhost``, ``127.0.0.1``, ``[::1]``, any port): a rebound
  name carries its own ``Host`` and gets a 403;
* a request carrying ``Origin`` (every browser ``fetch``/form POST does) is
  served only when that origin is in ``api_server.cors_origins``. Programs
  (SDKs, Open WebUI's backend, curl) send no ``Origin`` and are unaffected.

:func:`json_not_found` turns the router's own 404/405 (a path outside
``/v1``, a method no route takes) into OpenAI's error shape, as every
other refusal is.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Awaitable

from aiohttp import web

from ..config import ApiServerConfig
from .cors import Cors
from .disconnect import Handler
from .errors import ApiError
from .listener import json_error_response


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server reachable from this machine only."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False  # a hostname (or "" meaning every interface): assume reachable from outside


class RequestGuard:
    """The Host and Origin checks of one server's config."""

    def __init__(self, cfg: ApiServerConfig, cors: Cors) -> None:
        self.cors = cors
        self.loopback_only = not cfg.api_keys and is_loopback(cfg.host)

    def check(self, request: web.Request) -> None:
        """Raise a 403 in OpenAI's shape for a rebound Host or a browser origin not allowed."""
        if self.loopback_only and not loopback_host(request.headers.get("Host", "")):
            raise ApiError(403, "This gateway has no API keys, so it answers only requests addressed to "
                                "localhost (Host header); set api_server.api_keys to serve other names.",
                           code="host_not_allowed")
        origin = request.headers.get("Origin")
        if origin is not None and self.cors.allowed(request) is None:
            raise ApiError(403, "Browser requests are accepted only from the origins listed in "
                                "api_server.cors_origins.", code="origin_not_allowed")


@functools.lru_cache(maxsize=256)  # a handful of values in practice; parsing an IP costs a few us per request
def loopback_host(host: str) -> bool:
    """Whether a ``Host`` header names this machine: ``localhost``, a loopback IP, with or without a port."""
    host = host.strip()
    if host.startswith("["):
        name = host[1:host.find("]")] if "]" in host else ""
    elif host.count(":") == 1:
        name = host.partition(":")[0]
    else:
        name = host
    name = name.rstrip(".").lower()
    return bool(name) and (is_loopback(name) or name.endswith(".localhost"))


@web.middleware
def json_not_found(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
    """The router's 404 and 405 (no route, or not this method) in OpenAI's error shape.

    A request that found its route gets its handler's own coroutine, with no frame of this middleware
    in the way (aiohttp awaits what a middleware returns).
    """
    routing_error = request.match_info.http_exception
    if routing_error is None:
        return handler(request)
    return _answered(_routing_error(request, routing_error))


async def _answered(response: web.StreamResponse) -> web.StreamResponse:
    return response


def _routing_error(request: web.Request, routing_error: web.HTTPException) -> web.Response:
    path = request.path if len(request.path) <= 200 else request.path[:200] + "..."
    if isinstance(routing_error, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(routing_error.allowed_methods))
        return json_error_response(405, f"{request.method} is not allowed on {path}; use {allowed}.",
                                   code="method_not_allowed", headers={"Allow": allowed})
    return json_error_response(routing_error.status, f"Unknown endpoint {request.method} {path} "
                               "(the API is under /v1).", code="unknown_url")
