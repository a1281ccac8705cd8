"""The upstreams an agent talks to: one ``AsyncOpenAI`` client per endpoint.

Demo endpoints (no ``base_url``) get a client whose HTTP transport is the
in-process demo model, so they go through exactly the same SDK code as a
real upstream. Which upstreams do not stream is remembered per upstream
(and forgotten after a while, in case it was a passing problem).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import openai

from ..config import Endpoint, Timeouts
from ..demo.transport import DEMO_BASE_URL, demo_http_client, httpx
from .chat_completions import open_stream as sdk_open_stream
from .stream_request import StreamPoster

NO_KEY = "no-key-configured"


@dataclass
class Upstream:
    endpoint: Endpoint
    client: openai.AsyncOpenAI
    #: Posts streamed requests without the SDK's per-request machinery (None: the SDK posts them).
    poster: StreamPoster | None = None

    async def open_stream(self, path: str, body: dict[str, Any]) -> Any:
        """A streamed request's response, once its headers are in: on :attr:`poster` when there is one, else
        through the SDK (``client.post``); either way with the SDK's headers, retries and exceptions."""
        if self.poster is not None:
            return await self.poster.open(path, body)
        return await sdk_open_stream(self.client, path, body)

    @property
    def key(self) -> tuple[str, str]:
        return (self.endpoint.base_url or "demo", self.endpoint.name)

    @property
    def label(self) -> str:
        """How errors and logs name this upstream: model and URL (credentials masked), never the key."""
        return f"{self.endpoint.name} at {self.endpoint.display_url or 'the built-in demo model'}"


class StreamSupport:
    """Upstreams known not to stream, each remembered for ``ttl`` seconds."""

    def __init__(self, ttl: float = 600.0) -> None:
        self.ttl = ttl
        self._no_stream: dict[tuple[str, str], float] = {}
        self._no_usage_option: dict[tuple[str, str], float] = {}

    def streams(self, key: tuple[str, str]) -> bool:
        return not self._remembered(self._no_stream, key)

    def takes_usage_option(self, key: tuple[str, str]) -> bool:
        return not self._remembered(self._no_usage_option, key)

    def mark_not_streaming(self, key: tuple[str, str]) -> None:
        self._no_stream[key] = time.monotonic() + self.ttl

    def mark_no_usage_option(self, key: tuple[str, str]) -> None:
        self._no_usage_option[key] = time.monotonic() + self.ttl

    def forget(self) -> None:
        self._no_stream.clear()
        self._no_usage_option.clear()

    @staticmethod
    def _remembered(table: dict[tuple[str, str], float], key: tuple[str, str]) -> bool:
        until = table.get(key)
        if until is None:
            return False
        if time.monotonic() >= until:
            del table[key]
            return False
        return True


#: Shared by every agent in the process: agents may be made per request.
STREAM_SUPPORT = StreamSupport()


def aiohttp_http_client(timeout: Any) -> Any:
    """The SDK's own aiohttp transport (``openai.DefaultAioHttpClient``), with its errors named right.

    Measured against the SDK's default httpx transport (bench/README.md, API section):
    ~1.3 instead of ~2.1 ms of CPU per request and ~13 instead of ~20 us per streamed
    chunk. Its error mapping turns every ``aiohttp.ClientConnectionError`` into
    ``ConnectTimeout``, so a refused connection or a peer that hung up would be
    reported (and retried) as a timeout; :class:`_NamedErrors` restores
    ``ConnectError`` and ``ReadError`` for those.
    """
    return openai.DefaultAioHttpClient(timeout=timeout, transport=_NamedErrors(_aiohttp_transport()))


_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


def aiohttp_suits(base_url: str) -> bool:
    """The aiohttp transport, unless the SDK's httpx default does something it does not.

    It refuses credentials in the URL next to the bearer key
    (``http://user:pass@host``), and it ignores proxy environment variables;
    such setups keep httpx.
    """
    if "@" in urlsplit(base_url).netloc:
        return False
    return not any(name in _PROXY_VARIABLES and value for name, value in
                   ((k.lower(), v) for k, v in os.environ.items()))


