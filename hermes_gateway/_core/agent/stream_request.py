"""The streamed upstream request on plain aiohttp, with the openai SDK's headers, auth, retries and errors.

Why not ``client.post(..., stream=True)``: profiled under the API server's
one-request-at-a-time load (bench/README.md), the SDK's request path was a
third of the gateway's CPU per request (~0.45 ms): options copied with
pydantic, the URL parsed and re-merged by httpx2, headers merged three
times, then the httpx-to-aiohttp adapter and its response wrappers, and one
more generator layer per streamed chunk. The agent's body is already
plain JSON and its URL is fixed, so this posts it with an
``aiohttp.ClientSession`` of its own and hands :class:`~.sse.SSEPayloads`
the aiohttp response, while keeping what the SDK guarantees:

- the same request: URL ``base_url + path``, the SDK client's own headers
  (``Authorization: Bearer``, ``User-Agent``, ``X-Stainless-*``,
  organization/project, custom headers) read from it once, the same JSON,
  and ``x-stainless-retry-count`` per attempt;
- the same retries: ``max_retries`` attempts more on connection errors,
  timeouts and the statuses the SDK retries (its own ``_should_retry``:
  408/409/429/5xx, ``x-should-retry``, a ``Retry-After`` over its maximum),
  waiting what its own ``_calculate_retry_timeout`` says;
- the same errors: a non-2xx answer becomes the SDK's ``APIStatusError``
  subclass built by the SDK (``_make_status_error_from_response``), a
  connection failure ``APIConnectionError`` and a timeout
  ``APITimeoutError``, each with the aiohttp error as its cause; read errors
  mid-body become httpx's ``ReadError``, which ``SSEPayloads`` maps as before;
- the same timeouts: connect (and waiting for a pooled connection) bounded
  by ``model.timeouts.connect``; reads unbounded here (the agent's
  first-token and stall deadlines govern them).

Only for the streamed call, and only where the SDK itself would run on
aiohttp (:func:`.upstream.aiohttp_suits`: no proxy variables, no
credentials in the URL); non-streaming calls and the demo model keep the SDK.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Mapping

import aiohttp
import openai
from multidict import CIMultiDict
from yarl import URL
from openai._constants import RAW_RESPONSE_HEADER

from ..config import Timeouts
from ..demo.transport import httpx

#: Connections per upstream at most (the SDK's default limit).
MAX_CONNECTIONS = 1000
#: How long an idle pooled connection is kept (the SDK's default keep-alive expiry).
KEEPALIVE_EXPIRY = 5.0


class _RetryOptions:
    """What the SDK's ``_calculate_retry_timeout`` reads of its request options."""

    @staticmethod
    def get_max_retries(default: int) -> int:
        return default


def _sdk_headers(client: openai.AsyncOpenAI) -> dict[str, str]:
    """The headers the SDK sends on a streamed request of ``client`` (auth included), without omitted ones.

    ``X-Stainless-Raw-Response: stream`` is what ``with_streaming_response`` (and ``open_stream``) send.
    """
    merged: dict[str, Any] = {**client.auth_headers, **client.default_headers, RAW_RESPONSE_HEADER: "stream"}
    return {name: value for name, value in merged.items() if isinstance(value, str)}


class BodyEncoder:
    """The request body as the SDK's ``openapi_dumps`` writes it (compact JSON, UTF-8, no NaN), with the
    tool schemas encoded once rather than per request.

    An agent sends the same ``tools`` list (the same object) on every request, and encoding its schemas
    was most of the body's cost (~10-30 us of the API server's per-request CPU, bench/README.md). Any value
    of the body that is the last ``tools`` object seen is written from its cached JSON; the bytes are
    exactly ``json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)``. The agent
    never mutates its tools list after building it (a new list is a new object, encoded afresh).
    """

    __slots__ = ("_encode", "_tools", "_tools_json")

    def __init__(self) -> None:
        self._encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
        self._tools: Any = None
        self._tools_json = ""

    def encode(self, body: dict[str, Any]) -> bytes:
        tools = body.get("tools")
        if not tools:
            return self._encode(body).encode()
        if tools is not self._tools:
            self._tools, self._tools_json = tools, self._encode(tools)
        encode, cached = self._encode, self._tools_json
        return ("{" + ",".join(f"{encode(key)}:{cached if value is tools else encode(value)}"
                               for key, value in body.items()) + "}").encode()


