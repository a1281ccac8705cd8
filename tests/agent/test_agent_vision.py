"""A fallback that cannot look at images gets stand-ins for them; one that can gets the images."""

from __future__ import annotations

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.vision import STAND_IN, without_images
from hermes_gateway._core.config import parse_config

from scripted_upstream import ScriptedUpstream, completion

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}}
CONTENT = [{"type": "text", "text": "what is this?"}, IMAGE]


def agent_for(url: str, fallback_vision: bool | None) -> AIAgent:
    fallback = {"base_url": url, "name": "text-only"}
    if fallback_vision is not None:
        fallback["vision"] = fallback_vision
    config = parse_config({"model": {"base_url": url, "name": "sees", "api_key": "k", "fallback": [fallback],
                                     "timeouts": {"first_token": 5, "stall": 5}}})
    return AIAgent.from_config(config, tools=[])


async def test_a_fallback_without_vision_is_sent_stand_ins(fake: ScriptedUpstream) -> None:
    fake.add(("status", 400, {"error": {"message": "bad", "type": "invalid_request_error"}}))
    fake.add(("json", completion("A picture, I am told.")))
    agent = agent_for(fake.url, fallback_vision=False)
    end = await agent.arun_conversation(CONTENT)  # type: ignore[arg-type]
    await agent.aclose()
    assert end.reply == "A picture, I am told."
    primary, fallback = fake.requests[0].body, fake.requests[-1].body
    assert (primary["model"], fallback["model"]) == ("sees", "text-only")
    assert primary["messages"][-1]["content"][1] == IMAGE
    assert fallback["messages"][-1]["content"] == [{"type": "text", "text": "what is this?"}, STAND_IN]


async def test_a_fallback_that_says_nothing_sees_like_the_model(fake: ScriptedUpstream) -> None:
    fake.add(("status", 400, {"error": {"message": "bad", "type": "invalid_request_error"}}))
    fake.add(("json", completion("ok")))
    agent = agent_for(fake.url, fallback_vision=None)
    await agent.arun_conversation(CONTENT)  # type: ignore[arg-type]
    await agent.aclose()
    assert fake.requests[-1].body["messages"][-1]["content"][1] == IMAGE


def test_messages_without_images_are_left_as_they_are() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "user", "content": [{"type": "text", "text": "x"}]}]
    assert without_images(messages) is messages
    assert without_images([{"role": "user", "content": [{"type": "input_image", "image_url": "u"}]}]) == \
        [{"role": "user", "content": [STAND_IN]}]
