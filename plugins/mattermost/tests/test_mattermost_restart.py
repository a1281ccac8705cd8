"""A restart loses nothing and answers nothing twice: posts sent while the gateway was down are fetched
(``GET /channels/{id}/posts?since=``) for the channels it was active in, and answered once."""

from __future__ import annotations

from hermes_mattermost.emulator import ALICE_ID
from mattermost_test_support import eventually, gateway

DM, CHANNEL = "dmrestart00000000000000000", "chrestart00000000000000000"


async def test_posts_sent_while_the_gateway_was_down_are_answered_once_after_the_restart(mm, tmp_path):
    mm.channel(DM, "D")
    mm.channel(CHANNEL, "O")
    store = {"store": {"path": str(tmp_path / "store.db")}}
    async with gateway(mm, data=store):
        await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:])
        await mm.post_as(ALICE_ID, DM, "echo: one")
        root = await mm.post_as(ALICE_ID, CHANNEL, "@hermes echo: in the channel")
        await eventually(lambda: mm.screen(DM) == ["one"] and mm.screen(CHANNEL) == ["in the channel"],
                         lambda: (mm.screen(DM), mm.screen(CHANNEL)))
    await mm.post_as(ALICE_ID, DM, "echo: two, while it was down")
    await mm.post_as(ALICE_ID, CHANNEL, "echo: three, in the thread", root_id=root)
    await mm.post_as(ALICE_ID, CHANNEL, "not for the bot")
    async with gateway(mm, data=store):
        await eventually(lambda: mm.screen(DM) == ["one", "two, while it was down"]
                         and mm.screen(CHANNEL, root) == ["in the channel", "three, in the thread"],
                         lambda: (mm.screen(DM), mm.screen(CHANNEL)))
        await mm.post_as(ALICE_ID, DM, "echo: four")
        await eventually(lambda: mm.screen(DM)[-1:] == ["four"], lambda: mm.screen(DM))
    assert mm.screen(DM) == ["one", "two, while it was down", "four"]
    assert len(mm.screen(CHANNEL)) == 2
