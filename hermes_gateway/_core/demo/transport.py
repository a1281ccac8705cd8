"""The demo model as an in-process HTTP transport for the ``openai`` SDK.

Demo mode hands ``AsyncOpenAI`` an HTTP client whose transport answers from
:class:`DemoEndpoint` directly: no port, no socket, but the very same SDK
code path (request building, SSE parsing, typed chunks) as a real upstream.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

try:  # the openai SDK >= 3 ships on httpx2; older releases on httpx
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

from .endpoint import DemoEndpoint

DEMO_BASE_URL = "http://demo.invalid/v1"


class _FrameStream(httpx.AsyncByteStream):
    """Streams the endpoint's frames; closing it stops the demo model mid-reply."""

    def __init__(self, frames: AsyncIterator[bytes]) -> None:
        self._frames = frames

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for frame in self._frames:
            yield frame

    async def aclose(self) -> None:
        close = getattr(self._frames, "aclose", None)
        if close is not None:
            await close()


class DemoTransport(httpx.AsyncBaseTransport):
    """An ``httpx`` async transport that serves :class:`DemoEndpoint` in-process."""

    def __init__(self, tokens_per_second: float = 30.0) -> None:
        self.endpoint = DemoEndpoint(tokens_per_second)

    async def handle_async_request(self, request: Any) -> Any:
        body = await request.aread()
        result = await self.endpoint.handle(request.method, request.url.path, body)
        if result.streaming:
            return httpx.Response(result.status, headers=result.headers,
                                  stream=_FrameStream(result.body), request=request)  # type: ignore[arg-type]
        return httpx.Response(result.status, headers=result.headers, content=result.body, request=request)


def demo_http_client(tokens_per_second: float = 30.0) -> Any:
    """An ``httpx.AsyncClient`` that talks to the demo model in-process."""
    return httpx.AsyncClient(transport=DemoTransport(tokens_per_second), base_url=DEMO_BASE_URL)
