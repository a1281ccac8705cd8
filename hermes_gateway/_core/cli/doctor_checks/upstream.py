"""The model's upstream answers and lists the configured model; this machine's clock agrees with its ``Date``.

One ``GET {base_url}/models`` per endpoint (the primary, then each
fallback) with its key: the OpenAI-compatible way to list what an endpoint
serves, which costs no tokens. The clock is compared with the ``Date``
header of the primary's answer: a clock off by more than 30 s breaks
Slack's and WhatsApp's request signatures and every TLS certificate check.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from typing import Any

import aiohttp

from ...config import Config, Endpoint
from ...masking import mask_url
from . import Line

#: How far this machine's clock may be from the upstream's before doctor complains (seconds).
MAX_SKEW = 30.0


async def check_upstream(config: Config, timeout: float) -> list[Line]:
    if config.model.is_demo:
        return [Line(True, "model", "the built-in demo model (no upstream to check)"),
                Line(True, "clock", "not compared: the demo model has no upstream")]
    lines: list[Line] = []
    endpoints = [("model", config.model.endpoint)]
    endpoints += [(f"model.fallback[{i}]", e) for i, e in enumerate(config.model.fallback) if e.base_url]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        found = await asyncio.gather(*(_models(session, key, endpoint) for key, endpoint in endpoints))
    lines.extend(line for line, _ in found)
    primary, date = found[0]  # the clock is compared with the primary's answer
    unreachable = date is None and primary.subject.endswith(".base_url")
    lines.append(Line(False, "clock", "not compared: the upstream did not answer") if unreachable else _clock(date))
    return lines


async def _models(session: aiohttp.ClientSession, key: str, endpoint: Endpoint) -> tuple[Line, str | None]:
    url = (endpoint.base_url or "").rstrip("/") + "/models"
    shown = mask_url(url)
    headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
    try:
        async with session.get(url, headers=headers) as response:
            date = response.headers.get("Date")
            if response.status in (401, 403):
                return Line(False, f"{key}.api_key", f"{shown} refused the key (HTTP {response.status}): "
                                                     f"set {key}.api_key to a valid key"), date
            if response.status >= 400:
                return Line(False, f"{key}.base_url", f"{shown} answered HTTP {response.status}: is {key}.base_url "
                                                      "the endpoint's /v1 address?"), date
            body: Any = await response.json(content_type=None)
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        return Line(False, f"{key}.base_url", f"cannot reach {shown} ({type(exc).__name__}: {exc}); "
                                              "is the server running, and the address right?"), None
    ids = [str(m.get("id")) for m in body.get("data", []) if isinstance(m, dict)] if isinstance(body, dict) else []
    if endpoint.name in ids:
        return Line(True, key, f"{endpoint.name} is served by {mask_url(endpoint.base_url or '')}"), date
    offered = ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "") if ids else "none"
    return Line(False, f"{key}.name", f"{endpoint.name!r} is not among the models {shown} lists ({offered}): "
                                      f"set {key}.name to one of them"), date


def _clock(date: str | None) -> Line:
    if not date:
        return Line(False, "clock", "not compared: the upstream sent no Date header")
    try:
        theirs = email.utils.parsedate_to_datetime(date).timestamp()
    except (TypeError, ValueError):
        return Line(False, "clock", f"not compared: the upstream's Date header is not a date ({date!r})")
    skew = time.time() - theirs
    if abs(skew) <= MAX_SKEW:
        return Line(True, "clock", f"within {MAX_SKEW:g} s of the upstream's ({skew:+.0f} s)")
    return Line(False, "clock", f"{abs(skew):.0f} s {'ahead of' if skew > 0 else 'behind'} the upstream's Date: "
                                "sync it (timedatectl set-ntp true, or chrony/ntpd)")
