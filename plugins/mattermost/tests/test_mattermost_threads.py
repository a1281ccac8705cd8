"""Where the bot answers, through a whole gateway: threads stay threads, channels need a mention.

A top-level post in a channel that mentions the bot is answered in a
thread under it; a later post in that thread is answered there without a
mention; a post nobody addressed to the bot is not answered; a direct
message is answered in the channel, a group message only when mentioned.
"""

from __future__ import annotations

from hermes_mattermost.emulator import ALICE_ID, BOB_ID
from mattermost_test_support import eventually, gateway

CHANNEL, GROUP, DM = "townsquare0000000000000000", "groupdm0000000000000000000", "dmalice0000000000000000000"


async def test_threads_mentions_dms_and_group_messages(mm):
    mm.channel(CHANNEL, "O")
    mm.channel(GROUP, "G")
    mm.channel(DM, "D")
    async with gateway(mm):
        await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:])
        ignored = await mm.post_as(ALICE_ID, CHANNEL, "echo: nobody asked the bot")
        root = await mm.post_as(ALICE_ID, CHANNEL, "@hermes echo: first")
        await eventually(lambda: mm.screen(CHANNEL) == ["first"], lambda: mm.screen(CHANNEL))
        assert [p.root_id for p in mm.bot_posts(CHANNEL)] == [root], "the reply starts a thread under the post"

        await mm.post_as(BOB_ID, CHANNEL, "echo: second, in the thread", root_id=root)
        await eventually(lambda: mm.screen(CHANNEL, root) == ["first", "second, in the thread"],
                         lambda: mm.screen(CHANNEL))

        await mm.post_as(ALICE_ID, GROUP, "echo: not for the bot")
        await mm.post_as(ALICE_ID, GROUP, "@HERMES echo: group")
        await eventually(lambda: mm.screen(GROUP) == ["group"], lambda: mm.screen(GROUP))

        await mm.post_as(ALICE_ID, DM, "echo: direct")
        await eventually(lambda: mm.screen(DM) == ["direct"], lambda: mm.screen(DM))
        assert [p.root_id for p in mm.bot_posts(DM)] == [""], "a DM is answered in the channel"

        thread_in_dm = await mm.post_as(ALICE_ID, DM, "a root of her own")
        await eventually(lambda: len(mm.screen(DM)) == 2 and "demo model" in mm.screen(DM)[1], lambda: mm.screen(DM))
        await mm.post_as(ALICE_ID, DM, "echo: in her thread", root_id=thread_in_dm)
        await eventually(lambda: "in her thread" in mm.screen(DM, thread_in_dm), lambda: mm.screen(DM))
    assert not any(p.root_id == ignored for p in mm.posts.values()), "an unaddressed post got no answer"
    assert len(mm.screen(CHANNEL)) == 2 and len(mm.screen(GROUP)) == 1
    assert mm.count(429) == 0 and not mm.violations
