"""Why an upstream call failed, and whether to try the next endpoint or a non-streaming call.

Messages are one line and never contain the API key (the SDK never puts it
in error text; we add only the endpoint's URL and model name).

The transports (:mod:`.transport`) raise only the exceptions defined here,
whichever of them made the request, so the rest of the agent never sees an
``openai`` exception: :class:`UpstreamStatusError` (a non-2xx answer, after
the retries), :class:`UpstreamConnectionError` / :class:`UpstreamTimedOut`
(no answer, or the connection lost mid-body) and :class:`ReportedError` (an
``{"error": ...}`` payload inside the stream).
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from ..errors import HermesError
from ..events import UpstreamRefusal
from .guard import UpstreamTimeout


class UpstreamStatusError(HermesError):
    """The upstream answered with a non-2xx status (after any retries).

    ``message`` is ``Error code: <status>`` plus `` - <message>`` when the body
    is JSON with an error message (the SDK's wording); ``body`` is the
    decoded JSON's ``error`` member (or the whole JSON, or the text when it is
    not JSON, or None when it could not be read).
    """

    def __init__(self, status_code: int, message: str, body: object = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.body = body
        self.headers: Mapping[str, str] = headers or {}

    @classmethod
    def from_response(cls, status_code: int, headers: Mapping[str, str],
                      content: bytes | None) -> "UpstreamStatusError":
        """The error for an answer with ``status_code``, ``headers`` and body ``content`` (None: unreadable)."""
        message = f"Error code: {status_code}"
        body: Any = None
        if content is not None:
            text = content.decode("utf-8", errors="replace").strip()
            body = text
            try:
                body = json.loads(text)
            except ValueError:
                pass
            else:
                error = body.get("error", body) if isinstance(body, dict) else None
                detail = error.get("message") if isinstance(error, dict) else None
                if isinstance(detail, str) and detail:
                    message += f" - {detail}"
                if isinstance(body, dict):
                    body = body.get("error", body)
        return cls(status_code, message, body, headers)


class UpstreamConnectionError(HermesError):
    """No answer (refused, reset, DNS), or the connection lost while reading the body (``mid_stream``)."""

    def __init__(self, message: str = "Connection error.", *, mid_stream: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.mid_stream = mid_stream


class UpstreamTimedOut(UpstreamConnectionError):
    """Connecting (or an HTTP-level read) timed out."""

    def __init__(self, message: str = "Request timed out.", *, mid_stream: bool = False) -> None:
        super().__init__(message, mid_stream=mid_stream)


class ReportedError(HermesError):
    """A ``data: {"error": {...}}`` payload in the stream: the upstream's own message and error body."""

    def __init__(self, message: str, body: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.body = body


class IncompleteStream(HermesError):
    """The stream ended (connection closed, no ``[DONE]``) before the model finished."""


class NotStreaming(HermesError):
    """We asked for a stream and got something else: this upstream does not stream."""


class MalformedChunk(HermesError):
    """A streamed chunk that is valid JSON but not shaped like a chunk (say, ``choices`` not a list)."""


class MalformedResponse(HermesError):
    """A non-streamed 2xx answer that is not a JSON object."""


class UpstreamError(HermesError):
    """An error the upstream reported inside the stream (``data: {"error": ...}``, ``response.failed``)."""


class AllUpstreamsFailed(HermesError):
    """Every endpoint (primary and fallbacks) failed; ``str()`` is one line listing why.

    ``refusals``: the upstreams' own refusals among the failures (:func:`refusal_of`); :attr:`refusal` is
    the one an API client is told about."""

    def __init__(self, failures: list[str], refusals: Sequence[UpstreamRefusal] = ()) -> None:
        self.failures = failures
        self.refusals = tuple(refusals)
        super().__init__("the model is unavailable: " + "; ".join(failures))

    @property
    def refusal(self) -> UpstreamRefusal | None:
        """What to tell an API client: a refusal of its request first (it can fix that), then the operator's
        problem (a key or model the upstream refuses), then a rate limit; None when the failures were outages
        (5xx, the network), which a client's retry is for."""
        for wanted in (lambda status: status in CLIENT_FAULTS, lambda status: status != 429,
                       lambda status: status == 429):
            for refusal in reversed(self.refusals):
                if wanted(refusal.status):
                    return refusal
        return None


#: Upstream statuses that mean "this request is wrong" (a bad parameter, a context too long, too large):
#: the client's to fix, so it is told them as they are.
CLIENT_FAULTS = frozenset({400, 413, 422})
#: 4xx statuses that are not a refusal of this request but a passing state (a timeout, a conflict): retried.
_TRANSIENT = frozenset({408, 409})


def refuses_the_request(exc: BaseException) -> bool:
    """A refusal of the request itself (400, 413, 422), not of streaming (:func:`streaming_unsupported`): the
    same request is not sent again to this endpoint (no non-streamed replay); a fallback endpoint (another
    model) may still take it."""
    return isinstance(exc, UpstreamStatusError) and exc.status_code in CLIENT_FAULTS \
        and not streaming_unsupported(exc)


def refusal_of(exc: BaseException, secrets: Sequence[str] = ()) -> UpstreamRefusal | None:
    """The upstream's 4xx answer as an :class:`UpstreamRefusal` (None for anything else: 5xx, the network);
    ``secrets`` (the endpoint's key and URL) are masked in its message."""
    if not isinstance(exc, UpstreamStatusError) or not 400 <= exc.status_code < 500 \
            or exc.status_code in _TRANSIENT:
        return None
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    fields = error if isinstance(error, dict) else {}
    message = fields.get("message") if isinstance(fields.get("message"), str) else None
    message = _one_line(message or _status_message(exc) or f"HTTP {exc.status_code}", 2000)
    for secret in secrets:
        message = redact(message, secret)

    def text(name: str) -> str | None:
        value = fields.get(name)
        return _one_line(value, 200) if isinstance(value, str) and value else None
    headers = exc.headers
    return UpstreamRefusal(exc.status_code, message, param=text("param"), code=text("code"), type=text("type"),
                           retry_after=_wait(headers.get("retry-after")), retry_after_ms=_wait(headers.get("retry-after-ms")))


def _wait(value: str | None) -> str | None:
    """A ``Retry-After`` value worth passing on: short and printable (seconds, or an HTTP date)."""
    if value is None or len(value) > 40 or not value.isprintable():
        return None
    return value.strip() or None


#: HTTP statuses after which this endpoint is considered down (the SDK already retried 429/5xx).
_ENDPOINT_DOWN_STATUSES = {401, 403, 404, 408, 409, 429}


def endpoint_is_down(exc: BaseException) -> bool:
    """True when retrying the same endpoint without streaming is pointless; go to the next one."""
    if isinstance(exc, UpstreamStatusError):
        return exc.status_code in _ENDPOINT_DOWN_STATUSES or exc.status_code >= 500
    # Connection refused or a connect timeout (reads have no HTTP timeout; the guard handles them).
    return isinstance(exc, UpstreamConnectionError) and not exc.mid_stream


def streaming_unsupported(exc: BaseException) -> bool:
    """A failure that says "this upstream does not stream" rather than "this request was bad".

    It is remembered for every turn of the process (``STREAM_SUPPORT``), so
    only evidence about the upstream counts: a non-stream answer to a stream
    request, 405/415/501, or a 400/422 whose message is about streaming. A
    plain 400 is usually about the request (one client's odd message), and
    must not turn streaming off for every other user (issue 13); that turn
    still falls back to a non-streaming call.
    """
    if isinstance(exc, NotStreaming):
        return True
    if not isinstance(exc, UpstreamStatusError):
        return False
    if exc.status_code in (405, 415, 501):
        return True
    return exc.status_code in (400, 422) and "stream" in str(exc.body or exc.message).lower()


def rejects_usage_option(exc: BaseException) -> bool:
    """The upstream refused ``stream_options`` (older servers and proxies): stream without it."""
    return isinstance(exc, UpstreamStatusError) and exc.status_code in (400, 422) \
        and "stream_options" in str(exc.body or exc.message)


def describe(exc: BaseException) -> str:
    """A short, secret-free, one-line reason."""
    if isinstance(exc, UpstreamStatusError):
        message = _status_message(exc)
        return f"HTTP {exc.status_code}" + (f": {message}" if message else "")
    if isinstance(exc, UpstreamTimedOut):
        return "timed out connecting or reading"
    if isinstance(exc, UpstreamConnectionError):
        cause = exc.__cause__
        detail = f" ({type(cause).__name__}: {cause})" if cause and str(cause) else ""
        where = "connection lost mid-stream" if exc.mid_stream else "cannot connect"
        return _one_line(where + detail)
    if isinstance(exc, UpstreamTimeout):
        return f"no {exc.args[0]}" if exc.args else "timed out"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed JSON in the stream ({exc.msg})"
    if isinstance(exc, ReportedError):
        return _one_line(f"upstream error: {exc.message}")
    return _one_line(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


def redact(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` (an API key an upstream echoed back) masked."""
    if secret and len(secret) >= 4 and secret in text:
        return text.replace(secret, "***")
    return text


def _status_message(exc: UpstreamStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _one_line(error["message"])
    return ""


def _one_line(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
