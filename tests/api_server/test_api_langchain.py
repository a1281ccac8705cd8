"""LangChain (``langchain-openai``) against the gateway: tools, structured output, streaming.

``ChatOpenAI.bind_tools`` gets the tool call the demo model makes (name and
arguments from the tool's schema), ``with_structured_output`` (OpenAI's
``json_schema`` response format) comes back as the Pydantic object, and
``astream`` yields the answer in several pieces. Marked ``frameworks``.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

pytest.importorskip("langchain_openai")
from langchain_core.messages import HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402

from api_helpers import MODEL, gateway_config, running_gateway  # noqa: E402

pytestmark = pytest.mark.frameworks


class City(BaseModel):
    name: str
    population: int


@tool
def population(city: str) -> str:
    """How many people live in a city."""
    return f"about 700000 in {city}"


async def test_langchain_tools_structured_output_and_streaming():
    async with running_gateway(gateway_config()) as gw:
        llm = ChatOpenAI(model=MODEL, base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)

        # a tool call, run by the client, answered with its result
        with_tools = llm.bind_tools([population])
        ask = HumanMessage("Use population for Oslo")
        first = await with_tools.ainvoke([ask])
        assert [call["name"] for call in first.tool_calls] == ["population"]
        call = first.tool_calls[0]
        assert set(call["args"]) == {"city"}
        result = population.invoke(call["args"])
        final = await with_tools.ainvoke([ask, first, ToolMessage(result, tool_call_id=call["id"])])
        assert result in final.content

        # the same tool call, streamed: the argument pieces add up to the call
        pieces = [chunk async for chunk in with_tools.astream([ask])]
        merged = pieces[0]
        for chunk in pieces[1:]:
            merged += chunk
        assert merged.tool_calls[0]["name"] == "population" and set(merged.tool_calls[0]["args"]) == {"city"}
        argument_pieces = [c for chunk in pieces for c in chunk.tool_call_chunks if c.get("args")]
        assert len(argument_pieces) >= 3  # the arguments streamed as written, not in one piece at the end

        # structured output
        city = await llm.with_structured_output(City).ainvoke("Oslo")
        assert isinstance(city, City)

        # a plain answer, streamed in more than one piece
        texts = [chunk.content async for chunk in llm.astream("echo: one two three four five")]
        assert "".join(texts) == "one two three four five"
        assert len([t for t in texts if t]) > 1