class StreamPoster:
    """POSTs streamed requests for one upstream (one SDK client) on an aiohttp session of its own."""

    def __init__(self, client: openai.AsyncOpenAI, timeouts: Timeouts) -> None:
        self.client = client
        self.base_url = str(client.base_url)  # the SDK keeps it with a trailing slash
        self.max_retries = client.max_retries
        self.timeout = aiohttp.ClientTimeout(total=None, connect=timeouts.connect, sock_connect=timeouts.connect,
                                             sock_read=None)
        self._first_attempt: CIMultiDict[str] = CIMultiDict()  # the SDK's headers with retry count 0, built once
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
        self._first_attempt = CIMultiDict({**_sdk_headers(client), "x-stainless-retry-count": "0"})
        ssl: Any = httpx.create_ssl_context() if self.base_url.startswith("https:") else True  # as the SDK's
        connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_EXPIRY, ssl=ssl)
        self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout, trust_env=False,
                                              skip_auto_headers=("User-Agent",))

    async def open(self, path: str, body: dict[str, Any]) -> "StreamBody":
        """Send ``body`` to ``base_url + path``; the response once its headers are in (2xx only).

        Raises the SDK's exceptions, after the SDK's retries.
        """
        if self._session is None:
            await self._setup()
        session = self._session
        assert session is not None
        url = self._urls.get(path)
        if url is None:
            url = self._urls[path] = URL(self.base_url + path.lstrip("/"))  # parsed once, not per request
        data = self._body.encode(body)
        max_retries = self.max_retries
        for retries_taken in range(max_retries + 1):
            remaining = max_retries - retries_taken
            attempt_headers = self._first_attempt
            if retries_taken:
                attempt_headers = attempt_headers.copy()
                attempt_headers["x-stainless-retry-count"] = str(retries_taken)
            try:
                response = await session.post(url, data=data, headers=attempt_headers)
            except (asyncio.TimeoutError, aiohttp.ServerTimeoutError) as exc:
                if remaining > 0:
                    await self._sleep(remaining, None)
                    continue
                raise openai.APITimeoutError(request=_httpx_request(url, attempt_headers, data)) from exc
            except aiohttp.ClientError as exc:
                if remaining > 0:
                    await self._sleep(remaining, None)
                    continue
                raise openai.APIConnectionError(request=_httpx_request(url, attempt_headers, data)) from exc
            if 200 <= response.status < 300:
                return StreamBody(response, url, attempt_headers, data)
            failed = await _read_failure(response, url, attempt_headers, data)
            if remaining > 0 and self.client._should_retry(failed):
                await self._sleep(remaining, failed.headers)
                continue
            raise self.client._make_status_error_from_response(failed) from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _sleep(self, remaining: int, headers: Any) -> None:
        await asyncio.sleep(self.client._calculate_retry_timeout(remaining, _RetryOptions(), headers))

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


def _httpx_request(url: URL, headers: Mapping[str, str], data: bytes) -> Any:
    """The request as the SDK's exceptions carry it (built only when something failed)."""
    return httpx.Request("POST", str(url), headers=list(headers.items()), content=data)


async def _read_failure(response: aiohttp.ClientResponse, url: URL, headers: Mapping[str, str], data: bytes) -> Any:
    """A non-2xx answer, read whole and released, as the httpx response the SDK's error helpers take."""
    try:
        content = await response.read()
    except (aiohttp.ClientError, asyncio.TimeoutError):
        content = b""
    finally:
        response.release()
    return httpx.Response(response.status, headers=list(response.raw_headers), content=content,
                          request=_httpx_request(url, headers, data))


class StreamBody:
    """An aiohttp response in the shape :class:`~.sse.SSEPayloads` reads (the parts of ``httpx.Response``
    it uses): ``headers``, ``aiter_raw()``, ``aclose()``, ``request``, ``is_closed``, ``http_version``.

    Reading it is one ``readany()`` per network read; aiohttp's read errors become httpx's (``ReadError``,
    ``ReadTimeout``), which ``SSEPayloads`` turns into the SDK's exceptions as it does for the SDK's
    own responses. Closing it before the body's end closes the connection (the upstream sees the
    client go, which stops the model); after the end, the connection goes back to the pool.
    """

    __slots__ = ("raw", "headers", "_readany", "_url", "_request_headers", "_data", "_request")

    http_version = "HTTP/1.1"

    def __init__(self, response: aiohttp.ClientResponse, url: URL, headers: Mapping[str, str], data: bytes) -> None:
        self.raw = response
        self.headers = response.headers
        self._readany = response.content.readany
        self._url, self._request_headers, self._data = url, headers, data
        self._request: Any = None

    @property
    def request(self) -> Any:
        if self._request is None:
            self._request = _httpx_request(self._url, self._request_headers, self._data)
        return self._request

    @property
    def is_closed(self) -> bool:
        return self.raw.closed

    def aiter_raw(self) -> "StreamBody":
        return self

    aiter_bytes = aiter_raw  # aiohttp has already decoded any Content-Encoding

    def __aiter__(self) -> "StreamBody":
        return self

    async def __anext__(self) -> bytes:
        try:
            chunk = await self._readany()
        except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc
        except asyncio.TimeoutError as exc:
            raise httpx.ReadTimeout(str(exc) or "read timed out") from exc
        if chunk:
            return chunk
        raise StopAsyncIteration

    async def aclose(self) -> None:
        response = self.raw
        if response.content.at_eof():
            response.release()
        else:
            response.close()
