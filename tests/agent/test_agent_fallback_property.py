"""Property: whatever way a stream breaks, a person ends up seeing the reply exactly once.

Random chunkings of a random reply, broken at a random point in a random
way (dropped connection, malformed JSON, error object, silent end, stall),
followed by a non-streaming retry that returns the whole reply. What a
consumer honouring StreamReset shows must equal the final reply, and text
shown before the failure must never be kept alongside the retry.
"""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings, strategies as st

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.upstream import STREAM_SUPPORT
from hermes_gateway._core.events import StreamReset, TextDelta, TurnEnd

from scripted_upstream import ScriptedUpstream, chunk, completion, model_config, text_stream

FAILURES = {
    "drop": [("drop",)],
    "malformed": [("raw", b"data: {\"choices\": [\n\n")],
    "error": [("data", {"error": {"message": "overloaded", "type": "server_error"}})],
    "silent end": [],
    "stall": [("sleep", 5)],
    "none": None,
}

words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=6)


def shown(events: list) -> str:
    text = ""
    for event in events:
        if isinstance(event, StreamReset):
            text = ""
        elif isinstance(event, TextDelta):
            text += event.text
    return text


async def scenario(pieces: list[str], break_at: int, failure: str) -> list:
    STREAM_SUPPORT.forget()
    reply = "".join(pieces)
    async with ScriptedUpstream() as fake:
        if FAILURES[failure] is None:
            fake.add(*text_stream(*pieces))
        else:
            fake.add(("data", chunk(role="assistant")), *[("data", chunk(p)) for p in pieces[:break_at]],
                     *FAILURES[failure])
            fake.add(("json", completion(reply)))
        config = model_config(fake.url, timeouts={"first_token": 2, "stall": 0.2})  # generous: CI is noisy
        agent = AIAgent.from_config(config, tools=[])
        events = [e async for e in agent.astream("go")]
        await agent.aclose()
        return events


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(words, min_size=1, max_size=12), data=st.data(),
       failure=st.sampled_from(sorted(FAILURES)))
def test_the_reply_is_shown_exactly_once_whatever_breaks(pieces: list[str], data, failure: str) -> None:
    break_at = data.draw(st.integers(0, len(pieces)))
    events = asyncio.run(scenario(pieces, break_at, failure))
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.error is None
    assert shown(events) == end.raw == "".join(pieces)
    resets = sum(isinstance(e, StreamReset) for e in events)
    partial = "".join(pieces[:break_at])
    assert resets == (1 if failure != "none" and partial else 0)
