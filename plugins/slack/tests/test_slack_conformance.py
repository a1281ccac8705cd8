"""The plugin keeps every promise of the conformance suite, through slack_sdk and the emulator.

The suite streams without a thread, so it exercises the edit transport
(chat.postMessage + chat.update); native streaming has its own screen
tests in test_slack_streaming.py. The client is built and started as the
gateway does it (``PlatformRunner``): auth.test, then Socket Mode.
"""

from __future__ import annotations

import pytest

from hermes_gateway.testing.conformance import CHECKS, Harness, run_check
from hermes_slack.emulator import SlackEmulator
from hermes_slack import plugin
from hermes_slack.reactions import SLACK_NAMES
from slack_test_support import runner


class SlackHarness(Harness):
    platform = "slack"
    chat_id = "C0CONFORM"
    plugin = plugin

    async def start(self):
        self.api = SlackEmulator()
        await self.api.start()
        for suffix in ("", "-edit", "-long", "-same", "-429", "-media", "-react", "-table", "-choice"):
            self.api.channel(self.chat_id + suffix, "channel")
        # the upload timeout check hangs a call for 1.5 s
        self.runner = await runner(self.api, start=True, api_timeout=1.0).__aenter__()

    async def stop(self):
        await self.runner.__aexit__(None, None, None)
        await self.api.stop()

    async def screen(self, chat_id):
        return self.api.screen(chat_id)

    async def inject_rate_limit(self, chat_id, retry_after):
        self.api.inject_rate_limit(retry_after, channel=chat_id)

    def attachments(self, chat_id):
        return self.api.attachments(chat_id)

    async def break_connection(self):
        """A Socket Mode outage: the websocket closes and reconnecting is refused (slack_sdk keeps trying)."""
        await self.api.take_socket_mode_down()

    async def restore_connection(self):
        self.api.bring_socket_mode_back()

    async def person_message(self, chat_id, text):
        """A person's message in the channel; nobody mentions the bot, so the core is not asked to answer."""
        return await self.api.push_message(chat_id, text)

    def reactions(self, chat_id):
        emoji = {name: e for e, name in SLACK_NAMES.items()}
        return {m.ts: [emoji.get(name, name) for name in m.reactions] for m in self.api.channel(chat_id).messages}

    async def inject_upload_timeout(self, chat_id, landed):
        """files.completeUploadExternal (the call that shares the file) answers after the client's 1 s timeout."""
        self.api.hang("files.completeUploadExternal", 1.5, landed=landed, channel=chat_id)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_slack_conforms(check):
    async with SlackHarness() as harness:
        await run_check(check, harness)
        assert not harness.api.violations and not harness.api.still_streaming()
