"""The plugin keeps every promise of the conformance suite, through the Teams SDK's client and the emulator.

The suite's chats are personal chats, so its replies stream natively
(typing activities with streaminfo, then the final message); a second
harness runs the edit path (post + PUT) in a channel for the checks that
send and edit.
"""

from __future__ import annotations

import pytest

from hermes_gateway.testing.conformance import CHECKS, CHAT_PURPOSES, Harness, run_check
from hermes_teams import plugin
from hermes_teams.emulator import TeamsEmulator
from teams_test_support import FAST_STREAM, FAST_WINDOWS, connect, runner


class TeamsHarness(Harness):
    platform = "teams"
    chat_id = "a:conformance"
    plugin = plugin
    kind = "personal"

    async def start(self):
        self.api = TeamsEmulator(stream_interval=FAST_STREAM, windows=FAST_WINDOWS)
        await self.api.start()
        for suffix in CHAT_PURPOSES.values():
            self.api.conversation(self.chat_id + suffix, self.kind)
        self.runner = await runner(self.api).__aenter__()
        connect(self.api, self.runner.url)

    async def stop(self):
        await self.runner.__aexit__(None, None, None)
        await self.api.stop()

    async def screen(self, chat_id):
        return self.api.screen(chat_id)

    async def inject_rate_limit(self, chat_id, retry_after):
        self.api.inject_rate_limit(chat_id, retry_after)

    def attachments(self, chat_id):
        return self.api.attachments(chat_id)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_teams_conforms(check):
    async with TeamsHarness() as harness:
        await run_check(check, harness)
        assert not harness.api.violations and not harness.api.still_streaming()
