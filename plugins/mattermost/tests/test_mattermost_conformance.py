"""The plugin keeps every promise of the conformance suite, over aiohttp and the strict emulator."""

from __future__ import annotations

import pytest

from hermes_gateway.testing.conformance import CHAT_PURPOSES, CHECKS, Harness, run_check
from hermes_mattermost import plugin
from hermes_mattermost.emulator import ALICE_ID, MattermostEmulator
from hermes_mattermost.reactions import NAMES
from mattermost_test_support import runner


class MattermostHarness(Harness):
    platform = "mattermost"
    chat_id = "conformancechannel00000000"
    plugin = plugin

    async def start(self):
        self.mm = await MattermostEmulator().start()
        for suffix in CHAT_PURPOSES.values():
            self.mm.channel(self.chat_id + suffix, "O")
        # the upload-timeout check hangs a call for 1.5 s; buttons need an actions_url (served by the runner)
        self.runner = await runner(self.mm, api_timeout=1.0, actions_url="http://127.0.0.1:9").__aenter__()

    async def stop(self):
        await self.runner.__aexit__(None, None, None)
        await self.mm.stop()

    async def screen(self, chat_id):
        return self.mm.screen(chat_id)

    async def inject_rate_limit(self, chat_id, retry_after):
        self.mm.inject(429, retry_after=retry_after)  # Mattermost limits the bot, not a channel

    async def inject_edit_failure(self, chat_id):
        self.mm.inject(403, path=r"^PUT .*/patch$", channel=chat_id)

    def attachments(self, chat_id):
        return self.mm.attachments(chat_id)

    async def inject_upload_timeout(self, chat_id, landed):
        self.mm.inject(200, path=r"^POST /api/v4/posts$", channel=chat_id, hang=1.5, landed=landed)

    async def break_connection(self):
        await self.mm.drop_sockets(refuse=True)

    async def restore_connection(self):
        self.mm.accept_sockets()

    async def person_message(self, chat_id, text):
        return await self.mm.post_as(ALICE_ID, chat_id, text)

    def reactions(self, chat_id):
        emoji = {name: e for e, name in NAMES.items()}
        return {p.id: [emoji.get(name, name) for _, name in p.reactions]
                for p in self.mm.posts.values() if p.channel_id == chat_id}


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_mattermost_conforms(check):
    async with MattermostHarness() as harness:
        await run_check(check, harness)
        assert not harness.mm.violations
