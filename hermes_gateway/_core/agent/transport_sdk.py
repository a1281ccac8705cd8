"""``model.transport: sdk``: every request through the ``openai`` SDK's public API, nothing of ours on the wire.

``client.chat.completions`` / ``client.responses``
``.with_raw_response.create(...)``: the SDK builds and sends the request,
retries it, decodes the SSE body into its pydantic models (turned back into
plain JSON with their public ``to_dict()``), and raises its own exceptions,
which are translated here into :mod:`.errors`' so the agent handles both
transports alike. ``with_raw_response`` rather than a plain ``create`` only
to see the answer's ``Content-Type`` (an upstream that answers a stream
request with JSON does not stream).

The body the agent builds is already the wire JSON, so it goes in
``extra_body`` (the SDK's documented way to send fields as they are); only
``model``, ``stream`` (it decides what ``create`` returns) and a placeholder
for a required ``messages`` are passed by name. Passed by name, the SDK
would first convert every message against its TypedDicts, ~140 us each:
seconds of a frozen event loop for the API server's 4,096-message
conversations (issue 13; ``tests/api_server/test_api_hostile_input.py``).

The SDK's HTTP client is its own default one (timeouts, connection
limits, redirects, proxies from the environment) with two additions of
:mod:`.limits` (:func:`bounded_http_client`): it asks for no compression
and refuses a compressed answer, and every response passes a check of its
head (header fields) and a byte stream that stops an SSE line or event past
1 MiB, or another body past 16 MiB, as the fast transport does: the SDK's
own SSE decoder would hold a line that never ends whole.

What remains is the SDK's CPU per chunk (a pydantic model each, ~80 us,
bench/README.md): this transport is the fallback that keeps working across
SDK upgrades, and the reference the fast one is tested against.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, NoReturn

import openai

from ..demo.transport import httpx
from .errors import MalformedResponse, ReportedError, UpstreamConnectionError, UpstreamStatusError, UpstreamTimedOut
from .limits import MAX_BODY_BYTES, SSEFrameBound, UpstreamTooLarge, check_head
from .transport import CHAT_PATH, RESPONSES_PATH

#: Streamed chunks read between two turns given to the event loop.
YIELD_EVERY = 64
#: ``create``'s required parameters besides ``model``, given a placeholder (``extra_body`` has the real value).
_PLACEHOLDERS: dict[str, dict[str, Any]] = {CHAT_PATH: {"messages": []}, RESPONSES_PATH: {}}


def raise_mapped(exc: openai.APIError, *, mid_stream: bool = False) -> NoReturn:
    """Raise the :mod:`.errors` exception that stands for the SDK's ``exc``."""
    if isinstance(exc, openai.APIStatusError):
        raise UpstreamStatusError(exc.status_code, exc.message, exc.body, exc.response.headers) from None
    if isinstance(exc, openai.APITimeoutError):
        raise UpstreamTimedOut(mid_stream=mid_stream) from exc.__cause__
    if isinstance(exc, openai.APIConnectionError):
        raise UpstreamConnectionError(mid_stream=mid_stream) from exc.__cause__
    if isinstance(exc, openai.APIResponseValidationError):
        raise MalformedResponse(exc.message) from None
    raise ReportedError(exc.message, exc.body) from None


