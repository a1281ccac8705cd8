"""Redis (``coordination.url``) answers PING; the API server's port is free, or held by this gateway already."""

from __future__ import annotations

import errno
import socket
from typing import Any

import aiohttp

from ...config import Config
from ...masking import mask_url
from . import Line


async def check_redis(config: Config, timeout: float) -> list[Line]:
    url = config.coordination.url
    if not url:
        return []
    import redis.asyncio as aioredis

    client: Any = aioredis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        await client.ping()
    except Exception as exc:  # redis' ConnectionError, AuthenticationError, a timeout ...
        return [Line(False, "coordination.url", f"{mask_url(url)} does not answer ({type(exc).__name__}: {exc}): "
                                                "start Redis, or fix the address and password")]
    finally:
        await client.aclose()
    return [Line(True, "coordination", f"Redis at {mask_url(url)} answers")]


async def check_port(config: Config, timeout: float) -> list[Line]:
    api = config.api_server
    if not api.enabled:
        return []
    if api.port == 0:
        return [Line(True, "api_server", "port 0: any free port is taken at start")]
    where = f"{api.host}:{api.port}"
    family = socket.AF_INET6 if ":" in api.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the listener does: TIME_WAIT is not "taken"
        try:
            probe.bind((api.host, api.port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return [Line(False, "api_server.host", f"cannot listen on {where} ({exc.strerror or exc}): "
                                                       "is api_server.host an address of this machine?")]
        else:
            return [Line(True, "api_server", f"{where} is free")]
    if await _is_gateway(api.host, api.port, timeout):
        return [Line(True, "api_server", f"{where} is in use by a running hermes-gateway (its /health answered); "
                                         "a second one there would fail to start")]
    return [Line(False, "api_server.port", f"{where} is taken by another program: stop it, or set "
                                           "api_server.port to a free port")]


async def _is_gateway(host: str, port: int, timeout: float) -> bool:
    """Whether what listens there answers ``/health`` as the gateway's API server does."""
    shown = f"[{host}]" if ":" in host else host
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            async with session.get(f"http://{shown}:{port}/health") as response:
                body = await response.json(content_type=None)
    except (aiohttp.ClientError, OSError, ValueError, TimeoutError):
        return False
    return isinstance(body, dict) and "active_streams" in body
