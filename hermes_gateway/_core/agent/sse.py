"""Reading an upstream's SSE body into plain JSON payloads, the way the openai SDK would.

Why not the SDK's own ``AsyncStream``: it builds a pydantic model of every
chunk (``construct_type``), about 95 us of CPU per streamed delta — most of
what the gateway spends per delta. The agent only needs a few fields of
each chunk, so the fast transport (:mod:`.transport_fast`) makes the
request and reads the body here with ``json.loads``; ``model.transport:
sdk`` keeps the SDK's own stream (:mod:`.transport_sdk`).

Behaviour follows ``openai/_streaming.py`` (``AsyncStream`` with its
``SSEDecoder``) line for line where it matters:

- lines end with LF, CR or CRLF, also when a CRLF is split across reads;
  lines starting with ``:`` are comments; ``data:`` lines of one event are
  joined with LF; an event is dispatched at a blank line when it has any
  field (``event``, ``data``, ``id`` — which per the spec is never reset —
  or a valid ``retry``); a final line without its newline is still read;
- a payload starting with ``[DONE]`` ends the stream (and on HTTP/1.1 the
  rest of the body is drained for at most 0.1 s so the connection can be
  reused); every other payload must be JSON (else ``json.JSONDecodeError``);
- a JSON object with a truthy ``error`` raises :class:`~.errors.ReportedError`
  with the message and body the SDK's ``APIError`` would carry;
- HTTP timeouts and transport errors while reading become
  :class:`~.errors.UpstreamTimedOut` / :class:`~.errors.UpstreamConnectionError`
  (the transport's own read errors pass through as they are);
- bad UTF-8 on any line raises ``UnicodeDecodeError`` at that line;
- unlike the SDK, a line or an event past :mod:`.limits`' bounds
  (``MAX_SSE_LINE``, ``MAX_SSE_EVENT``, 1 MiB each) is not held: the stream
  fails there as a connection lost mid-stream (the SDK transport enforces
  the same bounds on its byte stream, :class:`~.limits.SSEFrameBound`).

Payloads decoded before an error in the same network read are handed out
first, as the SDK does. ``tests/agent/test_agent_sse.py`` checks all of it
against the SDK's own decoder on random bodies cut at random places. The
SDK's special case for Assistants ``thread.*`` events does not apply to the
Chat Completions and Responses streams read here.

Three shortcuts keep it cheap (about 3.5 us per delta from memory, against
about 75 us for the SDK's stream): a read holding exactly one whole
``data:`` event (what upstreams send) skips line splitting; a body
without ``Content-Encoding`` is read with ``aiter_raw`` (one generator
layer less than ``aiter_bytes``; encoded bodies still go through it); and a
content chunk that differs from the stream's first plain content chunk only
in its text is not decoded again (:class:`_ContentTemplate`: JSON decoding
was an eighth of the gateway's CPU per relayed chunk).
"""

from __future__ import annotations

import asyncio
import json
import json.scanner
import re
import sys
from collections import deque
from typing import Any

from .errors import ReportedError, UpstreamConnectionError, UpstreamTimedOut
from .limits import MAX_SSE_EVENT, MAX_SSE_LINE, too_large

# typeshed types the context as a make_scanner; CPython takes any object with the decoder's attributes (its TODO)
_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def _loaded_httpx() -> Any:
    """The SDK's httpx module if it is loaded, else None: a body read through httpx (the sdk transport) has
    loaded it, and no other body raises its errors; not importing it here keeps the SDK out of a process
    whose model is not called yet (issue 39)."""
    module = sys.modules.get("hermes_gateway._core.demo.transport")
    return getattr(module, "httpx", None)


def _loads(data: str) -> Any:
    """``json.loads(data)``, a quarter cheaper for what upstreams send (one object, no surrounding space).

    The scanner alone decodes a document that starts at its first character and ends at its last;
    anything else (whitespace around it, trailing data, an error) goes to ``json.loads`` itself, so
    results and errors are exactly ``json.loads``'s.
    """
    try:
        payload, end = _scan(data, 0)
    except (StopIteration, ValueError):
        return json.loads(data)
    if end != len(data):
        return json.loads(data)
    return payload


