"""Bad input over real HTTP: a 4xx in OpenAI's error shape before any stream, never a 500."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from api_helpers import MODEL, api, gateway_config, metric, post_raw, running_gateway

USER = [{"role": "user", "content": "echo: hi"}]


def assert_openai_error(status: int, headers: dict, body: bytes, expected_status: int, param: str | None = "?"):
    assert status == expected_status, body
    assert headers["Content-Type"].startswith("application/json")
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"] and "Traceback" not in error["message"]
    if param != "?":
        assert error["param"] == param
    return error


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
@pytest.mark.parametrize("raw, param", [
    (b"{not json", None), (b"", None), (b"[1, 2]", None), (b'"text"', None), (b"\xff\xfe", None),
    (json.dumps({"messages": USER, "input": "x"}).encode(), "model"),
    (json.dumps({"model": "gpt-nope", "messages": USER, "input": "x"}).encode(), "model"),
    (json.dumps({"model": MODEL, "messages": USER, "input": "x", "stream": "true"}).encode(), "stream"),
])
async def test_common_bad_bodies(gateway, path, raw, param):
    status, headers, body = await post_raw(f"{gateway.url}{path}", raw)
    expected = 404 if b"gpt-nope" in raw else 400
    error = assert_openai_error(status, headers, body, expected, param)
    assert error["type"] == "invalid_request_error"


@pytest.mark.parametrize("body, param", [
    ({"model": MODEL}, "messages"),
    ({"model": MODEL, "messages": []}, "messages"),
    ({"model": MODEL, "messages": {"role": "user"}}, "messages"),
    ({"model": MODEL, "messages": [{"role": "user", "content": ""}]}, "messages[0].content"),
    ({"model": MODEL, "messages": [{"role": "user", "content": None}]}, "messages[0].content"),
    ({"model": MODEL, "messages": [{"content": "hi"}]}, "messages[0].role"),
    ({"model": MODEL, "messages": USER, "stream": True, "stream_options": {"include_usage": "yes"}},
     "stream_options.include_usage"),
])
async def test_chat_bad_bodies_get_400_before_any_stream(gateway, body, param):
    body.setdefault("stream", True)
    status, headers, raw = await post_raw(f"{gateway.url}/v1/chat/completions", body)
    assert_openai_error(status, headers, raw, 400, param)
    assert "text/event-stream" not in headers["Content-Type"]


@pytest.mark.parametrize("body, status, param", [
    ({"model": MODEL}, 400, "input"),
    ({"model": MODEL, "input": ""}, 400, "input"),
    ({"model": MODEL, "input": {"text": "hi"}}, 400, "input"),
    ({"model": MODEL, "input": "hi", "previous_response_id": "resp_missing"}, 404, "previous_response_id"),
])
async def test_responses_bad_bodies(gateway, body, status, param):
    body.setdefault("stream", True)
    code, headers, raw = await post_raw(f"{gateway.url}/v1/responses", body)
    assert_openai_error(code, headers, raw, status, param)


async def test_oversized_body_is_413_with_the_limit_named():
    async with running_gateway(gateway_config(api={"max_body_bytes": 2000})) as gw:
        body = {"model": MODEL, "messages": [{"role": "user", "content": "x" * 5000}]}
        status, headers, raw = await post_raw(f"{gw.url}/v1/chat/completions", body)
        error = assert_openai_error(status, headers, raw, 413, None)
        assert "2000" in error["message"]
        # chunked upload (no Content-Length) is limited too
        async def chunks():
            yield json.dumps(body).encode()
        import aiohttp
        async with aiohttp.ClientSession() as s:
            async with s.post(f"{gw.url}/v1/responses", data=chunks(),
                              headers={"Content-Type": "application/json"}) as r:
                assert r.status == 413
                assert (await r.json())["error"]["code"] == "request_too_large"


async def test_unknown_endpoint_and_wrong_method_are_openai_shaped(gateway):
    import aiohttp
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{gateway.url}/v1/nothing-here") as r:
            assert r.status == 404 and (await r.json())["error"]["code"] == "unknown_url"
        async with s.get(f"{gateway.url}/v1/chat/completions") as r:
            assert r.status == 405 and (await r.json())["error"]["code"] == "method_not_allowed"
            assert r.headers["Allow"] == "POST"
        async with s.get(f"{gateway.url}/v1/models/gpt-nope") as r:
            assert r.status == 404 and (await r.json())["error"]["code"] == "model_not_found"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
bodies = st.fixed_dictionaries({}, optional={
    "model": st.sampled_from([MODEL, "other", 3, None]),
    "messages": json_values | st.lists(st.fixed_dictionaries(
        {}, optional={"role": st.sampled_from(["user", "assistant", "tool", "x", 1]), "content": json_values}),
        max_size=3),
    "input": json_values,
    "stream": json_values,
    "stream_options": json_values,
    "previous_response_id": json_values,
    "instructions": json_values,
    "temperature": json_values,
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies, path=st.sampled_from(["/v1/chat/completions", "/v1/responses"]))
async def test_no_body_produces_a_500(gateway, body, path):
    body["stream"] = False if body.get("stream") is True else body.get("stream")
    status, headers, raw = await post_raw(f"{gateway.url}{path}", body)
    assert status < 500, raw
    if status >= 400:
        assert set(json.loads(raw)["error"]) == {"message", "type", "param", "code"}


async def test_refusals_are_counted_in_metrics(gateway):
    await post_raw(f"{gateway.url}/v1/chat/completions", b"{")
    assert await metric(gateway, 'hermes_api_requests_total{route="chat_completions",status="400"}') == 1
    assert api(gateway).metrics.errors["http_400"] == 1
