"""``SSEPayloads`` reads a streamed body exactly as the openai SDK's ``AsyncStream`` would.

The SDK itself is the oracle: the same bytes, cut into the same network
reads, go through ``openai._streaming.AsyncStream`` and through
``SSEPayloads``, and the payloads and the error at the end must be equal
(the SDK's exception as the ``sdk`` transport translates it: both transports
raise the same project errors).
The bodies are real ``httpx`` responses over an in-memory byte stream, so
that where the reads are cut is chosen by the test (a socket would merge
or split them at will); the end-to-end tests in
``test_agent_sse_wire.py`` cover the same shapes over real TCP.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import Any, AsyncIterator

import openai
import pytest
from hypothesis import given, settings, strategies as st
from openai._streaming import AsyncStream

from hermes_gateway._core.agent.errors import ReportedError, UpstreamConnectionError
from hermes_gateway._core.agent.sse import SSEPayloads
from hermes_gateway._core.agent.transport_sdk import raise_mapped
from hermes_gateway._core.demo.transport import httpx

URL = "http://127.0.0.1:9/v1/chat/completions"


async def _reads(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def response(parts: list[bytes], **headers: str) -> Any:
    return httpx.Response(200, headers={"content-type": "text/event-stream", **headers}, content=_reads(parts),
                          request=httpx.Request("POST", URL))


def _outcome(payloads: list[Any], error: BaseException | None) -> tuple[list[Any], Any]:
    if error is None:
        return payloads, None
    return payloads, (type(error), str(error), getattr(error, "body", None))


async def ours(parts: list[bytes], **headers: str) -> tuple[list[Any], Any]:
    reader = SSEPayloads(response(parts, **headers))
    payloads: list[Any] = []
    try:
        while True:
            payloads.append(await reader.next())
    except StopAsyncIteration:
        return _outcome(payloads, None)
    except Exception as exc:
        return _outcome(payloads, exc)
    finally:
        await reader.aclose()


#: Only its SSE decoding is used (no request is ever sent), so one serves every test and loop.
SDK_CLIENT = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")


async def sdks(parts: list[bytes], **headers: str) -> tuple[list[Any], Any]:
    stream = AsyncStream(cast_to=object, response=response(parts, **headers), client=SDK_CLIENT)
    payloads: list[Any] = []
    try:
        async for payload in stream:
            payloads.append(payload)
    except openai.APIError as exc:
        try:
            raise_mapped(exc, mid_stream=True)
        except Exception as mapped:
            return _outcome(payloads, mapped)
    except Exception as exc:
        return _outcome(payloads, exc)
    finally:
        await stream.close()
    return _outcome(payloads, None)


def split(body: bytes, *cuts: int) -> list[bytes]:
    edges = [0, *sorted(cuts), len(body)]
    return [body[a:b] for a, b in zip(edges, edges[1:])]


# -- the shapes named in the brief, each against the SDK and against the expected payloads ------

async def same_as_sdk(parts: list[bytes]) -> tuple[list[Any], Any]:
    result = await ours(parts)
    assert result == await sdks(parts)
    return result


async def test_plain_chunks_then_done() -> None:
    body = b'data: {"n": 1}\n\ndata: {"n": 2}\n\ndata: [DONE]\n\n'
    assert await same_as_sdk([body]) == ([{"n": 1}, {"n": 2}], None)


async def test_a_chunk_split_across_reads_anywhere_is_read_whole() -> None:
    body = 'data: {"text": "h\u00e9llo \u6f22\u5b57"}\n\ndata: [DONE]\n\n'.encode()
    for cut in range(1, len(body)):  # every cut, including inside the multi-byte characters
        assert await same_as_sdk(split(body, cut)) == ([{"text": "h\u00e9llo \u6f22\u5b57"}], None), cut


async def test_crlf_and_cr_line_endings_even_with_crlf_split_across_reads() -> None:
    crlf = b'data: {"n": 1}\r\n\r\ndata: {"n": 2}\r\n\r\ndata: [DONE]\r\n\r\n'
    assert await same_as_sdk([crlf]) == ([{"n": 1}, {"n": 2}], None)
    cut = crlf.index(b"\r\n") + 1  # between CR and LF: must not count as two line ends
    assert await same_as_sdk(split(crlf, cut)) == ([{"n": 1}, {"n": 2}], None)
    cr_only = b'data: {"n": 1}\r\rdata: {"n": 2}\r\r'
    assert await same_as_sdk(split(cr_only, 15)) == ([{"n": 1}, {"n": 2}], None)


async def test_comment_lines_and_unknown_fields_are_skipped() -> None:
    body = b': ping\n\n:\ndata: {"n": 1}\nfoo: bar\n\n: ping\n\ndata: [DONE]\n\n'
    assert await same_as_sdk([body]) == ([{"n": 1}], None)


async def test_multi_line_data_is_joined_with_newlines() -> None:
    body = b'data: {"a":\ndata: [1,\ndata:2]}\n\ndata: [DONE]\n\n'
    assert await same_as_sdk([body]) == ([{"a": [1, 2]}], None)


async def test_error_payload_mid_stream_raises_the_reported_error_after_the_chunks_before_it() -> None:
    body = b'data: {"n": 1}\n\ndata: {"error": {"message": "overloaded", "type": "server_error"}}\n\n' \
           b'data: {"n": 2}\n\ndata: [DONE]\n\n'
    payloads, error = await same_as_sdk([body])
    assert payloads == [{"n": 1}]
    assert error == (ReportedError, "overloaded", {"message": "overloaded", "type": "server_error"})


async def test_error_payload_without_a_message_gets_the_sdk_default() -> None:
    body = b'data: {"error": "busy"}\n\n'
    assert await same_as_sdk([body]) == ([], (ReportedError, "An error occurred during streaming", "busy"))


async def test_malformed_json_is_a_json_decode_error() -> None:
    payloads, error = await same_as_sdk([b'data: {"n": 1}\n\ndata: {not json\n\n'])
    assert payloads == [{"n": 1}] and error[0] is json.JSONDecodeError


async def test_missing_done_ends_at_the_end_of_the_body_and_a_last_unterminated_event_is_dropped() -> None:
    assert await same_as_sdk([b'data: {"n": 1}\n\ndata: {"n": 2}']) == ([{"n": 1}], None)


async def test_nothing_after_done_is_read() -> None:
    body = b'data: [DONE]\n\ndata: {not json\n\n'
    assert await same_as_sdk([body]) == ([], None)


async def test_a_gzip_encoded_body_is_decoded() -> None:
    body = gzip.compress(b'data: {"n": 1}\n\ndata: [DONE]\n\n')
    parts = split(body, len(body) // 2)
    result = await ours(parts, **{"content-encoding": "gzip"})
    assert result == await sdks(parts, **{"content-encoding": "gzip"}) == ([{"n": 1}], None)


async def test_transport_errors_become_connection_errors() -> None:
    async def dropped() -> AsyncIterator[bytes]:
        yield b'data: {"n": 1}\n\n'
        raise httpx.ReadError("connection reset")

    reader = SSEPayloads(httpx.Response(200, content=dropped(), request=httpx.Request("POST", URL)))
    assert await reader.next() == {"n": 1}
    with pytest.raises(UpstreamConnectionError) as caught:
        await reader.next()
    assert isinstance(caught.value.__cause__, httpx.ReadError)
    await reader.aclose()


async def test_a_stalled_read_can_be_cancelled_and_close_releases_the_body() -> None:
    gate = asyncio.Event()

    async def stalls() -> AsyncIterator[bytes]:
        yield b'data: {"n": 1}\n\n'
        await gate.wait()
        yield b"data: [DONE]\n\n"

    body = httpx.Response(200, content=stalls(), request=httpx.Request("POST", URL))
    reader = SSEPayloads(body)
    assert await reader.next() == {"n": 1}
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(reader.next(), 0.05)
    await reader.aclose()
    assert body.is_closed


# -- the property: any body, cut anywhere, reads as the SDK reads it ------------------------------

LINES = [b'data: {"n": 1}', b'data:{"n": 2}', b'data: "\xc3\xa9\xe6\xbc\xa2"', b'data: [1,', b"data: 2]", b": ping",
         b"event: message", b"event:", b"id: 7", b"retry: 100", b"retry: soon", b"foo: bar", b"data", b"",
         b"", b"", b'data: {"error": {"message": "boom"}}', b'data: {"error": null}', b'data: {"error": 0}',
         b"data: {broken", b"data: [DONE]", b"data: \xff", b": \xfe"]

bodies = st.tuples(
    st.lists(st.tuples(st.sampled_from(LINES), st.sampled_from([b"\n", b"\r\n", b"\r"])), max_size=14),
    st.lists(st.integers(min_value=0, max_value=400), max_size=6),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(bodies)
def test_any_body_cut_anywhere_reads_exactly_as_the_sdk_reads_it(case: tuple) -> None:
    lines, cuts, per_event = case
    body = b"".join(line + end for line, end in lines)
    if per_event:  # one read per event, as most upstreams write them (the reader's fast path)
        parts = [event + b"\n\n" for event in body.split(b"\n\n")]
        parts[-1] = parts[-1][:-2]
    else:
        parts = split(body, *(c % (len(body) + 1) for c in cuts))

    async def both() -> tuple[Any, Any]:
        return await ours(parts), await sdks(parts)

    mine, theirs = asyncio.run(both())
    assert mine == theirs


async def test_an_event_id_persists_so_a_later_blank_line_is_an_empty_event_as_in_the_sdk() -> None:
    # The SSE spec keeps the last event id; the SDK then dispatches (and fails to parse) an empty event.
    payloads, error = await same_as_sdk([b'id: 7\ndata: {"n": 1}\n\n\n'])
    assert payloads == [{"n": 1}] and error[0] is json.JSONDecodeError


async def test_a_whole_event_in_one_read_still_joins_data_lines_left_from_the_read_before() -> None:
    reads = [b"data: [1,\n", b"data: 2]\n\n", b'data: {"n": 3}\n\n', b"data: [DONE]\n\n"]
    assert await same_as_sdk(reads) == ([[1, 2], {"n": 3}], None)
    reads = [b'data: {"n": 1}\r', b'data: {"n": 2}\n\n']  # CR ended the first line; no blank line yet
    assert await same_as_sdk(reads) == ([], (json.JSONDecodeError, "Extra data: line 2 column 1 (char 9)", None))


# -- content chunks built from the stream's first one (sse._ContentTemplate) -----------------------

ENVELOPE = '{{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,' \
           '"delta":{delta},"logprobs":null,"finish_reason":{finish}}}]{usage}}}'


def chat_chunk(content: object = None, *, ascii: bool = False, finish: str | None = None, usage: bool = False,
               tool: bool = False, spaced: bool = False) -> bytes:
    delta = {"content": content} if content is not None else {}
    if tool:
        delta["tool_calls"] = [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{}"}}]
    text = ENVELOPE.format(delta=json.dumps(delta, ensure_ascii=ascii, separators=(", ", ": ") if spaced else
                                            (",", ":")),
                           finish=json.dumps(finish),
                           usage=',"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}' if usage else "")
    return b"data: " + text.encode("utf-8", "surrogatepass") + b"\n\n"


chat_chunks = st.lists(st.one_of(
    st.builds(chat_chunk, st.text(max_size=6), ascii=st.booleans(), spaced=st.booleans()),  # quotes, controls, é
    st.builds(chat_chunk, st.sampled_from(["a", "b c", '"content":"a"', "\\", "\t", "\x00"])),
    st.builds(chat_chunk, st.just("x"), finish=st.just("stop")),
    st.builds(chat_chunk, st.just(None), usage=st.just(True)),
    st.builds(chat_chunk, st.just("y"), tool=st.just(True)),
    st.just(b'data: {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "spaced"}}]}\n\n'),
    st.just(b'data: {"error": {"message": "boom"}}\n\n'),
), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(chat_chunks, st.booleans())
def test_content_chunks_of_one_envelope_read_exactly_as_the_sdk_reads_them(chunks: list[bytes], whole: bool) -> None:
    """The first plain content chunk is learned and the later ones of the same envelope are built, not
    decoded: whatever the texts (escapes, controls, other chunks between), the payloads are the SDK's."""
    body = b"".join(chunks) + b"data: [DONE]\n\n"
    parts = [body] if whole else [c for c in chunks] + [b"data: [DONE]\n\n"]

    async def both() -> tuple[Any, Any]:
        return await ours(parts), await sdks(parts)

    mine, theirs = asyncio.run(both())
    assert mine == theirs