#: A character that cannot stand for itself inside a JSON string (a quote, an escape, a control character).
_NOT_LITERAL = re.compile(r'[\x00-\x1f"\\]')
#: The ``content`` key and the quote that opens its string, with JSON's optional spaces (``json.dumps``'s default).
_CONTENT_KEY = re.compile(r'"content"[ \t\n\r]*:[ \t\n\r]*"')
#: Content chunks tried as a template before a stream's shape is taken as one that never fits.
LEARN_ATTEMPTS = 8


class _ContentTemplate:
    """A stream's plain content chunk, with the place of its text: later chunks that match it byte for byte
    around the text are built from it instead of decoded.

    Upstreams send every content delta of a stream as the same JSON with only
    the text changed (same id, model, created, index, ``finish_reason: null``).
    Learned from the first chunk whose only delta field is a text that is
    its own JSON literal (no quote, backslash or control character) and
    appears once; a later chunk with exactly the same bytes before and after
    its text, and a text that is its own literal, decodes to the learned
    payload with that text, so that is what it becomes (fresh dicts down to
    the delta; the other values are shared, and no reader mutates them).
    Anything else (a tool call, the finish, usage, escapes, other spacing)
    is decoded as before. ``plain``: the learned chunk carries nothing but
    its text (no usage, no finish), so a reader that only wants the text can
    take the text alone (:meth:`SSEPayloads.yield_texts`).
    """

    __slots__ = ("prefix", "suffix", "fixed", "payload", "choice", "plain")

    def __init__(self, prefix: str, suffix: str, payload: dict[str, Any], choice: dict[str, Any]) -> None:
        self.prefix, self.suffix = prefix, suffix
        self.fixed = len(prefix) + len(suffix)
        self.payload, self.choice = payload, choice
        self.plain = payload.get("usage") is None and not choice.get("finish_reason")

    @classmethod
    def learn(cls, data: str, payload: Any) -> "_ContentTemplate | None":
        if type(payload) is not dict:
            return None
        choices = payload.get("choices")
        if type(choices) is not list or len(choices) != 1 or type(choices[0]) is not dict:
            return None
        choice = choices[0]
        delta = choice.get("delta")
        if type(delta) is not dict or len(delta) != 1:
            return None
        text = delta.get("content")
        if type(text) is not str or not text or _NOT_LITERAL.search(text) is not None:
            return None
        if data.count('"content"') != 1:
            return None
        found = _CONTENT_KEY.search(data, data.index('"content"'))
        if found is None or not data.startswith(text + '"', found.end()):
            return None
        start = found.end()
        return cls(data[:start], data[start + len(text):], payload, choice)

    def text_of(self, data: str) -> str | None:
        """The text of ``data`` if it is this template with another text; else None."""
        if len(data) < self.fixed or not data.startswith(self.prefix) or not data.endswith(self.suffix):
            return None
        text = data[len(self.prefix):len(data) - len(self.suffix)]
        if _NOT_LITERAL.search(text) is not None:
            return None
        return text

    def build(self, data: str) -> dict[str, Any] | None:
        """The payload ``data`` decodes to, if it is this template with another text; else None."""
        text = self.text_of(data)
        if text is None:
            return None
        return {**self.payload, "choices": [{**self.choice, "delta": {"content": text}}]}


#: How long to read the rest of an HTTP/1.1 body after ``[DONE]`` (as the SDK) for connection reuse.
DRAIN_TIMEOUT = 0.1
_DEFAULT_ERROR = "An error occurred during streaming"


