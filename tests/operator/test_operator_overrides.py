"""``overrides:``: one group on its own model and tools, a chat without previews, a chat where a new message
interrupts; the most specific entry wins, later entries break ties. Checked at the upstream and on screen."""

from __future__ import annotations

import asyncio

from hermes_gateway import Incoming
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.operator.overrides import kind_word, overridden
from hermes_gateway.testing import TestGateway
from operator_helpers import PERSON, config, gateway, reference, say
from scripted_upstream import ScriptedUpstream, text_stream

OVERRIDES = [
    {"match": {"platform": "telegram"}, "model": "big", "system_prompt": "Telegram-wide."},
    {"match": {"chat_kind": "group"}, "tools": {"deny": ["calculate"]}},
    {"match": {"platform": "telegram", "chat": "-100"}, "model": "small", "streaming": {"enabled": False}},
    {"match": {"chat": "-100"}, "system_prompt": "Later, same rank as nothing: chat alone is less specific."},
    {"match": {"user": "7"}, "conversation": {"busy": "interrupt"}},
    {"match": {"platform": "telegram", "chat": "-100"}, "system_prompt": "Later tie wins."},
]
CONFIG = parse_config({
    "model": {"name": "small"},
    "models": {"big": {"name": "big-model"}},
    "overrides": OVERRIDES,
}, source="cfg.yaml", env={})


def test_the_most_specific_match_wins_setting_by_setting_and_later_entries_break_ties():
    got = overridden(CONFIG, "telegram", "-100", user="5", chat_kind="supergroup")
    assert got.values == {"model": "small", "system_prompt": "Later tie wins.", "tools_deny": ("calculate",),
                          "streaming.enabled": False}
    assert got.origins["model"] == "cfg.yaml (overrides[2])" and got.origins["system_prompt"] == "cfg.yaml (overrides[5])"
    assert got.origins["tools_deny"] == "cfg.yaml (overrides[1])"
    private = overridden(CONFIG, "telegram", "42", user="7", chat_kind="private")
    assert private.values == {"model": "big", "system_prompt": "Telegram-wide.", "busy": "interrupt"}
    assert overridden(CONFIG, "slack", "C1", user="5", chat_kind="im").values == {}
    assert overridden(CONFIG, "slack", "-100").values["system_prompt"].startswith("Later, same rank")


def test_chat_kinds_are_private_or_group_whatever_the_platform_calls_them():
    assert [kind_word(k) for k in ("private", "dm", "im", "group", "supergroup", "channel", None)] == [
        "private", "private", "private", "group", "group", "group", None]


async def test_an_override_for_one_group_uses_its_model_and_tools_while_a_private_chat_does_not():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        data = config(up.url, overrides=[{"match": {"platform": "reference", "chat": "team"}, "model": "big",
                                          "tools": {"allow": ["qr_*", "current_time"], "deny": ["current_*"]}}])
        async with gateway(ref, data) as gw:
            await say(gw, "team", "hello", chat_kind="group")
            await say(gw, "dm", "hello")
    team, private = (r.body for r in up.requests)
    assert team["model"] == "big-model" and private["model"] == "small-model"
    assert [t["function"]["name"] for t in team["tools"]] == ["qr_code"]
    assert sorted(t["function"]["name"] for t in private["tools"]) == ["calculate", "current_time", "qr_code"]


async def test_an_override_can_turn_previews_off_for_one_chat():
    ref = reference()
    data = {"model": {"demo": {"tokens_per_second": 40}}, "platforms": {"reference": {"enabled": True}},
            "streaming": {"reference": {"enabled": True, "edit_interval": 0.05, "min_tokens": 1}},
            "overrides": [{"match": {"chat": "quiet"}, "streaming": {"enabled": False}}]}
    words = " ".join(f"w{i}" for i in range(30))
    async with TestGateway(data, ref) as gw:
        await say(gw, "loud", f"echo: {words}")
        await say(gw, "quiet", f"echo: {words}")
    assert ref.chat("loud").screen == [words] == ref.chat("quiet").screen
    assert len(ref.chat("loud").messages[0].history) > 1        # previews, then the final text
    assert ref.chat("quiet").messages[0].history == [words]     # only the final text


async def test_an_override_can_make_one_chat_interrupt_instead_of_queue():
    ref = reference()
    data = {"model": {"demo": {"tokens_per_second": 20}}, "platforms": {"reference": {"enabled": True}},
            "overrides": [{"match": {"chat": "hasty"}, "conversation": {"busy": "interrupt"}}]}
    long = " ".join(f"w{i}" for i in range(80))
    async with TestGateway(data, ref) as gw:
        results = {}
        for chat in ("patient", "hasty"):
            first = gw.receive(Incoming("reference", chat, f"echo: {long}", sender_id=PERSON, update_id=f"{chat}1"))
            await asyncio.sleep(0.3)
            second = gw.receive(Incoming("reference", chat, "echo: second", sender_id=PERSON, update_id=f"{chat}2"))
            results[chat] = await asyncio.gather(first, second)
    patient_first, _ = results["patient"]
    hasty_first, _ = results["hasty"]
    assert not patient_first.interrupted and ref.chat("patient").screen == [long, "second"]
    assert hasty_first.interrupted and ref.chat("hasty").screen[-1] == "second"
    assert ref.chat("hasty").screen[0] != long
