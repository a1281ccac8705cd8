"""How much of an upstream's answer the gateway will hold: every bound on the model's HTTP responses, in one place.

Why: an upstream is a stranger's server as far as the gateway can tell
(a proxy, a self-hosted model, a misconfigured URL). Before these bounds,
one that kept sending headers took the process to 5.8 GB and a SIGSEGV,
one SSE line that never ended cost 2.2 GB per request, a gzip bomb 1.8 GB
with the event loop blocked for seconds, and a model that never stopped
grew a reply without limit (issue 33). Both transports (:mod:`.transport`)
enforce the same figures, so an upstream gets the same answer whichever
one talks to it; docs/configuration.md's "Limits" table lists them for operators.

- The response head (status line and header fields, 1xx heads included):
  :data:`MAX_HEAD_BYTES` and :data:`MAX_HEAD_FIELDS` (the fast transport's
  :mod:`.http1`; the SDK's HTTP client stops heads at 16 KiB itself and the
  field count is checked on its responses, :func:`check_head`).
- Compression is never asked for (``Accept-Encoding: identity``) and a
  response that is compressed anyway is refused (:func:`check_head`):
  nothing is ever decompressed, so no bomb can go off.
- One SSE line and one SSE event: :data:`MAX_SSE_LINE`, :data:`MAX_SSE_EVENT`
  (:mod:`.sse` for ``fast``, :class:`SSEFrameBound` on the SDK's byte stream).
- A body that is not a stream (an answer to a non-streamed request, or an
  error's body): :data:`MAX_BODY_BYTES`.
- One answer's tool calls: :data:`MAX_TOOL_CALLS`, their arguments
  together :data:`MAX_TOOL_ARGUMENT_CHARS` (:mod:`.results`): past either,
  the answer fails as malformed.
- The reply's length in characters: ``model.max_reply_chars`` (config,
  default 200,000); the turn then ends cut, as an interrupt ends it (the
  upstream's connection closed, which stops the model), with
  ``finish_reason`` ``length`` and :data:`REPLY_CUT_NOTE` (:mod:`.core`).

A response past a bound is an :class:`UpstreamTooLarge`: a connection
error to the agent (the request is not read further and the connection is
closed), so the turn ends with its reply so far or a short failure notice.
"""

from __future__ import annotations

from typing import Mapping

from ..errors import HermesError
from .errors import UpstreamConnectionError

#: The response head: status line and header fields together, in bytes.
MAX_HEAD_BYTES = 64 * 1024
#: Header fields in one response head (aiohttp's and h11's parsers take about as many lines in their defaults).
MAX_HEAD_FIELDS = 100
#: One line of an SSE body, in bytes (a ``data:`` line holds one chunk of JSON: a few hundred bytes in practice).
MAX_SSE_LINE = 1 << 20
#: One SSE event (every line from the last blank line), in bytes.
MAX_SSE_EVENT = 1 << 20
#: A body that is not an event stream: a non-streamed answer, or the body of an error status.
MAX_BODY_BYTES = 16 << 20
#: Tool calls in one answer of the model.
MAX_TOOL_CALLS = 128
#: The arguments of one answer's tool calls together, in characters (a tool call's tokens that never stop).
MAX_TOOL_ARGUMENT_CHARS = 1 << 20
#: The line a chat's reply ends with when it was cut at ``model.max_reply_chars``.
REPLY_CUT_NOTE = "✂️ (cut: the reply reached its length limit)"


class UpstreamTooLarge(HermesError):
    """A response past one of this module's bounds (its message says which)."""


def check_head(headers: Mapping[str, str], fields: int) -> None:
    """Refuse a response head with more than :data:`MAX_HEAD_FIELDS` fields or a compressed body."""
    if fields > MAX_HEAD_FIELDS:
        raise UpstreamTooLarge(f"the upstream sent more than {MAX_HEAD_FIELDS} header fields")
    coding = headers.get("content-encoding", "").strip().lower()
    if coding not in ("", "identity"):
        raise UpstreamTooLarge(f"the upstream sent a compressed body ({coding}); it was asked for none")


class SSEFrameBound:
    """Counts an event stream's bytes as they pass and refuses a line or an event past its bound.

    For the SDK transport, whose SSE decoder (the SDK's own) holds whatever
    a line or event grows to. It looks only at line ends, not at what lines
    say: an event is everything since the last blank line (comments included).
    ``\\r``, ``\\n`` and ``\\r\\n`` end lines, as in the SSE spec.
    """

    __slots__ = ("line", "event", "_last")

    def __init__(self) -> None:
        self.line = 0    # bytes of the line not yet ended
        self.event = 0   # bytes since the last blank line
        self._last = b""  # the previous chunk's last two bytes (a blank line may straddle two reads)

    def feed(self, chunk: bytes) -> None:
        end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if end < 0:
            self.line += len(chunk)
            self.event += len(chunk)
        else:
            self.line = len(chunk) - end - 1
            joined = self._last + chunk
            blank = max(joined.rfind(b"\n\n"), joined.rfind(b"\r\r"), joined.rfind(b"\n\r\n"))
            self.event = len(joined) - blank - 2 if blank >= 0 else self.event + len(chunk)
        self._last = chunk[-2:]
        if self.line > MAX_SSE_LINE:
            raise too_large(f"an SSE line longer than {MAX_SSE_LINE} bytes")
        if self.event > MAX_SSE_EVENT:
            raise too_large(f"an SSE event longer than {MAX_SSE_EVENT} bytes")


def too_large(what: str, *, mid_stream: bool = True) -> UpstreamConnectionError:
    """The error for a response past a bound: to the agent, a connection that failed (it was closed)."""
    error = UpstreamConnectionError(mid_stream=mid_stream)
    error.__cause__ = UpstreamTooLarge(f"the upstream sent {what}")
    return error
