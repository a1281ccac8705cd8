"""The seam between the agent and an upstream's HTTP: one small interface, two implementations.

The agent builds a request body (plain JSON) and reads plain JSON back; how
the body travels is a transport's business (``model.transport``):

- ``fast`` (:mod:`.transport_fast`, the default): the request on a lean
  HTTP/1.1 connection pool of its own (:mod:`.http1`) and the SSE body read by :class:`~.sse.SSEPayloads`,
  with retries and errors from :mod:`.retry_policy` and :mod:`.errors`. No
  private name of the ``openai`` SDK is used; the SDK client only supplies
  its public headers (auth, ``User-Agent``, ``X-Stainless-*``).
- ``sdk`` (:mod:`.transport_sdk`): only the SDK's public API
  (``chat.completions`` / ``responses`` ``.with_raw_response.create``), its
  own HTTP client, retries and SSE decoder. Slower (a pydantic model per
  chunk), but it keeps working whatever the SDK changes inside.

Both raise only :mod:`.errors`' exceptions and yield the same payloads for
the same bytes (``tests/agent/test_agent_transport_parity.py`` runs both on
the same recorded streams and compares every event the agent yields).
Upstreams the fast path does not suit (proxy variables, credentials in the
URL: :func:`.upstream.fast_transport_suits`) always use ``sdk``. The demo
model under ``fast`` is called in-process (:mod:`.transport_demo`), its SSE
read by the same :class:`~.sse.SSEPayloads`.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..config import TRANSPORTS

__all__ = ["CHAT_PATH", "RESPONSES_PATH", "TRANSPORTS", "ChunkStream", "UpstreamTransport"]
#: The two API paths (relative to the endpoint's ``base_url``) the agent calls.
CHAT_PATH = "/chat/completions"
RESPONSES_PATH = "/responses"


class ChunkStream(Protocol):
    """One streamed answer, once its headers are in: its JSON payloads one ``await next()`` at a time."""

    @property
    def content_type(self) -> str:
        """The answer's ``Content-Type`` ("" when absent); anything but an event stream means "not streaming"."""
        ...

    async def next(self) -> Any:
        """The next payload (a dict for well-formed upstreams); ``StopAsyncIteration`` after ``[DONE]`` or the
        end of the body. Raises :class:`~.errors.ReportedError` for an ``{"error": ...}`` payload,
        :class:`~.errors.UpstreamConnectionError` when the connection fails, ``json.JSONDecodeError`` for a
        payload that is not JSON."""
        ...

    async def aclose(self) -> None:
        """Release the answer; before its end this closes the connection, which stops the model."""
        ...


class UpstreamTransport(Protocol):
    """Sends one request body to one upstream endpoint, with retries; raises only :mod:`.errors`' exceptions."""

    #: Which implementation this is (one of :data:`TRANSPORTS`).
    kind: str

    async def prepare(self) -> None:
        """Get ready to send (once; before the first request's deadlines start): nothing, or the SDK client."""
        ...

    async def open_stream(self, path: str, body: dict[str, Any]) -> ChunkStream:
        """POST ``body`` (which has ``"stream": true``) to ``path``; the stream once a 2xx answer's headers are
        in. A non-2xx answer (after retries) is :class:`~.errors.UpstreamStatusError`."""
        ...

    async def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` (not streamed) to ``path``; the answer's JSON, after retries."""
        ...

    async def aclose(self) -> None:
        """Close the connections."""
        ...
