"""An upstream's refusal keeps its meaning for the API client (issue 34), on both transports, streamed and not.

- a 400 (``context_length_exceeded``) reaches the client as that 400, with the upstream's message, ``param``
  and ``code``, after exactly one upstream call (no retry, no non-streamed replay);
- a 429 stays a 429 with the upstream's ``Retry-After``;
- a 401 is the operator's problem: a 502 that says so, which the SDKs do not retry (``x-should-retry: false``).

Before, each was a retryable ``502 upstream_error`` ("Please retry"), and a 400 made a second upstream call.
"""

from __future__ import annotations

import json

import openai
import pytest
from aiohttp import web

from api_helpers import MODEL, gateway_config, post_raw, running_gateway

TOO_LONG = {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in "
                       "9000 tokens.", "type": "invalid_request_error", "param": "messages",
            "code": "context_length_exceeded"}
SLOW_DOWN = {"message": "Rate limit reached for requests", "type": "requests", "param": None,
             "code": "rate_limit_exceeded"}
BAD_KEY = {"message": "Incorrect API key provided: sk-upst***cret.", "type": "invalid_request_error",
           "param": None, "code": "invalid_api_key"}
CASES = {
    "400": (400, TOO_LONG, {}),
    # retry-after-ms keeps the gateway's own retries (the openai SDK's policy) short; Retry-After is what the
    # client is told
    "429": (429, SLOW_DOWN, {"Retry-After": "7", "retry-after-ms": "5"}),
    "401": (401, BAD_KEY, {}),
}


def refusing(upstream, status: int, error: dict, headers: dict) -> None:
    def answer(_: dict | None = None) -> web.Response:
        return web.json_response({"error": error}, status=status, headers=headers)

    async def nonstream(body: dict) -> web.Response:
        return answer()
    upstream.stream_refusal = answer
    upstream.nonstream_script = nonstream


BODIES = {"/v1/chat/completions": {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]},
          "/v1/responses": {"model": MODEL, "input": "hi"}}


@pytest.mark.parametrize("transport", ["fast", "sdk"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("path", list(BODIES))
@pytest.mark.parametrize("case", list(CASES))
async def test_an_upstream_refusal_keeps_its_meaning(upstream, transport, stream, path, case):
    status, error, headers = CASES[case]
    refusing(upstream, status, error, headers)
    config = gateway_config(model=upstream.model_config(transport=transport))
    async with running_gateway(config) as gw:
        got, got_headers, raw = await post_raw(f"{gw.url}{path}", {**BODIES[path], "stream": stream})
    body = json.loads(raw)["error"]
    calls = len(upstream.requests)
    if case == "400":
        assert (got, body) == (400, TOO_LONG)
        assert calls == 1  # not retried, not replayed without streaming
    elif case == "429":
        assert got == 429 and got_headers["Retry-After"] == "7"
        assert body["message"] == SLOW_DOWN["message"] and body["code"] == "rate_limit_exceeded"
    else:
        assert got == 502 and got_headers["x-should-retry"] == "false"
        assert body["code"] == "upstream_misconfigured" and "operator" in body["message"]
        assert "retry" not in body["message"].lower().replace("retrying will not help", "")
        assert "sk-upst" not in raw.decode()  # the upstream's words about the gateway's key stay in its log
        assert calls == 1


async def test_the_sdk_sees_a_400_as_bad_request_after_one_upstream_call_with_its_default_retries(upstream):
    refusing(upstream, *CASES["400"])
    async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x")  # the SDK's default: 2 retries
        with pytest.raises(openai.BadRequestError) as info:
            await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}],
                                                 stream=True)
        assert info.value.code == "context_length_exceeded" and info.value.param == "messages"
        with pytest.raises(openai.InternalServerError):  # a 401 upstream: not retried by the SDK either
            refusing(upstream, *CASES["401"])
            await client.responses.create(model=MODEL, input="hi")
    assert len(upstream.requests) == 2
