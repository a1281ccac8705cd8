"""A differential corpus: normal, odd and hostile upstream responses, byte for byte, through both transports.

Each case is a raw answer (:mod:`raw_upstream`) and what a person must get
from it: the reply, a cut reply, or a failure notice. The same bytes are
played to an agent on ``model.transport: fast`` (:mod:`.http1`,
:mod:`.sse`) and on ``sdk`` (the openai SDK on its httpx client), and both
must end the turn the same way — the same reply text, failed or not, the
same finish — and as the case says. This is what holds the hand-written
HTTP/1.1 client to the library's standard (issue 33): framings, line
endings, 1xx heads, redirects, resets, malformed heads, every bound.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.upstream import STREAM_SUPPORT
from hermes_gateway._core.events import TextDelta, TurnEnd

from raw_upstream import (Answer, Exchange, RawUpstream, answer_with, bomb, chunk, chunked, completion, head, sse)
from scripted_upstream import model_config

HELLO = sse("Hel", "lo ", "there")
MAX_REPLY = 2000


@dataclass
class Case:
    answer: Answer
    #: the reply a person gets (what was shown, when the turn failed part-way)
    reply: str = ""
    #: the turn failed: a short one-line message (in a chat, the failure notice when nothing was shown)
    failed: bool = False
    finish: str = "stop"


def ok(body: bytes = HELLO, *fields: str, framing: str = "length", **kw: Any) -> Answer:
    if framing == "length":
        return answer_with(head("200 OK", *fields, length=len(body), **kw) + body)
    if framing == "chunked":
        return answer_with(head("200 OK", "Transfer-Encoding: chunked", *fields, **kw) + chunked(body))
    return answer_with(head("200 OK", "Connection: close", *fields, **kw) + body, keep=False)  # ends with the close


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


def redirect(status: int, target: str) -> Answer:
    async def answer(ex: Exchange) -> None:
        if ex.head.startswith(b"POST /v2/"):
            await ok()(ex)
            return
        location = target.replace("PORT", str(ex.port))
        await ex.send(head(f"{status} Redirect", f"Location: {location}", length=0, content_type=None))
    return answer


def redirect_loop() -> Answer:
    async def answer(ex: Exchange) -> None:
        await ex.send(head("307 Again", "Location: /v1/chat/completions", length=0, content_type=None))
    return answer


def reset_after(data: bytes) -> Answer:
    async def answer(ex: Exchange) -> None:
        ex.keep = False
        await ex.send(data)
        ex.writer.transport.abort()  # type: ignore[attr-defined]
    return answer


def endless(start: bytes, piece: bytes, pause: float = 0.0) -> Answer:
    async def answer(ex: Exchange) -> None:
        await ex.endless(start, piece, pause)
    return answer


def forever_tokens() -> Answer:
    return endless(head("200 OK", "Transfer-Encoding: chunked"),
                   chunked(f"data: {json.dumps(chunk('word '))}\n\n".encode())[:-5])


def tool_event(index: int, name: str | None, arguments: str) -> bytes:
    function = {"arguments": arguments, **({"name": name} if name else {})}
    delta = {"tool_calls": [{"index": index, **({"id": f"call_{index}"} if name else {}), "function": function}]}
    event = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    return chunked(f"data: {json.dumps(event)}\n\n".encode())[:-5]


def forever_tool_arguments() -> Answer:
    return endless(head("200 OK", "Transfer-Encoding: chunked") + tool_event(0, "calculate", '{"expression": "'),
                   tool_event(0, None, "1 + " * 1000))


def forever_tool_calls() -> Answer:
    async def answer(ex: Exchange) -> None:
        ex.keep = False
        await ex.send(head("200 OK", "Transfer-Encoding: chunked"))
        for index in range(100_000):
            await ex.send(tool_event(index, f"tool_{index}", "{}"))
        ex.writer.close()
    return answer


def status(code: int, body: bytes, content_type: str = "application/json") -> Answer:
    return answer_with(head(f"{code} Status", length=len(body), content_type=content_type) + body)


def streamed_json(unasked: bool = False) -> Answer:
    """A stream request answered with JSON: the turn falls back to a non-streamed call (the same answer);
    ``unasked``: a second response nobody asked for right behind it, in the same bytes."""
    body = json.dumps(completion("Hello there")).encode()
    answer = head("200 OK", length=len(body), content_type="application/json") + body
    if unasked:
        other = json.dumps(completion("Not asked for")).encode()
        answer += head("200 OK", length=len(other), content_type="application/json") + other
    return answer_with(answer)


GZIP_BOMB = bomb(31, 64 << 20)
DEFLATE_BOMB = bomb(15, 64 << 20)
PIECES = b"".join(f"data: {json.dumps(chunk(p))}\n\n".encode() for p in ("Hel", "lo ", "there"))

CASES: dict[str, Case] = {
    # -- normal framings and encodings of the same answer
    "content-length": Case(ok(), "Hello there"),
    "chunked": Case(ok(framing="chunked"), "Hello there"),
    "close-delimited": Case(ok(framing="close"), "Hello there"),
    "http/1.0 close-delimited": Case(answer_with(head("200 OK", version="HTTP/1.0") + HELLO, keep=False),
                                     "Hello there"),
    "crlf line endings": Case(ok(sse("Hel", "lo ", "there", sep="\r\n")), "Hello there"),
    "cr line endings": Case(ok(sse("Hel", "lo ", "there", sep="\r")), "Hello there"),
    "comments and pings": Case(ok(b": ping\n\n" + PIECES + b": keep-alive\n\n" + sse(done=True)), "Hello there"),
    "event and id fields": Case(ok(b"event: message\nid: 7\n" + HELLO), "Hello there"),
    "data without a space": Case(ok(HELLO.replace(b"data: ", b"data:")), "Hello there"),
    "json over two data lines": Case(ok(b'data: {"id": "c1", "choices": [{"index": 0,\ndata: "delta": '
                                        b'{"content": "Hello there"}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n'),
                                     "Hello there"),
    "one byte per write": Case(answer_with(*pieces(head("200 OK", length=len(HELLO)) + HELLO, 1)), "Hello there"),
    "utf-8 split across writes": Case(answer_with(head("200 OK", length=len(sse("héllo wörld"))),
                                                  *pieces(sse("héllo wörld"), 7), pause=0.001), "héllo wörld"),
    "no [DONE], finish then close": Case(ok(sse("Hello there", done=False), framing="close"), "Hello there"),
    "chunk per event": Case(answer_with(head("200 OK", "Transfer-Encoding: chunked")
                                        + chunked(*[e + b"\n\n" for e in HELLO.split(b"\n\n") if e])), "Hello there"),
    "chunk extensions": Case(answer_with(head("200 OK", "Transfer-Encoding: chunked")
                                         + b"%x;ext=1\r\n%s\r\n0\r\n\r\n" % (len(HELLO), HELLO)), "Hello there"),
    "chunked with trailers": Case(answer_with(head("200 OK", "Transfer-Encoding: chunked")
                                              + chunked(HELLO)[:-2] + b"X-Trailer: 1\r\n\r\n"), "Hello there"),
    "90 header fields": Case(ok(HELLO, *[f"X-Field-{i}: {i}" for i in range(90)]), "Hello there"),
    "odd header case and spacing": Case(answer_with(b"HTTP/1.1 200 OK\r\ncontent-TYPE:text/event-stream\r\n"
                                                    b"CONTENT-length:   %d\r\n\r\n" % len(HELLO) + HELLO),
                                        "Hello there"),
    "latin-1 header value": Case(ok(HELLO, "X-Name: caf\xe9"), "Hello there"),
    "no reason phrase": Case(answer_with(b"HTTP/1.1 200\r\nContent-Type: text/event-stream\r\nContent-Length: %d"
                                         b"\r\n\r\n" % len(HELLO) + HELLO), "Hello there"),
    "identity encoding named": Case(ok(HELLO, "Content-Encoding: identity"), "Hello there"),
    "content-type with charset": Case(ok(HELLO, content_type="text/event-stream; charset=utf-8"), "Hello there"),
    # -- 1xx heads, redirects, extra bytes
    "103 early hints": Case(answer_with(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n",
                                        head("200 OK", length=len(HELLO)) + HELLO), "Hello there"),
    "100 continue": Case(answer_with(b"HTTP/1.1 100 Continue\r\n\r\n" + head("200 OK", length=len(HELLO)) + HELLO),
                         "Hello there"),
    "two 1xx heads": Case(answer_with(b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                                      b"HTTP/1.1 103 Early Hints\r\nLink: </b>\r\n\r\n",
                                      head("200 OK", length=len(HELLO)) + HELLO), "Hello there"),
    "307 same origin": Case(redirect(307, "/v2/chat/completions"), "Hello there"),
    "308 same origin": Case(redirect(308, "http://127.0.0.1:PORT/v2/chat/completions"), "Hello there"),
    "307 to another origin": Case(redirect(307, "http://localhost:PORT/v2/chat/completions"), "Hello there"),
    "redirect loop": Case(redirect_loop(), failed=True),
    "unasked second response": Case(answer_with(head("200 OK", length=len(HELLO)) + HELLO
                                                + head("200 OK", length=len(HELLO)) + HELLO), "Hello there"),
    "bytes after the body": Case(answer_with(head("200 OK", length=len(HELLO)) + HELLO + b"garbage\r\n"),
                                 "Hello there"),
    "stream asked, json answered": Case(streamed_json(), "Hello there"),
    "json answer and an unasked second one": Case(streamed_json(unasked=True), "Hello there"),
    # -- errors
    "500 text": Case(status(500, b"oops", "text/plain"), failed=True),
    "400 json error": Case(status(400, b'{"error": {"message": "bad request"}}'), failed=True),
    "429": Case(status(429, b'{"error": {"message": "slow down"}}'), failed=True),
    "error event in the stream": Case(ok(b'data: {"error": {"message": "overloaded"}}\n\n'), failed=True),
    "invalid json in the stream": Case(ok(b"data: {not json\n\n"), failed=True),
    "closed before any byte": Case(answer_with(keep=False), failed=True),
    "malformed status line": Case(answer_with(b"NOT HTTP AT ALL\r\n\r\n", keep=False), failed=True),
    "reset mid-stream": Case(reset_after(head("200 OK", "Transfer-Encoding: chunked") + chunked(PIECES)[:-5]),
                             "Hello there", failed=True),
    "body shorter than its length": Case(answer_with(head("200 OK", length=len(HELLO) + 100) + HELLO[:40],
                                                     keep=False), failed=True),
    # -- hostile: every bound
    "endless header fields": Case(endless(b"HTTP/1.1 200 OK\r\n", b"X-More: yes\r\n"), failed=True),
    "one endless header value": Case(endless(b"HTTP/1.1 200 OK\r\nX-Long: ", b"a" * 4096), failed=True),
    "endless sse line": Case(endless(head("200 OK", "Connection: close"), b"data: " + b"x" * 65536), failed=True),
    "endless sse event": Case(endless(head("200 OK", "Connection: close"), b"data: x\n" * 8192), failed=True),
    "gzip bomb": Case(answer_with(head("200 OK", "Content-Encoding: gzip", length=len(GZIP_BOMB)) + GZIP_BOMB), failed=True),
    "deflate bomb": Case(answer_with(head("200 OK", "Content-Encoding: deflate", length=len(DEFLATE_BOMB))
                                     + DEFLATE_BOMB), failed=True),
    "brotli named": Case(ok(HELLO, "Content-Encoding: br"), failed=True),
    "endless tokens": Case(forever_tokens(), ("word " * MAX_REPLY)[:MAX_REPLY].strip(), finish="length"),
    "endless tool call arguments": Case(forever_tool_arguments(), failed=True),
    "endless new tool calls": Case(forever_tool_calls(), failed=True),
    "endless non-streamed answer": Case(endless(head("200 OK", "Connection: close", content_type="application/json"),
                                                b'{"a": "' + b"x" * 65536), failed=True),
}


async def turn(upstream: RawUpstream, transport: str) -> TurnEnd:
    STREAM_SUPPORT.forget()
    config = model_config(upstream.url, transport=transport, api_key="sk-corpus", max_reply_chars=MAX_REPLY,
                          timeouts={"first_token": 10, "stall": 10, "connect": 5})
    agent = AIAgent.from_config(config, tools=[], max_retries=0)
    assert agent._pool.all()[0].transport.kind == transport
    try:
        events = [event async for event in agent.astream("hello")]
    finally:
        await agent.aclose()
    end = events[-1]
    assert isinstance(end, TurnEnd)
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert len(shown) <= MAX_REPLY
    return end


def outcome(end: TurnEnd) -> tuple[str, bool, str]:
    """What a person gets: the reply, whether the turn failed (with a short one-line reason), the finish."""
    if end.error:
        assert "\n" not in end.error and len(end.error) < 2000
    return end.reply, end.error is not None, end.finish_reason


def test_the_corpus_has_at_least_40_cases() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("name", list(CASES))
async def test_both_transports_end_the_same_way(name: str) -> None:
    case = CASES[name]
    async with RawUpstream(case.answer) as upstream:
        fast = await asyncio.wait_for(turn(upstream, "fast"), 60)
        fast_seen = len(upstream.seen)
        sdk = await asyncio.wait_for(turn(upstream, "sdk"), 60)
    assert outcome(fast) == (case.reply, case.failed, case.finish), fast.error
    assert outcome(sdk) == (case.reply, case.failed, case.finish), sdk.error
    assert fast_seen > 0


async def test_a_redirect_to_another_origin_drops_the_key_on_both() -> None:
    """As httpx does for the SDK: the Authorization header goes to the origin configured, not where it points."""
    for transport in ("fast", "sdk"):
        async with RawUpstream(redirect(307, "http://localhost:PORT/v2/chat/completions")) as upstream:
            end = await turn(upstream, transport)
            assert end.reply == "Hello there"
            first, moved = upstream.seen[0], upstream.seen[1]
            assert first.header("authorization") == "Bearer sk-corpus"
            assert first.header("accept-encoding") == moved.header("accept-encoding") == "identity"  # no bombs
            assert moved.head.startswith(b"POST /v2/chat/completions ")
            assert moved.header("authorization") is None and moved.header("host") == f"localhost:{upstream.port}"
            assert json.loads(moved.body) == json.loads(first.body)
