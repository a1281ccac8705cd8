"""``model.transport: fast``: the request on :mod:`.http1` (:mod:`.stream_request`), the body read by :mod:`.sse`.

The agent's default for real endpoints: about a tenth of the SDK's CPU per
streamed chunk and a third less per request (bench/README.md). Imports no
part of the ``openai`` SDK (its headers: :mod:`.sdk_headers`); see :mod:`.transport` for the contract.
"""

from __future__ import annotations

import json
from typing import Any

from ..config import Timeouts
from .errors import MalformedResponse
from .sse import SSEPayloads
from .stream_request import StreamBody, StreamPoster


class FastTransport:
    """One upstream's requests on a connection pool of its own, with the SDK client's headers and settings."""

    kind = "fast"

    def __init__(self, api_key: str, base_url: str, max_retries: int, timeouts: Timeouts) -> None:
        self.poster = StreamPoster(api_key, base_url, max_retries, timeouts)

    async def prepare(self) -> None:
        await self.poster.prepare()

    async def open_stream(self, path: str, body: dict[str, Any]) -> SSEPayloads:
        return SSEPayloads(StreamBody(await self.poster.post(path, body, stream=True)))

    async def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        content = await self.poster.call(path, body)
        try:
            answer = json.loads(content)
        except ValueError as exc:  # UnicodeDecodeError included
            raise MalformedResponse(f"the answer is not JSON ({exc})") from None
        if not isinstance(answer, dict):
            raise MalformedResponse(f"the answer is JSON {type(answer).__name__}, not an object")
        return answer

    async def aclose(self) -> None:
        await self.poster.aclose()
