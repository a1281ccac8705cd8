"""``api_server.approvals``: an API client cannot be asked, so a tool under ``tools.approval.require`` is
denied by default (the model hears "denied by the user"), or runs with ``approvals: allow``."""

from __future__ import annotations

import openai
import pytest

from api_helpers import MODEL, gateway_config, running_gateway

REQUIRE = {"tools": {"approval": {"require": ["calc*"]}}}
CALL = [{"role": "user", "content": 'tool: calculate {"expression": "6 * 7"}'}]


@pytest.mark.parametrize("api, expected, absent", [
    ({}, "denied by the user", "returned: 42"),
    ({"approvals": "allow"}, "returned: 42", "denied"),
])
async def test_a_tool_that_needs_approval_in_an_api_turn(api, expected, absent):
    async with running_gateway(gateway_config(REQUIRE, api=api)) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
        reply = await client.chat.completions.create(model=MODEL, messages=CALL)
        streamed = await client.chat.completions.create(model=MODEL, messages=CALL, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in streamed if c.choices])
    for content in (reply.choices[0].message.content or "", text):
        assert expected in content and absent not in content
