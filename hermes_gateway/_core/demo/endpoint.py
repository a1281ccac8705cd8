"""The demo model as an HTTP endpoint, independent of any HTTP library.

``DemoEndpoint.handle`` maps (method, path, body) to a status, headers and
a body that is either bytes or an async iterator of SSE frames. The aiohttp
server (``hermes-gateway demo-llm``) and the in-process transport used in
demo mode both wrap this one function, so demo mode exercises exactly the
code path a real upstream does.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Iterator, Mapping

from .model import MODEL_NAME, DemoOptions, plan_reply, responses_input_to_messages
from .wire import chat_chunks, chat_completion, response_object, responses_events, sse

SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
JSON_HEADERS = {"Content-Type": "application/json"}


@dataclass
class DemoResponse:
    status: int
    headers: dict[str, str]
    body: bytes | AsyncIterator[bytes] = b""
    streaming: bool = field(init=False)

    def __post_init__(self) -> None:
        self.streaming = not isinstance(self.body, bytes)


def error_response(status: int, message: str, kind: str = "invalid_request_error",
                   param: str | None = None) -> DemoResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": None}}
    return DemoResponse(status, dict(JSON_HEADERS), json.dumps(body).encode())


class DemoEndpoint:
    """OpenAI-compatible ``/v1/chat/completions``, ``/v1/responses`` and ``/v1/models`` for the demo model.

    ``tokens_per_second`` paces the chunks that carry a token (0 = as fast
    as possible), so a person watching sees the reply being typed.
    """

    def __init__(self, tokens_per_second: float = 30.0) -> None:
        if tokens_per_second < 0:
            raise ValueError("tokens_per_second must be >= 0")
        self.delay = 1.0 / tokens_per_second if tokens_per_second else 0.0
        self._ids = itertools.count(1)

    async def handle(self, method: str, path: str, body: bytes) -> DemoResponse:
        route = path.rstrip("/")
        if route.endswith("/models") and method == "GET":
            data = {"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "created": 0,
                                                "owned_by": "hermes-gateway"}]}
            return DemoResponse(200, dict(JSON_HEADERS), json.dumps(data).encode())
        if route.endswith("/chat/completions") or route.endswith("/responses"):
            if method != "POST":
                return error_response(405, f"{method} is not allowed here; use POST")
            try:
                request = json.loads(body or b"null")
            except ValueError:
                return error_response(400, "the request body is not valid JSON")
            if not isinstance(request, dict):
                return error_response(400, "the request body must be a JSON object")
            if route.endswith("/chat/completions"):
                return self._chat(request)
            return self._responses(request)
        return error_response(404, f"no route {path}; the demo model serves /v1/chat/completions, "
                                   f"/v1/responses and /v1/models", kind="not_found_error")

    def _chat(self, request: Mapping[str, Any]) -> DemoResponse:
        messages = request.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            return error_response(400, "messages must be a list of message objects", param="messages")
        model = str(request.get("model") or MODEL_NAME)
        reply = plan_reply(messages, DemoOptions.from_chat(request))
        completion_id = f"chatcmpl-demo-{next(self._ids)}"
        if not request.get("stream"):
            return DemoResponse(200, dict(JSON_HEADERS),
                                json.dumps(chat_completion(reply, model, completion_id)).encode())
        options = request.get("stream_options") or {}
        include_usage = bool(options.get("include_usage")) if isinstance(options, dict) else False
        frames = ((sse(chunk), paced) for chunk, paced in chat_chunks(reply, model, completion_id, include_usage))
        return DemoResponse(200, dict(SSE_HEADERS), self._paced(frames, sse("[DONE]")))

    def _responses(self, request: Mapping[str, Any]) -> DemoResponse:
        input_value = request.get("input")
        if not isinstance(input_value, (str, list)):
            return error_response(400, "input must be a string or a list of items", param="input")
        messages = responses_input_to_messages(input_value, request.get("instructions"))
        model = str(request.get("model") or MODEL_NAME)
        reply = plan_reply(messages, DemoOptions.from_responses(request))
        response_id = f"resp_demo_{next(self._ids)}"
        if not request.get("stream"):
            return DemoResponse(200, dict(JSON_HEADERS),
                                json.dumps(response_object(reply, model, response_id)).encode())
        frames = ((sse(event, event=event["type"]), paced)
                  for event, paced in responses_events(reply, model, response_id))
        return DemoResponse(200, dict(SSE_HEADERS), self._paced(frames, None))

    async def _paced(self, frames: Iterator[tuple[bytes, bool]], last: bytes | None) -> AsyncIterator[bytes]:
        delay = self.delay
        for frame, paced in frames:
            if paced and delay:
                await asyncio.sleep(delay)
            yield frame
        if last is not None:
            yield last


