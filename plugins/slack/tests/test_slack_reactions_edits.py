"""Status reactions and edited messages on the Slack emulator, through the whole gateway."""

from __future__ import annotations

from hermes_gateway.testing import TestGateway, eventually
from hermes_slack import plugin
from hermes_slack.emulator import SlackEmulator
from hermes_slack.reactions import slack_name
from slack_test_support import LIMITS, config

REACTIONS = {"received": "👀", "done": "👍", "failed": "😢"}
NOTE = "_✏️ Superseded by your edit._"


def gateway_with(api, **sections):
    return TestGateway({**config(api, tokens_per_second=10), **sections}, plugin, limits=LIMITS, shutdown_grace=0.5)


def test_status_emoji_have_slack_names_and_names_pass_through():
    names = [slack_name(e) for e in ("👀", "👍", "😢", "✅", "❤️")]
    assert names == ["eyes", "+1", "cry", "white_check_mark", "heart"]
    assert slack_name(":tada:") == "tada" and slack_name("white_check_mark") == "white_check_mark"
    assert slack_name("🦜") is None


async def test_received_then_done_appear_on_the_persons_message():
    async with SlackEmulator() as api:
        api.channel("D0PERSON", "im")
        async with gateway_with(api, reactions=REACTIONS):
            await api.wait_connected()
            ts = await api.push_message("D0PERSON", "echo: " + " ".join(f"w{i}" for i in range(20)))
            message = api.channel("D0PERSON").find(ts)
            await eventually(lambda: message.reactions == ["eyes", "+1"], lambda: api.reaction_log)
        texts = [c.at for c in api.calls if c.method.startswith("chat.") and c.answer and c.answer.get("ok")]
        done_at = [at for _, t, name, at in api.reaction_log if name == "+1"][0]
        assert done_at > texts[-1], "the 👍 comes once the reply is final"
        assert not api.violations


async def test_an_edit_during_the_reply_supersedes_it_and_the_edited_text_is_answered():
    async with SlackEmulator() as api:
        api.channel("D0EDIT", "im")
        words = " ".join(f"w{i}" for i in range(60))
        async with gateway_with(api):
            await api.wait_connected()
            ts = await api.push_message("D0EDIT", f"echo: {words}")
            await eventually(lambda: len(api.screen("D0EDIT")) == 1 and len(api.screen("D0EDIT")[0]) > 10,
                             lambda: api.screen("D0EDIT"))
            await api.push_edit("D0EDIT", ts, "echo: what I meant to ask")
            await eventually(lambda: api.screen("D0EDIT")[1:] == ["what I meant to ask"],
                             lambda: api.screen("D0EDIT"), timeout=30)
        superseded, answer = api.screen("D0EDIT")
        shown, note = superseded.split("\n\n")
        assert words.startswith(shown) and shown != words and "▌" not in superseded
        assert note == NOTE and answer == "what I meant to ask"
        assert not api.violations and not api.still_streaming()
