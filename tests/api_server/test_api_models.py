"""Clients that hard-code a model name: the configured model's (and fallbacks') names are model ids too.

Through the real openai SDK against the running gateway, whose agent talks
to the demo model served over real HTTP as if it were ``gpt-4o-mini``.
"""

from __future__ import annotations

from typing import AsyncIterator

import openai
import pytest

from api_helpers import MODEL, gateway_config, running_gateway
from hermes_gateway._core.demo.server import serve


@pytest.fixture
async def client() -> AsyncIterator[openai.AsyncOpenAI]:
    async with serve(tokens_per_second=0) as upstream_url:
        config = gateway_config(model={"base_url": upstream_url, "name": "gpt-4o-mini",
                                       "fallback": [{"base_url": upstream_url, "name": "llama3.1"}, "demo"]})
        async with running_gateway(config) as gateway:
            sdk = openai.AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key="unused", max_retries=0)
            yield sdk
            await sdk.close()


async def test_models_lists_the_gateway_name_then_the_configured_models(client):
    assert [m.id async for m in client.models.list()] == [MODEL, "gpt-4o-mini", "llama3.1"]
    assert (await client.models.retrieve("llama3.1")).id == "llama3.1"


@pytest.mark.parametrize("model", ["gpt-4o-mini", "llama3.1", MODEL])
async def test_a_client_asking_for_a_configured_model_name_is_answered(client, model):
    reply = await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "echo: ok"}])
    assert reply.model == model
    assert reply.choices[0].message.content == "ok"
    stream = await client.responses.create(model=model, input="echo: streamed", stream=True)
    events = [event async for event in stream]
    assert events[-1].type == "response.completed" and events[-1].response.model == model
    assert events[-1].response.output_text == "streamed"


async def test_an_unknown_model_name_is_a_404_listing_the_accepted_ones(client):
    with pytest.raises(openai.NotFoundError) as info:
        await client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "hi"}])
    assert "The model 'gpt-5' does not exist. Available: hermes-gateway, gpt-4o-mini, llama3.1" in str(info.value)
