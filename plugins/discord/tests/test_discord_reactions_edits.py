"""Status reactions and edited messages on the Discord emulator, through the whole gateway."""

from __future__ import annotations

from discord_test_support import gateway_config, gateway_for
from hermes_gateway.testing import eventually

REACTIONS = {"received": "👀", "done": "👍", "failed": "😢"}
NOTE = "_✏️ Superseded by your edit._"


async def test_received_then_done_appear_on_the_persons_message(loose_api):
    api = loose_api
    dm = api.dm()
    async with gateway_for(api, config={**gateway_config(api, tokens_per_second=10), "reactions": REACTIONS}):
        mid = await api.push_message(dm, "echo: " + " ".join(f"w{i}" for i in range(20)))
        await eventually(lambda: api.channel(dm).reactions.get(mid) == ["👀", "👍"],
                         lambda: api.channel(dm).reaction_log)
    channel = api.channel(dm)
    texts = [c.at for c in channel.calls if c.method in ("create", "edit") and c.outcome == "ok"]
    received, done = channel.reaction_log[0][2], channel.reaction_log[1][2]
    assert received < done and done > texts[-1], "the 👍 comes once the reply is final"
    assert not api.violations


async def test_an_edit_during_the_reply_supersedes_it_and_the_edited_text_is_answered(loose_api):
    api = loose_api
    dm = api.dm()
    words = " ".join(f"w{i}" for i in range(60))
    async with gateway_for(api, tokens_per_second=10):
        mid = await api.push_message(dm, f"echo: {words}")
        await eventually(lambda: len(api.screen(dm)) == 1 and len(api.screen(dm)[0]) > 10, lambda: api.screen(dm))
        await api.push_edit(dm, mid, "echo: what I meant to ask")
        await eventually(lambda: len(api.screen(dm)) == 2 and api.screen(dm)[1] == "what I meant to ask",
                         lambda: api.screen(dm))
    superseded, answer = api.screen(dm)
    shown, note = superseded.split("\n\n")
    assert words.startswith(shown) and shown != words and "▌" not in superseded
    assert note == NOTE and answer == "what I meant to ask"
