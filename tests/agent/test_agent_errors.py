"""The agent's own upstream errors: built from an answer as the SDK builds its own, classified, described.

Both transports raise only these (the fast one builds them, the sdk one
translates the SDK's), so the fallback decisions and the one-line reasons a
person sees do not depend on the transport.
"""

from __future__ import annotations

import json

import aiohttp
import openai
import pytest
from hypothesis import given, settings, strategies as st

from hermes_gateway._core.agent.errors import (NotStreaming, ReportedError, UpstreamConnectionError,
                                               UpstreamStatusError, UpstreamTimedOut, describe, endpoint_is_down,
                                               rejects_usage_option, streaming_unsupported)
from hermes_gateway._core.agent.transport_sdk import raise_mapped
from hermes_gateway._core.demo.transport import httpx

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def test_a_json_error_body_gives_the_message_and_the_error_member() -> None:
    error = UpstreamStatusError.from_response(400, {"x-request-id": "r1"},
                                              b'{"error": {"message": "bad temperature", "param": "t"}}')
    assert (error.status_code, str(error)) == (400, "Error code: 400 - bad temperature")
    assert error.body == {"message": "bad temperature", "param": "t"} and error.headers["x-request-id"] == "r1"
    assert describe(error) == "HTTP 400: bad temperature"


def test_a_body_that_is_not_json_is_kept_as_text_and_an_unreadable_one_as_none() -> None:
    error = UpstreamStatusError.from_response(502, {}, b"  <html>Bad Gateway</html>\n")
    assert (str(error), error.body) == ("Error code: 502", "<html>Bad Gateway</html>")
    assert describe(error) == "HTTP 502"
    assert UpstreamStatusError.from_response(503, {}, None).body is None


def test_fallback_decisions() -> None:
    def status(code: int, message: str = "") -> UpstreamStatusError:
        return UpstreamStatusError.from_response(code, {}, json.dumps({"error": {"message": message}}).encode())

    assert all(endpoint_is_down(status(code)) for code in (401, 403, 404, 408, 409, 429, 500, 503))
    assert not endpoint_is_down(status(400)) and not endpoint_is_down(status(422))
    assert endpoint_is_down(UpstreamConnectionError()) and endpoint_is_down(UpstreamTimedOut())
    assert not endpoint_is_down(UpstreamConnectionError(mid_stream=True))
    assert streaming_unsupported(NotStreaming()) and streaming_unsupported(status(501))
    assert streaming_unsupported(status(400, "stream is not supported")) and not streaming_unsupported(status(400))
    assert rejects_usage_option(status(422, "unknown field stream_options")) and not rejects_usage_option(status(500))


def test_reasons_are_one_line() -> None:
    try:
        raise UpstreamConnectionError(mid_stream=True) from aiohttp.ClientPayloadError("payload\nnot completed")
    except UpstreamConnectionError as exc:
        assert describe(exc) == "connection lost mid-stream (ClientPayloadError: payload not completed)"
    assert describe(UpstreamConnectionError()) == "cannot connect"
    assert describe(UpstreamTimedOut()) == "timed out connecting or reading"
    assert describe(ReportedError("model\noverloaded")) == "upstream error: model overloaded"


# -- the SDK's exceptions, as the sdk transport translates them ------------------------------------------

def mapped(exc: openai.APIError, **kwargs: bool) -> BaseException:
    with pytest.raises(Exception) as caught:
        raise_mapped(exc, **kwargs)
    return caught.value


