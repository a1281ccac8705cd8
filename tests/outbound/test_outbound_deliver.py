"""A schedule's prompt runs through the agent with the chat's persona and model; its text goes as is."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "operator"))

from operator_helpers import config, gateway, last_line, reference, say, system_prompt  # noqa: E402
from scripted_upstream import ScriptedUpstream, text_stream  # noqa: E402

from hermes_gateway._core.outbound.deliver import deliver_schedule  # noqa: E402
from hermes_gateway._core.settings.outbound import Schedule  # noqa: E402


def prompt_schedule(chat: str, conversation: str) -> Schedule:
    return Schedule(name="digest", platform="reference", chat=chat, every=3600.0, prompt="Summarise the day",
                    conversation=conversation)


async def test_a_prompt_runs_with_the_chats_persona_and_lands_in_its_conversation():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("Here is your digest.")) as up:
        async with gateway(ref, config(up.url)) as gw:
            await say(gw, "a", "/persona pirate")
            report = await deliver_schedule(gw._gateway.turn_parts, prompt_schedule("a", "chat"))
            history = await gw.history("reference", "a")
    assert report.delivered and last_line(ref, "a") == "Here is your digest."
    assert [system_prompt(r.body) for r in up.requests] == ["You are a pirate. Arr."]
    assert up.requests[0].body["messages"][-1] == {"role": "user", "content": "Summarise the day"}
    assert [m["content"] for m in history][-2:] == ["Summarise the day", "Here is your digest."]


async def test_a_fresh_prompt_reads_no_history_and_records_nothing():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("Digest.")) as up:
        async with gateway(ref, config(up.url)) as gw:
            await say(gw, "b", "remember the word banana")
            await deliver_schedule(gw._gateway.turn_parts, prompt_schedule("b", "fresh"))
            history = await gw.history("reference", "b")
    digest_request = up.requests[-1].body
    assert [m["role"] for m in digest_request["messages"]] == ["system", "user"]
    assert system_prompt(digest_request) == "You are the default assistant."
    assert "Summarise the day" not in [m["content"] for m in history]


async def test_a_text_schedule_to_home_goes_to_the_platforms_home_chat():
    ref = reference()
    data = config("http://127.0.0.1:9/v1")
    data["platforms"] = {"reference": {"enabled": True, "home_chat": "hq"}}
    async with gateway(ref, data) as gw:
        schedule = Schedule(name="hello", platform="reference", chat="home", every=60.0, text="Good morning, team")
        report = await deliver_schedule(gw._gateway.turn_parts, schedule)
    assert report.delivered and ref.chat("hq").screen == ["Good morning, team"]
