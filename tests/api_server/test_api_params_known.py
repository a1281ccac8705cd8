"""Unknown top-level parameters are refused as OpenAI refuses them; every parameter OpenAI has is still taken.

(issue 34: ``{"foo": 1}`` was a silent 200.) The known sets are checked against the ``openai`` SDK's own
request types, so a parameter OpenAI adds shows up here as a failing test, not as a silent drop.
"""

from __future__ import annotations

import json

import pytest
from openai.types.chat import completion_create_params
from openai.types.responses import response_create_params

from api_helpers import MODEL, gateway_config, post_raw, running_gateway
from hermes_gateway._core.api_server.params import CHAT_FIELDS, RESPONSES_FIELDS

BODIES = {"/v1/chat/completions": {"model": MODEL, "messages": [{"role": "user", "content": "echo: hi"}]},
          "/v1/responses": {"model": MODEL, "input": "echo: hi"}}


def sdk_fields(params: type) -> frozenset[str]:
    keys: set[str] = set()
    for variant in (params.CompletionCreateParamsStreaming, params.CompletionCreateParamsNonStreaming) \
            if params is completion_create_params else \
            (params.ResponseCreateParamsStreaming, params.ResponseCreateParamsNonStreaming):
        keys |= variant.__required_keys__ | variant.__optional_keys__
    return frozenset(keys)


def test_every_parameter_of_the_sdk_is_known():
    assert sdk_fields(completion_create_params) <= CHAT_FIELDS, sdk_fields(completion_create_params) - CHAT_FIELDS
    assert sdk_fields(response_create_params) <= RESPONSES_FIELDS, \
        sdk_fields(response_create_params) - RESPONSES_FIELDS


@pytest.mark.parametrize("path", list(BODIES))
async def test_an_unknown_parameter_is_a_400_naming_it(gateway, path):
    for stream in (False, True):
        status, headers, raw = await post_raw(f"{gateway.url}{path}", {**BODIES[path], "foo": 1, "stream": stream})
        assert status == 400 and headers["Content-Type"].startswith("application/json")
        error = json.loads(raw)["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["param"] == "foo" and error["type"] == "invalid_request_error" and "foo" in error["message"]


@pytest.mark.parametrize("path", list(BODIES))
async def test_every_sdk_parameter_is_not_refused_as_unknown(gateway, path):
    """Each parameter of the SDK's types, sent as null (OpenAI's "not set"), is not an unknown parameter."""
    fields = sdk_fields(completion_create_params if "chat" in path else response_create_params)
    for name in sorted(fields - {"model", "messages", "input"}):
        status, _, raw = await post_raw(f"{gateway.url}{path}", {**BODIES[path], name: None})
        assert status == 200 or json.loads(raw)["error"]["code"] != "unknown_parameter", (name, raw)


@pytest.mark.parametrize("path", list(BODIES))
async def test_extra_params_pass_a_vendor_field_to_the_upstream(upstream, path):
    upstream.reply = lambda body: "ok"
    config = gateway_config(model=upstream.model_config(), api={"extra_params": ["top_k", "repetition_penalty"]})
    async with running_gateway(config) as gw:
        status, _, raw = await post_raw(f"{gw.url}{path}", {**BODIES[path], "top_k": 40, "repetition_penalty": 1.1})
        assert status == 200, raw
        status, _, raw = await post_raw(f"{gw.url}{path}", {**BODIES[path], "min_p": 0.1})
        assert status == 400 and json.loads(raw)["error"]["param"] == "min_p"
    (request,) = upstream.requests
    assert request["top_k"] == 40 and request["repetition_penalty"] == 1.1
