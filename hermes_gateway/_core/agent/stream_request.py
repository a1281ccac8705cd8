"""Upstream requests on plain aiohttp, with the openai SDK's headers and auth, its retry policy and its errors.

Why not the SDK's own request path: profiled under the API server's
one-request-at-a-time load (bench/README.md), it was a third of the
gateway's CPU per request (~0.45 ms): options copied with pydantic, the URL
parsed and re-merged by httpx2, headers merged three times, then the
httpx-to-aiohttp adapter and its response wrappers, and one more generator
layer per streamed chunk. The agent's body is already plain JSON and its
URL is fixed, so this posts it with an ``aiohttp.ClientSession`` of its own
and hands :class:`~.sse.SSEPayloads` the aiohttp response, while keeping
what the SDK guarantees — through its public surface only:

- the same request: URL ``base_url + path``, the SDK client's own headers
  (``auth_headers`` and ``default_headers``: ``Authorization: Bearer``,
  ``User-Agent``, ``X-Stainless-*``, organization/project, custom headers)
  read from it once, the same JSON, and ``x-stainless-retry-count`` per
  attempt;
- the same retries: ``max_retries`` attempts more on connection errors,
  timeouts and the statuses the SDK retries, waiting what it would
  (:mod:`.retry_policy`, the SDK's policy written out);
- errors of the project's own (:mod:`.errors`): a non-2xx answer is
  :class:`~.errors.UpstreamStatusError` with the SDK's message and body, a
  connection failure :class:`~.errors.UpstreamConnectionError` and a timeout
  :class:`~.errors.UpstreamTimedOut`, each with the aiohttp error as its
  cause; read errors mid-body are the same, marked ``mid_stream``;
- the same timeouts: connect (and waiting for a pooled connection) bounded
  by ``model.timeouts.connect``; reads unbounded here (the agent's
  first-token and stall deadlines govern them).

Only where the SDK would run on aiohttp itself (:func:`.upstream.aiohttp_suits`:
no proxy variables, no credentials in the URL); elsewhere, and for the demo
model, the ``sdk`` transport makes the requests.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import aiohttp
import openai
from multidict import CIMultiDict
from yarl import URL

from ..config import Timeouts
from ..demo.transport import httpx
from ..json_compact import compact_encoder
from .errors import UpstreamConnectionError, UpstreamStatusError, UpstreamTimedOut
from .eager_request import NEEDED as EAGER_NEEDED
from .eager_request import EagerBodyRequest
from .retry_policy import retry_delay, should_retry

#: Connections per upstream at most (the SDK's default limit).
MAX_CONNECTIONS = 1000
#: How long an idle pooled connection is kept (the SDK's default keep-alive expiry).
KEEPALIVE_EXPIRY = 5.0
#: What the SDK's ``with_streaming_response`` / ``with_raw_response`` send (its ``RAW_RESPONSE_HEADER``).
RAW_RESPONSE_HEADER = "X-Stainless-Raw-Response"


def _sdk_headers(client: openai.AsyncOpenAI) -> dict[str, str]:
    """The headers the SDK sends on a request of ``client`` (auth included), without omitted ones."""
    merged: dict[str, Any] = {**client.auth_headers, **client.default_headers}
    return {name: value for name, value in merged.items() if isinstance(value, str)}


class BodyEncoder:
    """The request body as the SDK's ``openapi_dumps`` writes it (compact JSON, UTF-8, no NaN), with the
    tool schemas encoded once rather than per request.

    An agent sends the same ``tools`` list (the same object) on every request, and encoding its schemas
    was most of the body's cost (~10-30 us of the API server's per-request CPU, bench/README.md). A body
    whose ``tools`` is the last list seen is encoded in one call with a marker string in the tools' place,
    and the cached JSON goes where the marker's literal is (a marker made per process: a client cannot
    send it; should the literal appear anywhere else, the body is encoded value by value instead). The
    bytes are exactly ``json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)``.
    The agent never mutates its tools list after building it (a new list is a new object, encoded afresh).
    """

    __slots__ = ("_encode", "_tools", "_tools_json", "_marker", "_marker_json")

    def __init__(self) -> None:
        self._encode = compact_encoder(allow_nan=False)
        self._tools: Any = None
        self._tools_json = ""
        self._marker = f"\0hermes-tools-{secrets.token_hex(16)}\0"
        self._marker_json = self._encode(self._marker)

    def encode(self, body: dict[str, Any]) -> bytes:
        tools = body.get("tools")
        if not tools:
            return self._encode(body).encode()
        if tools is not self._tools:
            self._tools, self._tools_json = tools, self._encode(tools)
        marked = dict(body)
        marked["tools"] = self._marker  # same place in the key order
        text = self._encode(marked)
        if text.count(self._marker_json) == 1:
            return text.replace(self._marker_json, self._tools_json).encode()
        encode, cached = self._encode, self._tools_json
        return ("{" + ",".join(f"{encode(key)}:{cached if value is tools else encode(value)}"
                               for key, value in body.items()) + "}").encode()


class StreamPoster:
    """POSTs requests for one upstream (one SDK client's settings) on an aiohttp session of its own."""

    def __init__(self, client: openai.AsyncOpenAI, timeouts: Timeouts) -> None:
        self.client = client
        self.base_url = str(client.base_url)  # the SDK keeps it with a trailing slash
        self.max_retries = client.max_retries
        self.timeout = aiohttp.ClientTimeout(total=None, connect=timeouts.connect, sock_connect=timeouts.connect,
                                             sock_read=None)
        self._first_attempt: CIMultiDict[str] = CIMultiDict()  # streamed: the SDK's headers, retry count 0
        self._first_call: CIMultiDict[str] = CIMultiDict()     # the same, for a non-streamed call
        self._urls: dict[str, URL] = {}
        self._body = BodyEncoder()
        self._session: aiohttp.ClientSession | None = None

    async def _setup(self) -> None:
        # The SDK finds its platform headers (``platform.platform()`` and friends, cached) off the loop the
        # first time; so does this. The rest on the loop: ``X-Stainless-Async`` names the running loop's kind.
        client = self.client
        await asyncio.to_thread(client.platform_headers)
        if self._session is not None:  # the first turns start together: one of them set up while we waited
            return
        headers = _sdk_headers(client)
        self._first_call = CIMultiDict({**headers, "x-stainless-retry-count": "0"})
        self._first_attempt = CIMultiDict({**headers, RAW_RESPONSE_HEADER: "stream", "x-stainless-retry-count": "0"})
        ssl: Any = httpx.create_ssl_context() if self.base_url.startswith("https:") else True  # as the SDK's
        connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_EXPIRY, ssl=ssl)
        extra: dict[str, Any] = {"request_class": EagerBodyRequest} if EAGER_NEEDED else {}
        self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout, trust_env=False,
                                              skip_auto_headers=("User-Agent",), **extra)

    async def call(self, path: str, body: dict[str, Any]) -> bytes:
        """Send the non-streamed request ``body``; the 2xx answer's bytes, after the SDK's retries."""
        response = await self.post(path, body, stream=False)
        try:
            return await response.read()
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise UpstreamConnectionError(mid_stream=True) from exc
        finally:
            response.release()

    async def post(self, path: str, body: dict[str, Any], *, stream: bool) -> aiohttp.ClientResponse:
        """Send ``body`` to ``base_url + path`` (``stream``: as a streamed request, the SDK's raw-response
        header); the response once a 2xx answer's headers are in, after the SDK's retries."""
        if self._session is None:
            await self._setup()
        session = self._session
        assert session is not None
        url = self._urls.get(path)
        if url is None:
            url = self._urls[path] = URL(self.base_url + path.lstrip("/"))  # parsed once, not per request
        data = self._body.encode(body)
        max_retries = self.max_retries
        first = self._first_attempt if stream else self._first_call
        for retries_taken in range(max_retries + 1):
            remaining = max_retries - retries_taken
            attempt_headers = first
            if retries_taken:
                attempt_headers = first.copy()
                attempt_headers["x-stainless-retry-count"] = str(retries_taken)
            try:
                response = await session.post(url, data=data, headers=attempt_headers)
            except (asyncio.TimeoutError, aiohttp.ServerTimeoutError) as exc:
                if remaining > 0:
                    await asyncio.sleep(retry_delay(remaining, max_retries))
                    continue
                raise UpstreamTimedOut() from exc
            except aiohttp.ClientError as exc:
                if remaining > 0:
                    await asyncio.sleep(retry_delay(remaining, max_retries))
                    continue
                raise UpstreamConnectionError() from exc
            if 200 <= response.status < 300:
                return response
            failed = await _read_failure(response)
            if remaining > 0 and should_retry(failed.status_code, failed.headers):
                await asyncio.sleep(retry_delay(remaining, max_retries, failed.headers))
                continue
            raise failed
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


