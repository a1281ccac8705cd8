"""JSON-RPC 2.0 over the daemon's ``POST /api/v1/rpc``: one call, one answer, its failures translated.

Every call the plugin makes goes through :meth:`Rpc.call`, so what the core
sees of a failure is decided in one place: a JSON-RPC error by
:func:`.errors.translate`; the daemon unreachable is a retryable
``DeliveryError``; a timeout after a ``send`` left may have delivered it
(``maybe_delivered``); an answer that is not JSON-RPC (a proxy's error page,
a hostile daemon) is one line, never parsed further. Answers are read within
a bound: a ``getAttachment`` answer (the file as base64) within the caller's,
every other one within :data:`MAX_ANSWER_BYTES`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import aiohttp

from hermes_gateway import DeliveryError

from .errors import translate
from .settings import SignalSettings

#: No answer of signal-cli but getAttachment's is near this (a send result lists a group's members).
MAX_ANSWER_BYTES = 1024 * 1024
RPC_PATH = "/api/v1/rpc"


class Rpc:
    """The daemon's JSON-RPC endpoint, on one aiohttp session (opened on first use, closed by :meth:`close`)."""

    def __init__(self, settings: SignalSettings) -> None:
        self.settings = settings
        self._session: aiohttp.ClientSession | None = None
        self._ids = itertools.count(1)

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Authorization": f"Bearer {self.settings.token}"} if self.settings.token else {}
            self._session = aiohttp.ClientSession(headers=headers, timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=min(10.0, self.settings.timeout)))
        return self._session

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    async def call(self, method: str, params: dict[str, Any], *, what: str, sends: bool = True,
                   max_bytes: int = MAX_ANSWER_BYTES, timeout: float | None = None) -> Any:
        """The ``result`` of ``method``; ``sends``: the call makes something happen on Signal (a timeout may have)."""
        request_id = next(self._ids)
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": request_id})
        try:
            async with asyncio.timeout(timeout or self.settings.timeout):
                async with self.session.post(self.settings.url + RPC_PATH, data=body,
                                             headers={"Content-Type": "application/json"}) as response:
                    if response.status != 200:
                        raise DeliveryError(f"signal: {what}: the daemon answered HTTP {response.status}",
                                            retryable=response.status >= 500 or response.status == 429)
                    if response.content_length is not None and response.content_length > max_bytes:
                        raise DeliveryError(f"signal: {what}: the daemon's answer is over {max_bytes} bytes",
                                            retryable=False, maybe_delivered=sends)
                    raw = await _read_within(response, max_bytes, what, sends)
        except TimeoutError:
            raise DeliveryError(f"signal: {what}: no answer from the daemon within {timeout or self.settings.timeout:g}s",
                                retryable=True, maybe_delivered=sends) from None
        except aiohttp.ClientConnectorError:
            raise DeliveryError(f"signal: {what}: the daemon at {self.settings.url} is not reachable",
                                retryable=True) from None
        except aiohttp.ClientError as exc:
            raise DeliveryError(f"signal: {what}: the connection to the daemon broke ({type(exc).__name__})",
                                retryable=True, maybe_delivered=sends) from None
        try:
            answer = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise DeliveryError(f"signal: {what}: the daemon's answer is not JSON", retryable=True,
                                maybe_delivered=sends) from None
        if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0" or answer.get("id") != request_id:
            raise DeliveryError(f"signal: {what}: the daemon's answer is not a JSON-RPC answer to this call",
                                retryable=True, maybe_delivered=sends)
        if "error" in answer:
            raise translate(answer["error"], what)
        return answer.get("result")


async def _read_within(response: aiohttp.ClientResponse, max_bytes: int, what: str, sends: bool) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > max_bytes:
            raise DeliveryError(f"signal: {what}: the daemon's answer is over {max_bytes} bytes", retryable=False,
                                maybe_delivered=sends)
        chunks.append(chunk)
    return b"".join(chunks)
