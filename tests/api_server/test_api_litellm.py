"""litellm against the gateway (as an ``openai/`` model at ``api_base``): tools, structured output, streaming.

``acompletion(stream=True, tools=...)`` gets the demo model's tool call in
several argument pieces that ``stream_chunk_builder`` assembles into the
call; the tool's result sent back is answered with; a Pydantic
``response_format`` comes back as JSON that validates. Marked ``frameworks``.
"""

from __future__ import annotations

import json
import os

import pytest
from pydantic import BaseModel

# litellm fetches its model price list from GitHub at import unless told to use the bundled copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = pytest.importorskip("litellm")

from api_helpers import MODEL, gateway_config, running_gateway  # noqa: E402

pytestmark = [pytest.mark.frameworks,  # litellm's own pydantic models warn at import
              pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")]

TOOLS = [{"type": "function", "function": {
    "name": "population", "description": "How many people live in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


class City(BaseModel):
    name: str
    population: int


async def test_litellm_streamed_tool_call_structured_output_and_text():
    async with running_gateway(gateway_config()) as gw:
        where = {"model": f"openai/{MODEL}", "api_base": f"{gw.url}/v1", "api_key": "unused", "num_retries": 0}
        ask = [{"role": "user", "content": "Use population for Oslo"}]

        stream = await litellm.acompletion(**where, messages=ask, tools=TOOLS, stream=True)
        chunks = [chunk async for chunk in stream]
        argument_pieces = [call.function.arguments for c in chunks if c.choices and c.choices[0].delta.tool_calls
                           for call in c.choices[0].delta.tool_calls if call.function.arguments]
        assert len(argument_pieces) >= 3  # the arguments streamed as written, not in one piece at the end
        message = litellm.stream_chunk_builder(chunks, messages=ask).choices[0].message
        call = message.tool_calls[0]
        assert call.function.name == "population" and set(json.loads(call.function.arguments)) == {"city"}

        answer = await litellm.acompletion(**where, tools=TOOLS, messages=[
            *ask, message.model_dump(), {"role": "tool", "tool_call_id": call.id, "content": "about 700000"}])
        assert "about 700000" in answer.choices[0].message.content

        structured = await litellm.acompletion(**where, messages=[{"role": "user", "content": "Oslo"}],
                                               response_format=City)
        assert isinstance(City.model_validate_json(structured.choices[0].message.content), City)

        stream = await litellm.acompletion(**where, stream=True,
                                           messages=[{"role": "user", "content": "echo: one two three four five"}])
        texts = [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]
        assert "".join(texts) == "one two three four five" and len(texts) > 1
