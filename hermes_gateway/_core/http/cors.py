"""CORS for browsers that call ``/v1`` directly (Open WebUI's direct connections, web playgrounds).

Off unless ``api_server.cors_origins`` lists origins (or ``"*"``). Preflight
``OPTIONS`` requests are answered without a key — browsers never send one
on a preflight — and every ``/v1`` response to an allowed origin carries
``Access-Control-Allow-Origin``. Keys are still required on the real request.
"""

from __future__ import annotations

from aiohttp import web

ALLOWED_METHODS = "GET, POST, DELETE, OPTIONS"
ALLOWED_HEADERS = "Authorization, Content-Type, OpenAI-Organization, OpenAI-Project, X-Stainless-Arch, " \
                  "X-Stainless-Lang, X-Stainless-OS, X-Stainless-Package-Version, X-Stainless-Runtime, " \
                  "X-Stainless-Runtime-Version, X-Stainless-Retry-Count, X-Stainless-Timeout"


class Cors:
    def __init__(self, origins: tuple[str, ...]) -> None:
        self.any = "*" in origins
        self.origins = frozenset(origins)

    @property
    def enabled(self) -> bool:
        return bool(self.origins)

    def allowed(self, request: web.Request) -> str | None:
        """The value for ``Access-Control-Allow-Origin``, or None when this origin is not allowed."""
        origin = request.headers.get("Origin")
        if not origin or not self.origins:
            return None
        if self.any:
            return "*"
        return origin if origin in self.origins else None

    def preflight(self, request: web.Request) -> web.Response:
        origin = self.allowed(request)
        if origin is None:
            return web.Response(status=403, text="origin not allowed (api_server.cors_origins)")
        return web.Response(status=204, headers={
            "Access-Control-Allow-Origin": origin, "Access-Control-Allow-Methods": ALLOWED_METHODS,
            "Access-Control-Allow-Headers": request.headers.get("Access-Control-Request-Headers") or ALLOWED_HEADERS,
            "Access-Control-Max-Age": "600", "Vary": "Origin"})

    def decorate(self, request: web.Request, response: web.StreamResponse) -> None:
        """Add the CORS headers to a response before it is sent (SSE included)."""
        origin = self.allowed(request)
        if origin is not None:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"
