"""Upstream requests on a lean HTTP/1.1 client, with the openai SDK's headers and auth, its retry policy and errors.

Why not the SDK's own request path: profiled under the API server's
one-request-at-a-time load (bench/README.md), it was a third of the
gateway's CPU per request (~0.45 ms): options copied with pydantic, the URL
parsed and re-merged by httpx2, headers merged three times, then the
httpx-to-aiohttp adapter and its response wrappers, and one more generator
layer per streamed chunk. The agent's body is already plain JSON and its
URL is fixed, so this posts it on a connection pool of its own
(:mod:`.http1`: aiohttp's client in its place was a quarter of the gateway's
instructions per request), with the request head rendered once per
upstream, and hands :class:`~.sse.SSEPayloads` the response, while keeping
what the SDK guarantees — through its public surface only:

- the same request: URL ``base_url + path``, the SDK client's headers
  (``Authorization: Bearer``, ``User-Agent``, ``X-Stainless-*``,
  organization/project: :mod:`.sdk_headers`, which computes them as the SDK
  does without importing it) once, the same JSON, and
  ``x-stainless-retry-count`` per attempt;
- the same retries: ``max_retries`` attempts more on connection errors,
  timeouts and the statuses the SDK retries, waiting what it would
  (:mod:`.retry_policy`, the SDK's policy written out);
- errors of the project's own (:mod:`.errors`): a non-2xx answer is
  :class:`~.errors.UpstreamStatusError` with the SDK's message and body, a
  connection failure :class:`~.errors.UpstreamConnectionError` and a timeout
  :class:`~.errors.UpstreamTimedOut`, each with the socket's error as its
  cause; read errors mid-body are the same, marked ``mid_stream``;
- the same timeouts: connect (and waiting for a pooled connection) bounded
  by ``model.timeouts.connect``; reads unbounded here (the agent's
  first-token and stall deadlines govern them);
- the same redirects: a ``307``/``308`` answer (the two that keep the
  method and body) is followed as the SDK's httpx follows it, up to
  :data:`MAX_REDIRECTS`, the ``Authorization`` header dropped when the
  new URL is another origin (an ``http`` to ``https`` move on the same host
  keeps it); other origins get a connection pool of their own.

Only where the SDK's httpx client would send the same request (:func:`.upstream.fast_transport_suits`:
no proxy variables, no credentials in the URL); elsewhere, and for the demo
model, the ``sdk`` transport makes the requests.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from yarl import URL

from ..config import Timeouts
from ..json_compact import compact_encoder
from .errors import UpstreamConnectionError, UpstreamStatusError
from .http1 import KEEPALIVE_EXPIRY, MAX_CONNECTIONS, Http1Error, Http1Pool, Http1Response, render_head
from .retry_policy import retry_delay, should_retry
from .sdk_headers import sdk_headers, sdk_ssl_context

#: What the SDK's ``with_streaming_response`` / ``with_raw_response`` send (its ``RAW_RESPONSE_HEADER``).
RAW_RESPONSE_HEADER = "X-Stainless-Raw-Response"
#: Redirects followed for one request at most (httpx's default, which the SDK keeps).
MAX_REDIRECTS = 20
#: The answers that redirect a POST as it is (method and body kept); httpx turns 301-303 into a GET.
_REDIRECTS = (307, 308)


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
    """POSTs requests for one upstream (the SDK client's settings) on a connection pool of its own (:mod:`.http1`)."""

    def __init__(self, api_key: str, base_url: str, max_retries: int, timeouts: Timeouts) -> None:
        """``api_key`` is sent as the SDK sends it (``Authorization: Bearer``, :func:`.sdk_headers.sdk_headers`)."""
        self.api_key = api_key
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"  # as the SDK keeps it
        self.max_retries = max_retries
        self.connect_timeout = timeouts.connect
        self._heads: dict[tuple[str, bool, int], bytes] = {}  # (path, streamed, retry count): the request head
        self._headers: dict[str, str] | None = None  # the SDK's headers, made once
        self._body = BodyEncoder()
        self._pool: Http1Pool | None = None
        self._elsewhere: dict[tuple[str, str, int], Http1Pool] = {}  # pools of origins redirected to
        self._ssl: Any = None

    async def _setup(self) -> None:
        # The platform headers (``platform.platform()`` and friends, cached) are found off the loop the first
        # time, as the SDK does; so is an https endpoint's TLS context (it reads the CA files).
        secure = URL(self.base_url).scheme == "https"
        headers, ssl_context = await asyncio.to_thread(
            lambda: (sdk_headers(self.api_key), sdk_ssl_context() if secure and self._ssl is None else None))
        if self._pool is not None:  # the first turns start together: one of them set up while we waited
            return
        self._headers = headers
        self._ssl = self._ssl or ssl_context
        self._pool = self._new_pool(URL(self.base_url))

    def _new_pool(self, url: URL) -> Http1Pool:
        secure = url.scheme == "https"
        if secure and self._ssl is None:  # (a redirect to https from an http endpoint; rare, so on the loop)
            self._ssl = sdk_ssl_context()  # the SDK's (SSL_CERT_FILE / SSL_CERT_DIR or the system's CAs)
        return Http1Pool(url.raw_host or "", url.port or (443 if secure else 80), ssl=self._ssl if secure else None,
                         connect_timeout=self.connect_timeout, keepalive=KEEPALIVE_EXPIRY, limit=MAX_CONNECTIONS)

    def _head(self, path: str, stream: bool, retries_taken: int) -> bytes:
        """The request line and headers (all but ``Content-Length``), rendered once per path and attempt."""
        key = (path, stream, retries_taken)
        head = self._heads.get(key)
        if head is None:
            assert self._headers is not None
            url = URL(self.base_url + path.lstrip("/"))
            headers = {**self._headers, "Host": url.raw_authority, "Accept-Encoding": "identity"}
            if stream:
                headers[RAW_RESPONSE_HEADER] = "stream"
            headers["x-stainless-retry-count"] = str(retries_taken)
            head = self._heads[key] = render_head("POST", url.raw_path_qs, headers)
        return head

    async def call(self, path: str, body: dict[str, Any]) -> bytes:
        """Send the non-streamed request ``body``; the 2xx answer's bytes, after the SDK's retries."""
        response = await self.post(path, body, stream=False)
        try:
            return await response.read()
        finally:
            response.close()  # (after a whole read it was released already: nothing to do)

    async def prepare(self) -> None:
        """Make the headers and the pool now, if not yet: the first request's set-up (platform lookups, CA
        files) is then not counted against the model's first-token deadline (:meth:`AIAgent._call_model`)."""
        if self._pool is None:
            await self._setup()

    async def post(self, path: str, body: dict[str, Any], *, stream: bool) -> Http1Response:
        """Send ``body`` to ``base_url + path`` (``stream``: as a streamed request, the SDK's raw-response
        header); the response once a 2xx answer's headers are in, after the SDK's retries."""
        if self._pool is None:
            await self._setup()
        pool = self._pool
        assert pool is not None
        data = self._body.encode(body)
        length = b"Content-Length: %d\r\n\r\n" % len(data)
        max_retries = self.max_retries
        for retries_taken in range(max_retries + 1):
            remaining = max_retries - retries_taken
            try:
                response = await pool.request(self._head(path, stream, retries_taken) + length + data)
                if response.status in _REDIRECTS and "location" in response.headers:
                    response = await self._redirected(response, path, stream, retries_taken, length + data)
            except UpstreamConnectionError:  # UpstreamTimedOut included
                if remaining > 0:
                    await asyncio.sleep(retry_delay(remaining, max_retries))
                    continue
                raise
            if 200 <= response.status < 300:
                return response
            failed = await _read_failure(response)
            if remaining > 0 and should_retry(failed.status_code, failed.headers):
                await asyncio.sleep(retry_delay(remaining, max_retries, failed.headers))
                continue
            raise failed
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _redirected(self, response: Http1Response, path: str, stream: bool, retries_taken: int,
                          rest: bytes) -> Http1Response:
        """Follow ``response`` (a 307/308) and its successors as httpx would; the first answer that is not one."""
        url = URL(self.base_url + path.lstrip("/"))
        assert self._headers is not None
        for _ in range(MAX_REDIRECTS):
            response.close()  # its body is not wanted: the connection is not reused for it
            try:
                target = url.join(URL(response.headers["location"]))
            except ValueError:
                raise UpstreamConnectionError() from Http1Error("a redirect to a malformed URL")
            if target.scheme not in ("http", "https") or not target.raw_host:
                raise UpstreamConnectionError() from Http1Error(f"a redirect to a {target.scheme or 'relative'} URL")
            keeps_auth = target.origin() == url.origin() or (
                url.scheme == "http" and target.scheme == "https" and target.raw_host == url.raw_host
                and url.port == 80 and target.port == 443)
            headers = {**self._headers, "Host": target.raw_authority, "Accept-Encoding": "identity"}
            if not keeps_auth:
                headers = {name: value for name, value in headers.items() if name.lower() != "authorization"}
            if stream:
                headers[RAW_RESPONSE_HEADER] = "stream"
            headers["x-stainless-retry-count"] = str(retries_taken)
            head = render_head("POST", target.raw_path_qs, headers)
            response = await self._pool_for(target).request(head + rest)
            if response.status not in _REDIRECTS or "location" not in response.headers:
                return response
            url = target
        response.close()
        raise UpstreamConnectionError() from Http1Error(f"more than {MAX_REDIRECTS} redirects")

    def _pool_for(self, url: URL) -> Http1Pool:
        """The pool for ``url``'s origin: the upstream's own, or one made for an origin it redirected to."""
        assert self._pool is not None
        secure = url.scheme == "https"
        key = (url.scheme, url.raw_host or "", url.port or (443 if secure else 80))
        pool = self._pool
        if (key[1], key[2], secure) == (pool.host, pool.port, pool.ssl is not None):
            return pool
        elsewhere = self._elsewhere.get(key)
        if elsewhere is None:
            elsewhere = self._elsewhere[key] = self._new_pool(url)
        return elsewhere

    async def aclose(self) -> None:
        pools = [self._pool, *self._elsewhere.values()]
        self._pool, self._elsewhere = None, {}
        for pool in pools:
            if pool is not None:
                await pool.aclose()


async def _read_failure(response: Http1Response) -> UpstreamStatusError:
    """A non-2xx answer, read whole and released, as the error it stands for."""
    content: bytes | None
    try:
        content = await response.read()
    except UpstreamConnectionError:
        content = None
    finally:
        response.close()
    return UpstreamStatusError.from_response(response.status, response.headers, content)


class StreamBody:
    """A response in the shape :class:`~.sse.SSEPayloads` reads: ``headers``, ``aiter_raw()``, ``aclose()``,
    ``is_closed``, ``http_version``.

    Reading it is one :meth:`~.http1.Http1Response.read_chunk` per network read (everything that arrived);
    read errors are :class:`~.errors.UpstreamConnectionError` marked ``mid_stream``. Closing it before the
    body's end closes the connection (the upstream sees the client go, which stops the model); after the
    end, the connection goes back to the pool.
    """

    __slots__ = ("raw", "headers", "http_version", "_read")

    def __init__(self, response: Http1Response) -> None:
        self.raw = response
        self.headers = response.headers
        self.http_version = response.http_version
        self._read = response.read_chunk

    @property
    def is_closed(self) -> bool:
        return self.raw.closed

    def at_eof(self) -> bool:
        """The whole body has been read (:class:`~.sse.SSEPayloads` then has nothing to drain)."""
        return self.raw.at_eof()

    def aiter_raw(self) -> "StreamBody":
        return self

    aiter_bytes = aiter_raw  # the client has already decoded any Content-Encoding

    def __aiter__(self) -> "StreamBody":
        return self

    async def __anext__(self) -> bytes:
        chunk = await self._read()
        if chunk:
            return chunk
        raise StopAsyncIteration

    async def aclose(self) -> None:
        response = self.raw
        if response.at_eof():
            response.release()
        else:
            response.close()