class SSEPayloads:
    """The JSON payloads of one streamed response body, one ``await next()`` at a time.

    ``next()`` raises ``StopAsyncIteration`` after ``[DONE]`` or at the end
    of the body. It awaits the network only when no decoded payload is
    waiting, so the caller's timeout/interrupt guard wraps exactly the reads.
    """

    __slots__ = ("response", "ready", "_read", "_chunks", "_pending", "_error", "_ended", "_saw_done", "_tail",
                 "_skip_lf", "_data", "_has_event", "_has_id", "_has_retry", "_template", "_attempts", "_tail_size",
                 "_event_size", "_texts")

    def __init__(self, response: Any) -> None:
        self.response = response
        # Unencoded bodies (nearly all SSE) skip the content-decoding layer: a generator less per read.
        encoded = response.headers.get("content-encoding", "identity").strip().lower() not in ("", "identity")
        self._chunks = response.aiter_bytes() if encoded else response.aiter_raw()
        self._read = self._chunks.__anext__
        self._pending: deque[Any] = deque()
        #: Payloads decoded and not yet handed out: a reader may pop them directly (``next()`` without a wait).
        self.ready = self._pending
        self._error: BaseException | None = None   # raised once the payloads before it are handed out
        self._ended = False        # no more bytes will be decoded ([DONE], end of body, or an error)
        self._saw_done = False
        self._tail: list[bytes] = []   # the start of a line whose end has not arrived yet
        self._tail_size = 0            # its bytes (bounded by MAX_SSE_LINE)
        self._event_size = 0           # bytes of the lines of the event being read (bounded by MAX_SSE_EVENT)
        self._skip_lf = False          # the last read ended with CR: an LF first in the next read is its CRLF
        self._data: list[str] = []     # data lines of the event being read
        self._has_event = False
        self._has_id = False           # the last event id persists across events (SSE spec)
        self._has_retry = False
        self._template: _ContentTemplate | None = None  # learned from the first plain content chunk
        self._attempts = LEARN_ATTEMPTS  # payloads still to try it on (a shape that never fits costs nothing)
        self._texts = False  # plain content chunks handed out as their text alone (yield_texts)

    @property
    def content_type(self) -> str:
        """The answer's ``Content-Type`` ("" when absent): a stream is ``text/event-stream``."""
        return self.response.headers.get("content-type", "")

    def yield_texts(self) -> None:
        """From now on hand out a plain content chunk (one that matches the stream's learned template, which
        carries nothing but its text) as the text itself, a ``str``, instead of building its dict: a reader
        that only wants the text is spared three dicts per token, and can join texts read together."""
        self._texts = True

    async def next(self) -> Any:
        pending = self._pending
        while not pending:
            if self._ended:
                if self._saw_done:
                    self._saw_done = False
                    await self._drain()
                error = self._error
                if error is not None:
                    self._error = None
                    raise error
                raise StopAsyncIteration
            try:
                chunk = await self._read()
            except StopAsyncIteration:
                self._finish()
                continue
            except Exception as exc:
                mapped = self._transport_error(exc)
                if mapped is exc:
                    raise
                raise mapped from exc
            self._feed(chunk)
        return pending.popleft()

    async def aclose(self) -> None:
        """Close the response (and with it the connection, unless it was read to the end)."""
        self._ended = True
        try:
            await self._chunks.aclose()
        finally:
            await self.response.aclose()

    # -- decoding ------------------------------------------------------------------------------

    def _feed(self, chunk: bytes) -> None:
        if len(chunk) > MAX_SSE_LINE:  # (not the shortcuts below: the line-by-line path checks each line)
            self._feed_lines(chunk)
            return
        # Fast path: one whole ``data: {...}`` event in one read, nothing carried over (most reads).
        if chunk.endswith(b"\n\n") and chunk.startswith(b"data: ") and chunk.find(b"\n") == len(chunk) - 2 \
                and not (self._tail or self._data or self._skip_lf or self._has_event or self._has_retry) \
                and b"\r" not in chunk:
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                self._fail(exc)
                return
            self._dispatch(text[6:-2])
            return
        if chunk.endswith(b"\n\n") and chunk.startswith(b"data: ") and b"\r" not in chunk \
                and not (self._tail or self._data or self._skip_lf or self._has_event or self._has_retry):
            chunk = self._feed_events(chunk)  # several whole ``data:`` events in one read (a fast upstream)
            if not chunk:
                return
        self._feed_lines(chunk)

    def _feed_lines(self, chunk: bytes) -> None:
        """Split ``chunk`` into lines (the start of the next one kept in the tail) and read them."""
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        has_cr = b"\r" in chunk
        if not has_cr and b"\n" not in chunk:
            if chunk:
                self._tail.append(chunk)
                self._tail_size += len(chunk)
                if self._tail_size > MAX_SSE_LINE:
                    self._tail = []
                    self._fail(too_large(f"an SSE line longer than {MAX_SSE_LINE} bytes"))
            return
        if self._tail:
            self._tail.append(chunk)
            chunk = b"".join(self._tail)
            self._tail = []
            self._tail_size = 0
        if has_cr:
            self._skip_lf = chunk.endswith(b"\r")
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        last = lines.pop()
        self._lines(lines)
        if last and not self._ended:
            self._tail.append(last)
            self._tail_size = len(last)
            if self._tail_size > MAX_SSE_LINE:
                self._tail = []
                self._fail(too_large(f"an SSE line longer than {MAX_SSE_LINE} bytes"))

    def _feed_events(self, chunk: bytes) -> bytes:
        """Dispatch the leading events of ``chunk`` that are one ``data: `` line each; return the rest (from
        the first event of another shape, for the line-by-line path), or b"" when all were dispatched."""
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            return chunk  # the line-by-line path raises at the bad line, after the events before it
        events = text[:-2].split("\n\n")
        for i, event in enumerate(events):
            if self._ended:
                return b""
            if "\n" in event or not event.startswith("data: "):
                return "\n\n".join(events[i:]).encode("utf-8") + b"\n\n"
            self._dispatch(event[6:])
        return b""

    def _finish(self) -> None:
        """The body ended: a last line without its newline still counts (as in the SDK)."""
        if self._tail and not self._ended:
            last = b"".join(self._tail)
            self._tail = []
            self._lines([last])
        self._ended = True

    def _lines(self, lines: list[bytes]) -> None:
        data = self._data
        for line in lines:
            if self._ended:
                return
            if not line:
                self._event_size = 0
                if data or self._has_event or self._has_id or self._has_retry:
                    self._dispatch("\n".join(data) if len(data) != 1 else data[0])
                    data.clear()
                    self._has_event = self._has_retry = False
                continue
            self._event_size += len(line) + 1
            if self._event_size > MAX_SSE_EVENT or len(line) > MAX_SSE_LINE:
                data.clear()
                what = f"an SSE line longer than {MAX_SSE_LINE}" if len(line) > MAX_SSE_LINE else \
                    f"an SSE event longer than {MAX_SSE_EVENT}"
                self._fail(too_large(what + " bytes"))
                return
            if line.startswith(b"data: "):  # the common case, first
                try:
                    data.append(line.decode("utf-8")[6:])
                except UnicodeDecodeError as exc:
                    self._fail(exc)
                continue
            try:
                text = line.decode("utf-8")  # comments too: the SDK rejects bad UTF-8 anywhere
            except UnicodeDecodeError as exc:
                self._fail(exc)
                continue
            if line[0] == 58:  # ":" a comment (keep-alive pings)
                continue
            name, _, value = text.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                self._has_event = bool(value)
            elif name == "id":
                if "\0" not in value:
                    self._has_id = True
            elif name == "retry":
                try:
                    int(value)
                except ValueError:
                    pass
                else:
                    self._has_retry = True

    def _dispatch(self, data: str) -> None:
        template = self._template
        if template is not None:
            if self._texts and template.plain:
                text = template.text_of(data)
                if text is not None:
                    self._pending.append(text)
                    return
            else:
                built = template.build(data)
                if built is not None:
                    self._pending.append(built)
                    return
        if data.startswith("[DONE]"):
            self._saw_done = self._ended = True
            return
        try:
            payload = _loads(data)
        except ValueError as exc:  # json.JSONDecodeError, as the SDK raises
            self._fail(exc)
            return
        if type(payload) is dict and payload.get("error"):
            error = payload["error"]
            message = error.get("message") if isinstance(error, dict) else None
            if not message or not isinstance(message, str):
                message = _DEFAULT_ERROR
            self._fail(ReportedError(message, error))
            return
        if template is None and self._attempts:
            self._template = _ContentTemplate.learn(data, payload)
            self._attempts -= 1
        self._pending.append(payload)

    def _fail(self, error: BaseException) -> None:
        self._error = error
        self._ended = True

    # -- the transport -------------------------------------------------------------------------

    def _transport_error(self, exc: Exception) -> Exception:
        self._ended = True
        httpx = _loaded_httpx()
        if httpx is not None and isinstance(exc, httpx.TimeoutException):
            return UpstreamTimedOut()
        if httpx is not None and isinstance(exc, httpx.RequestError):
            return UpstreamConnectionError()
        return exc

    async def _drain(self) -> None:
        """After ``[DONE]``: let HTTP/1.1 keep the connection by reading the (usually empty) rest."""
        response = self.response
        if response.is_closed or getattr(response, "http_version", "HTTP/1.1") != "HTTP/1.1":
            return
        at_eof = getattr(response, "at_eof", None)
        if at_eof is not None and at_eof():  # the body's end came with [DONE] (as usual): no timer, no read
            return
        try:
            async with asyncio.timeout(DRAIN_TIMEOUT):
                async for _ in self._chunks:
                    pass
        except TimeoutError:
            pass
        except Exception:  # cleanup must not turn a complete answer into an error
            pass
