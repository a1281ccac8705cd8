"""The SSE writer prepares its response at the first write, so a stream's agent can start first.

(What the client receives is checked end to end in the streaming tests; here, when the response is
prepared and ended, on aiohttp's mocked request whose writer records its calls.)
"""

from __future__ import annotations

from aiohttp.test_utils import make_mocked_request

from hermes_gateway._core.api_server.sse import SSEWriter


def writer() -> tuple[SSEWriter, object]:
    request = make_mocked_request("POST", "/v1/chat/completions")
    return SSEWriter(request, 0), request.writer


async def test_nothing_is_prepared_before_the_first_write_and_the_headers_go_with_it() -> None:
    sse, http = writer()
    assert not sse.response.prepared and not http.write_headers.called
    await sse.write(b"data: 1\n\n")
    assert sse.response.prepared and sse.response.content_type == "text/event-stream"
    assert http.write_headers.call_count == 1
    await sse.write(b"data: 2\n\n")
    assert http.write_headers.call_count == 1
    await sse.close()
    assert http.write_eof.called


async def test_a_stream_that_wrote_nothing_is_still_prepared_as_an_event_stream_and_ended() -> None:
    sse, http = writer()
    await sse.close()
    assert sse.response.prepared and sse.response.content_type == "text/event-stream"
    assert http.write_headers.call_count == 1 and http.write_eof.called


async def test_the_last_frames_may_be_the_first_write() -> None:
    sse, http = writer()
    await sse.end(b"data: [DONE]\n\n")
    assert sse.response.prepared and http.write_headers.call_count == 1 and http.write_eof.called