def _aiohttp_transport() -> Any:
    from openai._base_client import DEFAULT_CONNECTION_LIMITS
    from openai._vendor.httpx_aiohttp.transport import AiohttpTransport

    return AiohttpTransport(limits=DEFAULT_CONNECTION_LIMITS)


def _renamed(exc: Exception) -> Exception | None:
    """``ConnectTimeout`` raised for a connection error that was no timeout: the right httpx error."""
    import aiohttp

    cause = exc.__cause__
    if not isinstance(exc, httpx.ConnectTimeout) or cause is None or isinstance(cause, asyncio.TimeoutError):
        return None
    if isinstance(cause, aiohttp.ClientConnectorError):
        return httpx.ConnectError(str(exc))
    return httpx.ReadError(str(exc))  # the peer closed or reset the connection


class _NamedErrors(httpx.AsyncBaseTransport):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def handle_async_request(self, request: Any) -> Any:
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:
            renamed = _renamed(exc)
            if renamed is None:
                raise
            raise renamed from exc.__cause__
        response.stream = _NamedErrorsStream(response.stream)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _NamedErrorsStream(httpx.AsyncByteStream):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __aiter__(self) -> Any:
        try:
            async for chunk in self.inner:
                yield chunk
        except Exception as exc:
            renamed = _renamed(exc)
            if renamed is None:
                raise
            raise renamed from exc.__cause__

    async def aclose(self) -> None:
        await self.inner.aclose()


class UpstreamPool:
    """Clients for the primary endpoint and its fallbacks, made lazily on the running loop."""

    def __init__(self, endpoints: tuple[Endpoint, ...], timeouts: Timeouts, *, max_retries: int = 2,
                 demo_tokens_per_second: float = 30.0) -> None:
        self.endpoints = endpoints
        self.timeouts = timeouts
        self.max_retries = max_retries
        self.demo_tokens_per_second = demo_tokens_per_second
        self._clients: dict[int, Upstream] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def all(self) -> list[Upstream]:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # clients are bound to the loop that made them
            self._clients = {}
            self._loop = loop
        return [self._get(i, e) for i, e in enumerate(self.endpoints)]

    def _get(self, index: int, endpoint: Endpoint) -> Upstream:
        upstream = self._clients.get(index)
        if upstream is None:
            client = self._make_client(endpoint)
            # Streamed requests skip the SDK where it would run on aiohttp anyway (stream_request.py).
            poster = StreamPoster(client, self.timeouts) \
                if endpoint.base_url and aiohttp_suits(endpoint.base_url) else None
            upstream = self._clients[index] = Upstream(endpoint, client, poster)
        return upstream

    def _make_client(self, endpoint: Endpoint) -> openai.AsyncOpenAI:
        t = self.timeouts
        # read=None: the agent's own first-token and stall deadlines govern reads (see guard.py).
        timeout = httpx.Timeout(connect=t.connect, read=None, write=max(t.connect, 30.0), pool=t.connect)
        kwargs: dict[str, Any] = {"timeout": timeout, "max_retries": self.max_retries}
        if endpoint.base_url:
            http_client = aiohttp_http_client(timeout) if aiohttp_suits(endpoint.base_url) else None
            return openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key or NO_KEY,
                                      http_client=http_client, **kwargs)
        return openai.AsyncOpenAI(base_url=DEMO_BASE_URL, api_key="demo",
                                  http_client=demo_http_client(self.demo_tokens_per_second), **kwargs)

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for upstream in clients.values():
            try:
                if upstream.poster is not None:
                    await upstream.poster.aclose()
                await upstream.client.close()
            except Exception:  # closing is best effort
                pass
