"""The upstreams an agent talks to: one transport (and ``AsyncOpenAI`` client) per endpoint.

Which transport (:mod:`.transport`) is ``model.transport``: ``fast`` where
it suits (:func:`fast_transport_suits`), else ``sdk``. Demo endpoints (no
``base_url``) are called in-process (:mod:`.transport_demo`: the same SSE
reader as a real upstream on the fast transport, and no SDK import), or, with
``model.transport: sdk``, through an SDK client whose HTTP transport is the
in-process demo model. Which upstreams do not stream is
remembered per upstream (and forgotten after a while, in case it was a
passing problem).

The ``openai`` SDK (with httpx2 and pydantic, ~47 MB resident and ~1 s of
CPU) is imported only when a client is made: by the sdk transport, or when
someone asks an upstream for its ``client`` (:class:`LazyClient`). The fast
transport and the demo model never do (:mod:`.sdk_headers`, :mod:`.transport_demo`),
so a gateway on the default transport does not carry it (issue 39).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlsplit
from urllib.request import proxy_bypass_environment  # type: ignore[attr-defined]  # (not in typeshed)

from ..config import Endpoint, ModelConfig, Timeouts
from .transport import UpstreamTransport
from .transport_fast import FastTransport

if TYPE_CHECKING:
    import openai

NO_KEY = "no-key-configured"


class LazyClient:
    """An endpoint's SDK client, made on first need (importing the ``openai`` SDK then), once, from any thread."""

    def __init__(self, make: Callable[[], "openai.AsyncOpenAI"]) -> None:
        self._make = make
        self._client: openai.AsyncOpenAI | None = None
        self._lock = threading.Lock()

    @property
    def made(self) -> "openai.AsyncOpenAI | None":
        return self._client

    def get(self) -> "openai.AsyncOpenAI":
        client = self._client
        if client is None:
            with self._lock:  # the first turns may set up together, each in a thread of its own
                client = self._client
                if client is None:
                    client = self._client = self._make()
        return client


@dataclass
class Upstream:
    endpoint: Endpoint
    lazy_client: LazyClient
    #: How requests to it travel: ``fast`` or ``sdk`` (:mod:`.transport`).
    transport: UpstreamTransport

    @property
    def client(self) -> "openai.AsyncOpenAI":
        """The endpoint's SDK client (made now if the transport has not needed it yet)."""
        return self.lazy_client.get()

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


def fast_transport_suits(base_url: str) -> bool:
    """The fast transport (:mod:`.http1`), unless the SDK's httpx default does something it does not.

    It refuses credentials in the URL next to the bearer key
    (``http://user:pass@host``), and it does not speak to proxies: where a
    proxy variable applies to the URL (``HTTPS_PROXY`` or ``ALL_PROXY`` for
    ``https``, ``HTTP_PROXY`` or ``ALL_PROXY`` for ``http``, any case) and
    ``NO_PROXY`` does not exempt its host, httpx goes through the proxy, so
    such setups keep httpx.
    """
    parts = urlsplit(base_url)
    if "@" in parts.netloc:
        return False
    wanted = {f"{parts.scheme.lower()}_proxy", "all_proxy"}
    if not any(name.lower() in wanted and value for name, value in os.environ.items()):
        return True
    return bool(proxy_bypass_environment(parts.hostname or ""))


def route(transport: str, endpoint: Endpoint) -> str:
    """How requests to ``endpoint`` travel under ``model.transport``: ``"fast"`` (:mod:`.transport_fast`),
    ``"demo"`` (the demo model in-process, :mod:`.transport_demo`) or ``"sdk"`` (:mod:`.transport_sdk`)."""
    if transport == "fast" and endpoint.base_url is None:
        return "demo"
    if transport == "fast" and endpoint.base_url is not None and fast_transport_suits(endpoint.base_url):
        return "fast"
    return "sdk"


def uses_sdk(model: ModelConfig) -> bool:
    """Whether requests of ``model`` (its endpoint or a fallback) go through the openai SDK (the sdk transport)."""
    return any(route(model.transport, e) == "sdk" for e in (model.endpoint, *model.fallback))


def _never_sends() -> Any:
    """The HTTP transport of an SDK client whose requests the fast transport makes (see ``_make_client``)."""
    from ..demo.transport import httpx

    class _NeverSends(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: Any) -> Any:
            raise RuntimeError("this upstream's requests go through the fast transport, not its SDK client")

    return _NeverSends()


class UpstreamPool:
    """Clients for the primary endpoint and its fallbacks, made lazily on the running loop.

    ``transport`` is ``model.transport``: ``fast`` (where :func:`fast_transport_suits`) or ``sdk``.
    """

    def __init__(self, endpoints: tuple[Endpoint, ...], timeouts: Timeouts, *, max_retries: int = 2,
                 demo_tokens_per_second: float = 30.0, transport: str = "fast") -> None:
        self.endpoints = endpoints
        self.transport = transport
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
            way = route(self.transport, endpoint)
            lazy = LazyClient(lambda: self._make_client(endpoint, sends=way != "fast"))
            transport: UpstreamTransport
            if way == "fast":
                assert endpoint.base_url is not None
                transport = FastTransport(endpoint.api_key or NO_KEY, endpoint.base_url, self.max_retries,
                                          self.timeouts)
            elif way == "demo":
                from .transport_demo import DemoDirectTransport

                transport = DemoDirectTransport(self.demo_tokens_per_second)
            else:
                from .transport_sdk import SdkTransport

                transport = SdkTransport(lazy.get())
            upstream = self._clients[index] = Upstream(endpoint, lazy, transport)
        return upstream

    def _make_client(self, endpoint: Endpoint, *, sends: bool) -> "openai.AsyncOpenAI":
        """The endpoint's SDK client. ``sends``: the sdk transport sends through it; otherwise (the fast
        transport) it only lends its headers and settings, and gets an HTTP client that never sends (the
        SDK's default one would load the system's CA certificates, ~30 ms on the first request's loop)."""
        import openai

        from ..demo.transport import DEMO_BASE_URL, demo_http_client, httpx
        from .transport_sdk import bounded_http_client

        t = self.timeouts
        # read=None: the agent's own first-token and stall deadlines govern reads (see guard.py).
        timeout = httpx.Timeout(connect=t.connect, read=None, write=max(t.connect, 30.0), pool=t.connect)
        kwargs: dict[str, Any] = {"timeout": timeout, "max_retries": self.max_retries}
        if endpoint.base_url:  # sends: the SDK's own HTTP client (httpx), which honours proxy variables
            http_client = bounded_http_client() if sends else httpx.AsyncClient(transport=_never_sends())
            return openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key or NO_KEY,
                                      http_client=http_client, **kwargs)
        return openai.AsyncOpenAI(base_url=DEMO_BASE_URL, api_key="demo",
                                  http_client=demo_http_client(self.demo_tokens_per_second), **kwargs)

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for upstream in clients.values():
            try:
                await upstream.transport.aclose()
                client = upstream.lazy_client.made
                if client is not None:
                    await client.close()
            except Exception:  # closing is best effort
                pass
