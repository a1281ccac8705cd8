"""The OpenAI Agents SDK against a running gateway with the demo model: client tools and structured output.

An agent with a ``@function_tool`` calls it through the gateway (the demo
model asks for it), runs it on the client side, sends the result back, and
answers with it: through Chat Completions and through Responses, streamed
and not. An agent with an ``output_type`` gets the schema's object back.
"""

from __future__ import annotations

import json
from typing import AsyncIterator

import openai
import pytest
from pydantic import BaseModel

agents = pytest.importorskip("agents")  # openai-agents, in the test extra
from agents import (Agent, ModelSettings, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner,  # noqa: E402
                    function_tool, set_tracing_disabled)

from api_helpers import MODEL, gateway_config, running_gateway  # noqa: E402

set_tracing_disabled(True)  # no traces to OpenAI's servers from a test

CALLS: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    CALLS.append(city)
    return f"sunny and 21 degrees in {city}"


class Forecast(BaseModel):
    city: str
    degrees: int
    sunny: bool


@pytest.fixture
async def client() -> AsyncIterator[openai.AsyncOpenAI]:
    async with running_gateway(gateway_config()) as gw:
        yield openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)


def model_for(api: str, client: openai.AsyncOpenAI):
    if api == "chat":
        return OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
    return OpenAIResponsesModel(model=MODEL, openai_client=client)


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_an_agent_calls_its_function_tool_and_answers_with_the_result(client, api, streamed):
    CALLS.clear()
    agent = Agent(name="weather", instructions="Answer about the weather.", tools=[get_weather],
                  model=model_for(api, client))
    prompt = "Use get_weather for Paris, please."
    if streamed:
        result = Runner.run_streamed(agent, prompt)
        kinds = [event.type async for event in result.stream_events()]
        assert "raw_response_event" in kinds
    else:
        result = await Runner.run(agent, prompt)
    assert len(CALLS) == 1  # the client's tool ran on the client, once
    assert "sunny and 21 degrees in" in result.final_output
    assert "The tool get_weather returned" in result.final_output


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_tool_choice_required_makes_the_model_call_the_tool(client, api):
    CALLS.clear()
    agent = Agent(name="weather", tools=[get_weather], model=model_for(api, client),
                  model_settings=ModelSettings(tool_choice="required"))
    result = await Runner.run(agent, "How is it outside?")
    assert len(CALLS) == 1
    assert "sunny" in result.final_output


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_an_agent_with_an_output_type_gets_the_schemas_object(client, api, streamed):
    agent = Agent(name="forecaster", output_type=Forecast, model=model_for(api, client))
    if streamed:
        result = Runner.run_streamed(agent, "Forecast for Oslo")
        async for _ in result.stream_events():
            pass
    else:
        result = await Runner.run(agent, "Forecast for Oslo")
    assert isinstance(result.final_output, Forecast)


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_tool_then_structured_output(client, api):
    CALLS.clear()
    agent = Agent(name="weather", tools=[get_weather], output_type=Forecast, model=model_for(api, client))
    result = await Runner.run(agent, "Use get_weather for Rome, then fill in the forecast.")
    assert CALLS and isinstance(result.final_output, Forecast)
    assert "sunny" in result.final_output.city  # the demo fills strings with the tool's result


async def test_the_tool_call_arguments_satisfy_the_tools_schema(client):
    completion = await client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "call lookup"}],
        tools=[{"type": "function", "function": {"name": "lookup", "parameters": {
            "type": "object", "required": ["count", "tags", "mode"], "additionalProperties": False,
            "properties": {"count": {"type": "integer", "minimum": 3}, "tags": {"type": "array", "minItems": 2,
                           "items": {"type": "string"}}, "mode": {"enum": ["fast", "slow"]}}}}}])
    call = completion.choices[0].message.tool_calls[0]
    arguments = json.loads(call.function.arguments)
    assert arguments["count"] >= 3 and len(arguments["tags"]) == 2 and arguments["mode"] in ("fast", "slow")
    assert completion.choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_an_agent_streams_through_the_gateways_tool_progress(api):
    """(issue 34) With progress on for every request, the gateway's own tool runs and the agent still finishes."""
    async with running_gateway(gateway_config(api={"tool_progress_events": True})) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
        agent = Agent(name="maths", instructions="Answer.", model=model_for(api, client))
        result = Runner.run_streamed(agent, 'tool: calculate {"expression": "6 * 7"}')
        async for _ in result.stream_events():
            pass
        assert "42" in str(result.final_output)
        # and the openai SDK's own stream helpers
        ask = 'tool: calculate {"expression": "6 * 7"}'
        async with client.responses.stream(model=MODEL, input=ask) as stream:
            assert "42" in (await stream.get_final_response()).output_text
        async with client.chat.completions.stream(model=MODEL, messages=[{"role": "user", "content": ask}]) as s:
            assert "42" in (await s.get_final_completion()).choices[0].message.content
