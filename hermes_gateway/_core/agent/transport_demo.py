"""The demo model (no ``base_url``) under ``model.transport: fast``: its endpoint called in-process.

The demo model's bytes are read exactly as a real upstream's on the fast
transport: the same SSE frames through :class:`~.sse.SSEPayloads`, the same
JSON answers, the same :class:`~.errors.UpstreamStatusError` for a non-2xx
answer. What it skips is the ``openai`` SDK: a demo gateway (every test that
starts ``hermes-gateway run`` or ``chat`` with the demo model, and a
newcomer's first command) never imports it, ~0.8 s of CPU and ~16 MB resident
a process (issue 39). ``model.transport: sdk`` still serves the demo model
through the SDK (:mod:`.transport_sdk` on :mod:`hermes_gateway._core.demo.transport`).
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Mapping

from ..demo.endpoint import DemoEndpoint
from .errors import MalformedResponse, UpstreamStatusError
from .sse import SSEPayloads


class _DemoBody:
    """A streamed demo answer in the shape :class:`~.sse.SSEPayloads` reads (``headers``, ``aiter_raw()``,
    ``aclose()``, ``is_closed``, ``http_version``). Closing it closes the frame generator, which stops the
    demo model mid-reply as a closed connection stops a real one. No HTTP/1.1 connection to keep, so nothing
    is drained after ``[DONE]``."""

    __slots__ = ("headers", "_frames", "is_closed")

    http_version = "in-process"

    def __init__(self, headers: Mapping[str, str], frames: AsyncIterator[bytes]) -> None:
        self.headers = {name.lower(): value for name, value in headers.items()}
        self._frames = frames
        self.is_closed = False

    def aiter_raw(self) -> AsyncIterator[bytes]:
        return self._frames

    aiter_bytes = aiter_raw  # never encoded

    async def aclose(self) -> None:
        self.is_closed = True
        close = getattr(self._frames, "aclose", None)
        if close is not None:
            await close()


class DemoDirectTransport:
    """:class:`~.transport.UpstreamTransport` for the demo model, with no HTTP and no SDK in between."""

    kind = "fast"

    def __init__(self, tokens_per_second: float = 30.0) -> None:
        self.endpoint = DemoEndpoint(tokens_per_second)

    async def prepare(self) -> None:
        """Nothing to get ready."""

    async def _answer(self, path: str, body: dict[str, Any]) -> Any:
        encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        result = await self.endpoint.handle("POST", "/v1" + path, encoded)
        if result.status // 100 != 2:
            content = result.body if isinstance(result.body, bytes) else None
            raise UpstreamStatusError.from_response(result.status, result.headers, content)
        return result

    async def open_stream(self, path: str, body: dict[str, Any]) -> SSEPayloads:
        result = await self._answer(path, body)
        if isinstance(result.body, bytes):  # (the demo streams whenever it is asked to)
            raise MalformedResponse("the demo model did not stream")
        return SSEPayloads(_DemoBody(result.headers, result.body))

    async def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        result = await self._answer(path, body)
        if not isinstance(result.body, bytes):
            raise MalformedResponse("the demo model streamed an answer that was not asked to stream")
        answer = json.loads(result.body)
        if not isinstance(answer, dict):
            raise MalformedResponse(f"the answer is JSON {type(answer).__name__}, not an object")
        return answer

    async def aclose(self) -> None:
        """Nothing to close."""
