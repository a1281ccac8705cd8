"""pydantic-ai against the gateway (optional: runs only where ``pydantic-ai-slim[openai]`` is installed).

A tool the agent registers is called through the gateway and its result
answered with; ``output_type`` (a tool-call based structured output) comes
back as the model object. Marked ``frameworks``: not in the test extra.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

pydantic_ai = pytest.importorskip("pydantic_ai")
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ToolCallPart  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

from api_helpers import MODEL, gateway_config, running_gateway  # noqa: E402

pytestmark = pytest.mark.frameworks


class City(BaseModel):
    name: str
    population: int


async def test_pydantic_ai_tool_and_structured_output():
    async with running_gateway(gateway_config()) as gw:
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=f"{gw.url}/v1", api_key="unused"))
        calls: list[str] = []
        agent = Agent(model)

        @agent.tool_plain
        def population(city: str) -> str:
            """How many people live in a city."""
            calls.append(city)
            return "about 700000"

        result = await agent.run("Use population for Oslo")
        assert calls and "about 700000" in result.output
        structured = await Agent(model, output_type=City).run("Oslo")
        assert isinstance(structured.output, City)


async def test_pydantic_ai_streams_text_and_structured_output():
    """(issue 34) ``run_stream``: the text in several pieces, the output object growing as its arguments stream."""
    async with running_gateway(gateway_config()) as gw:
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=f"{gw.url}/v1", api_key="unused"))
        async with Agent(model).run_stream("echo: one two three four five") as run:
            pieces = [piece async for piece in run.stream_text(delta=True, debounce_by=None)]
        assert "".join(pieces) == "one two three four five" and len(pieces) > 1

        async with Agent(model, output_type=City).run_stream("Oslo") as run:
            arguments_seen = {part.args_as_json_str() async for response in run.stream_response(debounce_by=None)
                              for part in response.parts if isinstance(part, ToolCallPart)}
            final = await run.get_output()
        assert isinstance(final, City)
        assert len(arguments_seen) >= 3, arguments_seen  # the output's JSON grew as it streamed, not all at the end