async def _read_failure(response: aiohttp.ClientResponse) -> UpstreamStatusError:
    """A non-2xx answer, read whole and released, as the error it stands for."""
    content: bytes | None
    try:
        content = await response.read()
    except (aiohttp.ClientError, asyncio.TimeoutError):
        content = None
    finally:
        response.release()
    return UpstreamStatusError.from_response(response.status, response.headers, content)


class StreamBody:
    """An aiohttp response in the shape :class:`~.sse.SSEPayloads` reads: ``headers``, ``aiter_raw()``,
    ``aclose()``, ``is_closed``, ``http_version``.

    Reading it is one ``readany()`` per network read; aiohttp's read errors become
    :class:`~.errors.UpstreamConnectionError` / :class:`~.errors.UpstreamTimedOut` (marked
    ``mid_stream``). Closing it before the body's end closes the connection (the upstream sees the
    client go, which stops the model); after the end, the connection goes back to the pool.
    """

    __slots__ = ("raw", "headers", "_readany")

    http_version = "HTTP/1.1"

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.raw = response
        self.headers = response.headers
        self._readany = response.content.readany

    @property
    def is_closed(self) -> bool:
        return self.raw.closed

    def at_eof(self) -> bool:
        """The whole body has been read (:class:`~.sse.SSEPayloads` then has nothing to drain)."""
        return self.raw.content.at_eof()

    def aiter_raw(self) -> "StreamBody":
        return self

    aiter_bytes = aiter_raw  # aiohttp has already decoded any Content-Encoding

    def __aiter__(self) -> "StreamBody":
        return self

    async def __anext__(self) -> bytes:
        try:
            chunk = await self._readany()
        except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as exc:
            raise UpstreamConnectionError(mid_stream=True) from exc
        except asyncio.TimeoutError as exc:
            raise UpstreamTimedOut(mid_stream=True) from exc
        if chunk:
            return chunk
        raise StopAsyncIteration

    async def aclose(self) -> None:
        response = self.raw
        if response.content.at_eof():
            response.release()
        else:
            response.close()