class _BoundedBody(httpx.AsyncByteStream):
    """A response's byte stream within :mod:`.limits`' bounds: SSE lines and events, or the whole body."""

    def __init__(self, stream: Any, events: bool) -> None:
        self._stream = stream
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        bound = SSEFrameBound() if self._events else None
        size = 0
        async for chunk in self._stream:
            if bound is not None:
                try:
                    bound.feed(chunk)
                except UpstreamConnectionError as exc:
                    raise exc.__cause__ or UpstreamTooLarge("the upstream sent too much") from None
            else:
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise UpstreamTooLarge(f"the upstream sent a body over {MAX_BODY_BYTES} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


async def _bound_response(response: Any) -> None:
    """(An httpx response hook: every response, redirects included.) Refuse a head past the bounds or a
    compressed body; read the body within the bounds."""
    check_head(response.headers, len(response.headers.raw))
    response.stream = _BoundedBody(response.stream, "event-stream" in response.headers.get("content-type", ""))


def bounded_http_client(**kwargs: Any) -> Any:
    """The SDK's default HTTP client (``openai.DefaultAsyncHttpxClient``), asking for no compression and reading
    every response within :mod:`.limits`' bounds."""
    return openai.DefaultAsyncHttpxClient(headers={"Accept-Encoding": "identity"},
                                          event_hooks={"response": [_bound_response]}, **kwargs)


class SdkChunks:
    """A streamed answer read by the SDK's own ``AsyncStream``: each model back to plain JSON."""

    __slots__ = ("_raw", "_stream", "content_type", "_count")

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._stream: Any = None
        self.content_type: str = raw.headers.get("content-type", "")
        self._count = 0

    async def next(self) -> Any:
        stream = self._stream
        if stream is None:
            stream = self._stream = self._raw.parse()
        self._count += 1
        if not self._count % YIELD_EVERY:
            # the SDK's stream decodes every event of a network read (64 KiB: ~2,000 small chunks, ~80 us each)
            # without giving the loop a turn; a model that streams flat out must not freeze the gateway
            await asyncio.sleep(0)
        try:
            item = await stream.__anext__()
        except openai.APIError as exc:
            raise_mapped(exc, mid_stream=True)
        except (UpstreamTooLarge, httpx.TransportError) as exc:  # read errors the SDK's stream lets through
            raise UpstreamConnectionError(mid_stream=True) from exc
        return item.to_dict(warnings=False)

    async def aclose(self) -> None:
        if self._stream is not None:
            await self._stream.close()
        else:
            await self._raw.http_response.aclose()


class SdkTransport:
    """One upstream's requests through one ``openai.AsyncOpenAI`` client (which the caller owns)."""

    kind = "sdk"

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self.client = client
        self._resources: dict[str, Any] = {}

    async def prepare(self) -> None:
        """Nothing: the client was made with this transport."""

    async def _resource(self, path: str) -> Any:
        """``client.chat.completions`` or ``client.responses``, found the first time off the event loop: the
        SDK imports a resource's modules on first access (~15 ms for chat, ~35 ms for responses), which
        would stall every other stream of the first request's loop."""
        resource = self._resources.get(path)
        if resource is None:
            if path == CHAT_PATH:
                resource = await asyncio.to_thread(self._first_use, lambda: self.client.chat.completions)
            elif path == RESPONSES_PATH:
                resource = await asyncio.to_thread(self._first_use, lambda: self.client.responses)
            else:
                raise ValueError(f"no SDK method for {path!r}; expected {CHAT_PATH} or {RESPONSES_PATH}")
            self._resources[path] = resource
        return resource

    def _first_use(self, resource: Any) -> Any:
        """(In a worker thread.) The resource, with the SDK's other first-request work done beside it."""
        self.client.platform_headers()  # cached by the SDK after the first call (``platform.platform()`` & co.)
        return resource()

    async def _create(self, path: str, body: dict[str, Any]) -> Any:
        """``create``'s raw response for ``body``: ``model`` and ``stream`` by name, the rest as ``extra_body``."""
        resource = self._resources.get(path) or await self._resource(path)
        kwargs: dict[str, Any] = {**_PLACEHOLDERS[path], "model": body.get("model")}
        if "stream" in body:
            kwargs["stream"] = body["stream"]
        kwargs["extra_body"] = {key: value for key, value in body.items() if key not in ("model", "stream")}
        return await resource.with_raw_response.create(**kwargs)

    async def open_stream(self, path: str, body: dict[str, Any]) -> SdkChunks:
        try:
            raw = await self._create(path, body)
        except openai.APIError as exc:
            raise_mapped(exc)
        except (UpstreamTooLarge, httpx.TransportError) as exc:  # (an error's body read past its bound)
            raise UpstreamConnectionError(mid_stream=True) from exc
        return SdkChunks(raw)

    async def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            raw = await self._create(path, body)
            parsed = raw.parse()
        except openai.APIError as exc:
            raise_mapped(exc)
        except (UpstreamTooLarge, httpx.TransportError) as exc:
            raise UpstreamConnectionError(mid_stream=True) from exc
        if not isinstance(parsed, openai.BaseModel):
            raise MalformedResponse(f"the answer is not a JSON object ({type(parsed).__name__})")
        return parsed.to_dict(warnings=False)

    async def aclose(self) -> None:
        """Nothing of its own to close: the client is closed by its owner (:class:`.upstream.UpstreamPool`)."""