def test_the_sdks_exceptions_become_ours() -> None:
    response = httpx.Response(429, headers={"retry-after": "1"}, request=REQUEST)
    status = mapped(openai.RateLimitError("Error code: 429 - slow", response=response, body={"message": "slow"}))
    assert isinstance(status, UpstreamStatusError)
    assert (status.status_code, str(status), status.body, status.headers["retry-after"]) == \
        (429, "Error code: 429 - slow", {"message": "slow"}, "1")
    timeout = mapped(openai.APITimeoutError(request=REQUEST), mid_stream=True)
    assert isinstance(timeout, UpstreamTimedOut) and timeout.mid_stream
    try:
        raise openai.APIConnectionError(request=REQUEST) from httpx.ConnectError("refused")
    except openai.APIConnectionError as exc:
        lost = mapped(exc)
    assert type(lost) is UpstreamConnectionError and not lost.mid_stream
    assert describe(lost) == "cannot connect (ConnectError: refused)"
    reported = mapped(openai.APIError("overloaded", REQUEST, body={"message": "overloaded"}))
    assert isinstance(reported, ReportedError) and reported.body == {"message": "overloaded"}


# -- the same error as the SDK's own (its private builder is the oracle) ---------------------------------

SDK = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")
BODIES = st.one_of(
    st.builds(lambda m: json.dumps({"error": {"message": m, "type": "x"}}).encode(), st.text(max_size=20)),
    st.builds(lambda m: json.dumps({"message": m}).encode(), st.text(max_size=20)),
    st.builds(lambda v: json.dumps(v).encode(), st.one_of(st.lists(st.integers(), max_size=2), st.integers(),
                                                           st.none(), st.dictionaries(st.text(max_size=3),
                                                                                      st.integers(), max_size=2))),
    st.text(max_size=30).map(str.encode),
)


@pytest.mark.skipif(not hasattr(SDK, "_make_status_error_from_response"),
                    reason="this openai SDK no longer has the builder the error copies")
@settings(max_examples=200, deadline=None)
@given(status=st.sampled_from([400, 401, 403, 404, 409, 422, 429, 500, 503, 418]), content=BODIES)
def test_status_errors_carry_what_the_sdks_carry(status: int, content: bytes) -> None:
    ours = UpstreamStatusError.from_response(status, {}, content)
    theirs = SDK._make_status_error_from_response(httpx.Response(status, content=content, request=REQUEST))
    assert (ours.status_code, ours.message, ours.body) == (theirs.status_code, theirs.message, theirs.body)


def test_an_upstream_refusal_keeps_its_fields_and_masks_the_secrets() -> None:
    """(issue 34) What an API client is told about an upstream's 4xx: its status, message, param and code."""
    from hermes_gateway._core.agent.errors import AllUpstreamsFailed, refusal_of, refuses_the_request
    body = (b'{"error": {"message": "too long for sk-secret-key", "type": "invalid_request_error", '
            b'"param": "messages", "code": "context_length_exceeded"}}')
    error = UpstreamStatusError.from_response(400, {}, body)
    refusal = refusal_of(error, ["sk-secret-key"])
    assert refusal is not None and refuses_the_request(error)
    assert (refusal.status, refusal.message, refusal.param, refusal.code) == \
        (400, "too long for ***", "messages", "context_length_exceeded")
    limited = UpstreamStatusError.from_response(429, {"retry-after": "7", "retry-after-ms": "x" * 100}, b"{}")
    assert refusal_of(limited).retry_after == "7" and refusal_of(limited).retry_after_ms is None  # (bounded)
    assert not refuses_the_request(limited)
    assert refusal_of(UpstreamStatusError(503, "Error code: 503")) is None  # an outage is not a refusal
    assert refusal_of(UpstreamStatusError(408, "Error code: 408")) is None
    assert not refuses_the_request(UpstreamStatusError(400, "x", {"message": "stream is not supported"}))
    unauthorized = refusal_of(UpstreamStatusError(401, "Error code: 401", {"message": "bad key"}))
    failed = AllUpstreamsFailed(["a", "b", "c"], [refusal_of(limited), unauthorized, refusal])
    assert failed.refusal is refusal  # the client's own mistake first
    assert AllUpstreamsFailed(["a", "b"], [refusal_of(limited), unauthorized]).refusal is unauthorized
    assert AllUpstreamsFailed(["a"]).refusal is None
