"""Discord's 429s reach the core; discord.py never sleeps on them.

discord.py handles a 429 itself: it sleeps the body's ``retry_after`` and
retries (up to five times) inside ``send()``/``edit()``, so the caller never
learns that the channel was limited, and the core's pacing, coalescing and
interrupts would stall behind an invisible wait. It also retries 5xx
answers after sleeping 1-9 s. discord.py takes an ``aiohttp.TraceConfig``
(``Client(http_trace=...)``, a public option): :class:`RestWatch` is one
whose ``on_request_end`` sees each response's status and headers *before*
discord.py does, and raises :class:`Refused` for a 429 or a retried 5xx,
which ends the request at once, unslept.

A 429's window is remembered: a call into that channel (or, for a global
429, any call) before ``retry_after`` has passed is refused here, without
reaching Discord.

What discord.py still does by itself: after an answer whose
``X-RateLimit-Remaining`` is 0 it waits until ``Reset-After`` before that
call returns (the call itself succeeded). The declared per-channel budget
(at most 4 message calls in any 5 s) keeps a channel's bucket from ever
emptying at Discord's observed limits, so against Discord that wait does
not happen; :attr:`RestWatch.emptied` counts the answers that would cause it.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

#: Statuses discord.py would sleep on and retry by itself.
RETRIED_STATUSES = frozenset({500, 502, 504, 524})
_CHANNEL_ROUTE = re.compile(r"/channels/(\d+)/(messages|typing)")


class Refused(Exception):
    """Discord answered 429 or a retried 5xx; raised inside discord.py's request, before it can sleep."""

    def __init__(self, status: int, retry_after: float = 0.0, *, is_global: bool = False,
                 scope: str | None = None, detail: str = "", channel_id: str | None = None) -> None:
        super().__init__(f"HTTP {status} {detail}".strip())
        self.status = status
        self.retry_after = retry_after
        self.is_global = is_global
        self.scope = scope
        self.detail = detail
        self.channel_id = channel_id


@dataclass
class Windows:
    """When each channel's buckets (and the whole bot) may be called again, from 429s and headers."""

    bot_until: float = 0.0
    channel_until: dict[tuple[str, str], float] = field(default_factory=dict)  # (channel, route) -> monotonic

    def wait_for(self, channel_id: str, route: str, now: float | None = None) -> tuple[float, str]:
        """Seconds to wait before a call to ``route`` in ``channel_id`` (0 when it may go), and the scope."""
        now = time.monotonic() if now is None else now
        if self.bot_until > now:
            return self.bot_until - now, "bot"
        until = self.channel_until.get((channel_id, route), 0.0)
        return (until - now, "chat") if until > now else (0.0, "chat")

    def block(self, channel_id: str | None, route: str | None, seconds: float, *, is_global: bool) -> None:
        until = time.monotonic() + max(seconds, 0.0)
        if is_global:
            self.bot_until = max(self.bot_until, until)
        elif channel_id is not None and route is not None:
            key = (channel_id, route)
            self.channel_until[key] = max(self.channel_until.get(key, 0.0), until)


class RestWatch:
    """The ``aiohttp.TraceConfig`` handed to ``discord.Client(http_trace=...)``."""

    def __init__(self) -> None:
        import aiohttp

        self.windows = Windows()
        self.responses = 0
        self.refused = 0
        self.emptied = 0   # answers with X-RateLimit-Remaining: 0 (discord.py then waits for the reset)
        self.trace = aiohttp.TraceConfig()
        self.trace.on_request_end.append(self._on_request_end)

    async def _on_request_end(self, session: Any, context: Any, params: Any) -> None:
        response = params.response
        self.responses += 1
        channel_id, route = _channel_route(str(params.url.path))
        status = response.status
        headers = response.headers
        if status == 429:
            body = await _json_body(response)
            retry_after = _float(body.get("retry_after"), _float(headers.get("Retry-After"), 1.0))
            is_global = bool(body.get("global")) or headers.get("X-RateLimit-Global", "").lower() == "true"
            scope = headers.get("X-RateLimit-Scope") or ("global" if is_global else None)
            self.windows.block(channel_id, route, retry_after, is_global=is_global)
            self.refused += 1
            raise Refused(429, retry_after, is_global=is_global, scope=scope, channel_id=channel_id,
                          detail=str(body.get("message") or "Too Many Requests"))
        if status in RETRIED_STATUSES:
            await response.read()
            self.refused += 1
            raise Refused(status, detail=response.reason or "", channel_id=channel_id)
        if headers.get("X-RateLimit-Remaining") == "0":
            self.emptied += 1


def route_of(path: str) -> tuple[str | None, str | None]:
    """(channel id, "messages" | "typing") of a REST path, or (None, None)."""
    return _channel_route(path)


def _channel_route(path: str) -> tuple[str | None, str | None]:
    match = _CHANNEL_ROUTE.search(path)
    if match is None:
        return None, None
    return match.group(1), match.group(2)


async def _json_body(response: Any) -> dict[str, Any]:
    raw = await response.read()
    try:
        body = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    return body if isinstance(body, dict) else {}


def _float(value: Any, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default
