"""OpenAI-shaped errors: every refusal a client sees is ``{"error": {message, type, param, code}}``.

Clients (the official SDKs, Open WebUI) parse exactly this shape to show the
reason, so the server never answers with aiohttp's HTML error pages or a
traceback: handlers raise :class:`ApiError` and one place renders it.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ..errors import HermesError

INVALID_REQUEST = "invalid_request_error"
AUTHENTICATION = "authentication_error"
NOT_FOUND = "not_found_error"
SERVER_ERROR = "server_error"


class ApiError(HermesError):
    """A refusal with an HTTP status and the four fields OpenAI clients read."""

    def __init__(self, status: int, message: str, *, type: str = INVALID_REQUEST, param: str | None = None,
                 code: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return error_body(self.message, type=self.type, param=self.param, code=self.code)

    def response(self) -> web.Response:
        return web.Response(status=self.status, text=json.dumps(self.body()),
                            content_type="application/json", headers=self.headers)


def error_body(message: str, *, type: str = SERVER_ERROR, param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    """The JSON body OpenAI uses for errors, both as a 4xx body and as a mid-stream SSE event."""
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


#: How much of a client's own value (an id, a model name, a path) an error message repeats.
ECHO_LIMIT = 64


def echo(value: str, limit: int = ECHO_LIMIT) -> str:
    """A short prefix of what the client sent, for an error message: a 900 KB id must not come back whole."""
    return value if len(value) <= limit else value[:limit] + f"... ({len(value):,} characters)"


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, param=param, code=code)
