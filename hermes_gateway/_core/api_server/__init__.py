"""The OpenAI-compatible HTTP API: ``/v1/chat/completions``, ``/v1/responses``, models, health, metrics.

A built-in plugin (:mod:`.plugin`) mounts :class:`~.routes.ApiServer` on the
gateway's aiohttp app. Modules, one job each: :mod:`.validation` (request
bodies -> 4xx), :mod:`.auth` (bearer keys), :mod:`.sse` (framing and
keep-alive), :mod:`.reply_text` (think blocks, whitespace, stream resets),
:mod:`.chat_stream` and :mod:`.responses_stream` (the two wire formats),
:mod:`.store` (``previous_response_id``), :mod:`.metrics` (Prometheus text),
:mod:`.access_log` (one line per request with ``-v``). The listener they
are served on, its Host/Origin guards, CORS and OpenAI's error shape are the
gateway's, shared with webhooks: :mod:`hermes_gateway._core.http`.
"""

from .routes import ApiServer

__all__ = ["ApiServer"]
