"""Auth over real HTTP: no key, wrong key, right key; /health and /metrics stay open for probes."""

from __future__ import annotations

import aiohttp
import openai
import pytest

from api_helpers import MODEL, gateway_config, running_gateway

KEY = "sk-gateway-test-key"


@pytest.fixture
async def locked():
    async with running_gateway(gateway_config(api={"api_keys": [KEY, "sk-other"]})) as gw:
        yield gw


@pytest.mark.parametrize("path, method", [("/v1/models", "GET"), ("/v1/chat/completions", "POST"),
                                          ("/v1/responses", "POST"), ("/v1/responses/resp_x", "GET")])
@pytest.mark.parametrize("header", [None, "Bearer wrong-key", f"Basic {KEY}", f"Bearer {KEY}x"])
async def test_every_v1_route_needs_a_right_key(locked, path, method, header):
    headers = {"Authorization": header} if header else {}
    async with aiohttp.ClientSession() as s:
        async with s.request(method, f"{locked.url}{path}", json={}, headers=headers) as r:
            assert r.status == 401
            error = (await r.json())["error"]
            assert error["code"] == "invalid_api_key" and error["type"] == "invalid_request_error"
            assert KEY not in error["message"] and "wrong-key" not in error["message"]
            assert r.headers["WWW-Authenticate"].startswith("Bearer")


async def test_right_key_is_served_and_probes_need_none(locked):
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{locked.url}/v1/models", headers={"Authorization": f"Bearer {KEY}"}) as r:
            assert r.status == 200
            assert [m["id"] for m in (await r.json())["data"]] == [MODEL]
        for probe in ("/health", "/metrics"):
            async with s.get(f"{locked.url}{probe}") as r:
                assert r.status == 200


async def test_sdk_with_wrong_key_raises_authentication_error_and_right_key_works(locked):
    bad = openai.AsyncOpenAI(base_url=f"{locked.url}/v1", api_key="nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        await bad.models.list()
    good = openai.AsyncOpenAI(base_url=f"{locked.url}/v1", api_key="sk-other", max_retries=0)
    assert [m.id async for m in good.models.list()] == [MODEL]


async def test_stored_responses_are_private_to_the_key_that_made_them(locked):
    mine = openai.AsyncOpenAI(base_url=f"{locked.url}/v1", api_key=KEY, max_retries=0)
    theirs = openai.AsyncOpenAI(base_url=f"{locked.url}/v1", api_key="sk-other", max_retries=0)
    first = await mine.responses.create(model=MODEL, input="echo: my secret plan")
    with pytest.raises(openai.NotFoundError):
        await theirs.responses.retrieve(first.id)
    with pytest.raises(openai.NotFoundError):
        await theirs.responses.create(model=MODEL, input="echo: go on", previous_response_id=first.id)
    with pytest.raises(openai.NotFoundError):
        await theirs.responses.delete(first.id)
    follow = await mine.responses.create(model=MODEL, input="echo: go on", previous_response_id=first.id)
    assert follow.output_text == "go on"
    assert (await mine.responses.retrieve(first.id)).output_text == "my secret plan"


async def test_cors_is_off_by_default(gateway):
    async with aiohttp.ClientSession() as s:
        async with s.options(f"{gateway.url}/v1/chat/completions",
                             headers={"Origin": "https://chat.example", "Access-Control-Request-Method": "POST"}) as r:
            assert r.status == 403 and "Access-Control-Allow-Origin" not in r.headers
            assert (await r.json())["error"]["code"] == "origin_not_allowed"
        async with s.get(f"{gateway.url}/v1/models", headers={"Origin": "https://chat.example"}) as r:
            assert r.status == 403 and "Access-Control-Allow-Origin" not in r.headers


async def test_cors_for_listed_origins_preflight_without_key_and_streams_carry_the_header():
    cfg = gateway_config(api={"api_keys": [KEY], "cors_origins": ["https://chat.example"]})
    async with running_gateway(cfg) as gw:
        async with aiohttp.ClientSession() as s:
            async with s.options(f"{gw.url}/v1/chat/completions", headers={
                    "Origin": "https://chat.example", "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "authorization, content-type"}) as r:
                assert r.status == 204
                assert r.headers["Access-Control-Allow-Origin"] == "https://chat.example"
                assert "authorization" in r.headers["Access-Control-Allow-Headers"]
            async with s.options(f"{gw.url}/v1/chat/completions", headers={"Origin": "https://evil.example"}) as r:
                assert r.status == 403 and "Access-Control-Allow-Origin" not in r.headers
            body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "echo: hi"}]}
            headers = {"Origin": "https://chat.example", "Authorization": f"Bearer {KEY}"}
            async with s.post(f"{gw.url}/v1/chat/completions", json=body, headers=headers) as r:
                assert r.headers["Access-Control-Allow-Origin"] == "https://chat.example"
                assert r.headers["Content-Type"].startswith("text/event-stream")
                assert (await r.read()).endswith(b"data: [DONE]\n\n")
            async with s.post(f"{gw.url}/v1/chat/completions", json=body, headers={"Origin": "https://chat.example"}) as r:
                assert r.status == 401  # CORS never replaces the key
                assert r.headers["Access-Control-Allow-Origin"] == "https://chat.example"