async def test_a_built_chunk_is_a_fresh_payload_equal_to_the_decoded_one() -> None:
    parts = [chat_chunk("first"), chat_chunk("second"), chat_chunk("third")]
    payloads, error = await same_as_sdk(parts)
    assert error is None
    assert [p["choices"][0]["delta"]["content"] for p in payloads] == ["first", "second", "third"]
    assert payloads[1] is not payloads[2] and payloads[1]["choices"] is not payloads[2]["choices"]
    assert list(payloads[2]) == list(json.loads(parts[2][6:]))  # the keys in the wire's order


async def test_json_dumps_default_spacing_is_learned_too_and_a_shape_that_never_fits_stops_being_tried() -> None:
    from hermes_gateway._core.agent import sse

    spaced = [chat_chunk(w, spaced=True) for w in ("one", "two", "three")]
    reader = SSEPayloads(response(spaced))
    assert [(await reader.next())["choices"][0]["delta"]["content"] for _ in spaced] == ["one", "two", "three"]
    assert reader._template is not None  # learned from "one", "two" and "three" built from it
    await reader.aclose()
    odd = [chat_chunk(f"w{i}") for i in range(sse.LEARN_ATTEMPTS + 2)]  # a second "content" key: never learned
    odd = [c.replace(b'"model":"m"', b'"model":"m","x":{"content":null}') for c in odd]
    reader = SSEPayloads(response(odd))
    for _ in odd:
        await reader.next()
    assert reader._template is None and reader._attempts == 0
    await reader.aclose()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=14), st.lists(st.integers(min_value=1, max_value=4), max_size=8))
def test_reads_of_several_whole_events_read_exactly_as_the_sdk_reads_them(lines: list[bytes],
                                                                           sizes: list[int]) -> None:
    """A fast upstream's read holds several whole events (the reader's many-events path): whatever they are
    (other fields, multi-line data, errors, bad UTF-8, [DONE] in the middle), the payloads are the SDK's."""
    events = [event + b"\n\n" for event in b"\n".join(lines).split(b"\n\n") if event]
    parts: list[bytes] = []
    for size in [*sizes, len(events)]:
        if events:
            parts.append(b"".join(events[:size]))
            events = events[size:]

    async def both() -> tuple[Any, Any]:
        return await ours(parts), await sdks(parts)

    mine, theirs = asyncio.run(both())
    assert mine == theirs


async def test_an_event_of_another_shape_amid_plain_ones_in_one_read() -> None:
    body = b'data: {"n": 1}\n\n: ping\n\ndata: {"n": 2}\n\nevent: x\ndata: {"n": 3}\n\ndata: {"n": 4}\n\n' \
           b'data: [DONE]\n\ndata: {"n": 5}\n\n'
    assert await same_as_sdk([body]) == ([{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}], None)
