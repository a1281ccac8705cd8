"""``model.transport: sdk``: every request through the ``openai`` SDK's public API, nothing of ours on the wire.

``client.chat.completions`` / ``client.responses``
``.with_raw_response.create(**body)``: the SDK builds and sends the
request, retries it, decodes the SSE body into its pydantic models (turned
back into plain JSON with their public ``to_dict()``), and raises its own
exceptions, which are translated here into :mod:`.errors`' so the agent
handles both transports alike. ``with_raw_response`` rather than a plain
``create`` only to see the answer's ``Content-Type`` (an upstream that
answers a stream request with JSON does not stream).

The price is the SDK's CPU: its per-element transform of the body
(~140 us a message) and a pydantic model per chunk (~95 us); the fast
transport avoids both. This one is the fallback that keeps working across
SDK upgrades, and the reference the fast one is tested against.
"""

from __future__ import annotations

import inspect
from typing import Any, NoReturn

import openai

from .errors import MalformedResponse, ReportedError, UpstreamConnectionError, UpstreamStatusError, UpstreamTimedOut
from .transport import CHAT_PATH, RESPONSES_PATH

#: ``create()``'s keyword parameters per resource class: body keys it does not name go in ``extra_body``.
_PARAMETERS: dict[type, frozenset[str]] = {}


def _parameters(resource: Any) -> frozenset[str]:
    kind = type(resource)
    names = _PARAMETERS.get(kind)
    if names is None:
        names = _PARAMETERS[kind] = frozenset(
            name for name, p in inspect.signature(resource.create).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and not name.startswith("extra_") and name != "timeout")
    return names


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


class SdkChunks:
    """A streamed answer read by the SDK's own ``AsyncStream``: each model back to plain JSON."""

    __slots__ = ("_raw", "_stream", "content_type")

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._stream: Any = None
        self.content_type: str = raw.headers.get("content-type", "")

    async def next(self) -> Any:
        stream = self._stream
        if stream is None:
            stream = self._stream = self._raw.parse()
        try:
            item = await stream.__anext__()
        except openai.APIError as exc:
            raise_mapped(exc, mid_stream=True)
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
        self._resources: dict[str, Any] = {CHAT_PATH: client.chat.completions, RESPONSES_PATH: client.responses}

    def _create(self, path: str, body: dict[str, Any]) -> Any:
        """The coroutine of ``create`` for ``body``: keys ``create`` names as keywords, the rest as ``extra_body``."""
        resource = self._resources.get(path)
        if resource is None:
            raise ValueError(f"no SDK method for {path!r}; expected {CHAT_PATH} or {RESPONSES_PATH}")
        names = _parameters(resource)
        known = {key: value for key, value in body.items() if key in names}
        if len(known) < len(body):
            known["extra_body"] = {key: value for key, value in body.items() if key not in names}
        return resource.with_raw_response.create(**known)

    async def open_stream(self, path: str, body: dict[str, Any]) -> SdkChunks:
        try:
            raw = await self._create(path, body)
        except openai.APIError as exc:
            raise_mapped(exc)
        return SdkChunks(raw)

    async def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            raw = await self._create(path, body)
            parsed = raw.parse()
        except openai.APIError as exc:
            raise_mapped(exc)
        if not isinstance(parsed, openai.BaseModel):
            raise MalformedResponse(f"the answer is not a JSON object ({type(parsed).__name__})")
        return parsed.to_dict(warnings=False)

    async def aclose(self) -> None:
        """Nothing of its own to close: the client is closed by its owner (:class:`.upstream.UpstreamPool`)."""
