"""The whole gateway on Signal: mention gating in groups (a mention by number or uuid, or a reply to the bot),
the answer quoting the person's message there, and a direct chat answered without a mention."""

from __future__ import annotations

from hermes_gateway.testing import TestGateway
from hermes_signal import plugin
from signal_test_support import ALICE, BOB, GROUP, config, eventually

CHAT = f"group:{GROUP}"


async def test_a_group_is_answered_only_when_the_bot_is_mentioned_or_replied_to(daemon):
    daemon.group(GROUP, [ALICE, BOB])
    async with TestGateway(config(daemon), plugin):
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.push_message(BOB, "echo: not for the bot", group=GROUP)
        asked = daemon.push_message(ALICE, "\ufffc echo: by number", group=GROUP, mentions=[daemon.mention_of_bot(0)])
        await eventually(lambda: daemon.screen(CHAT) == ["by number"], lambda: daemon.screen(CHAT))
        by_uuid = {"uuid": daemon.account_uuid, "start": 0, "length": 1}
        daemon.push_message(BOB, "\ufffc echo: by uuid", group=GROUP, mentions=[by_uuid])
        await eventually(lambda: daemon.screen(CHAT)[-1:] == ["by uuid"], lambda: daemon.screen(CHAT))
        daemon.push_message(BOB, "echo: a reply to the bot", group=GROUP, quote=daemon.bot_messages(CHAT)[0].timestamp)
        await eventually(lambda: daemon.screen(CHAT)[-1:] == ["a reply to the bot"], lambda: daemon.screen(CHAT))
        daemon.push_message(ALICE, "echo: in private")
        await eventually(lambda: daemon.screen(ALICE) == ["in private"], lambda: daemon.screen(ALICE))
    assert daemon.screen(CHAT) == ["by number", "by uuid", "a reply to the bot"]
    assert daemon.bot_messages(CHAT)[0].quote == asked, "the answer quotes the message it answers"
    assert daemon.bot_messages(ALICE)[0].quote is None
    assert daemon.violations == []
