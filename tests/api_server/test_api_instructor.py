"""instructor against the gateway: a Pydantic ``response_model`` in tools and JSON-schema modes, streamed partials.

instructor patches the ``openai`` SDK: in TOOLS mode it forces a named tool
call and validates its arguments, in JSON_SCHEMA mode it sends OpenAI's
``json_schema`` response format; ``create_partial`` streams the tool call's
arguments and yields the object as it grows. Marked ``frameworks``.
"""

from __future__ import annotations

import openai
import pytest
from pydantic import BaseModel

instructor = pytest.importorskip("instructor")

from api_helpers import MODEL, gateway_config, running_gateway  # noqa: E402

pytestmark = pytest.mark.frameworks


class City(BaseModel):
    name: str
    population: int


async def test_instructor_response_model_tools_json_and_partial_stream():
    async with running_gateway(gateway_config()) as gw:
        sdk = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
        ask = [{"role": "user", "content": "Oslo"}]

        tools_client = instructor.from_openai(sdk, mode=instructor.Mode.TOOLS)
        city, completion = await tools_client.chat.completions.create_with_completion(
            model=MODEL, messages=ask, response_model=City, max_retries=0)
        assert isinstance(city, City)
        assert completion.choices[0].message.tool_calls[0].function.name == "City"

        schema_client = instructor.from_openai(sdk, mode=instructor.Mode.JSON_SCHEMA)
        assert isinstance(await schema_client.chat.completions.create(
            model=MODEL, messages=ask, response_model=City, max_retries=0), City)

        partials = [p async for p in tools_client.chat.completions.create_partial(
            model=MODEL, messages=ask, response_model=City, max_retries=0)]
        # the object grew as its arguments streamed in: seen half-filled before it was complete
        assert any(p.name and p.population is None for p in partials), partials
        assert isinstance(City.model_validate(partials[-1].model_dump()), City)
