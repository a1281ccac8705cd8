"""The plugin keeps every promise of the conformance suite, over HTTP against the Graph API emulator."""

from __future__ import annotations

import pytest

from hermes_gateway.testing.conformance import CHECKS, Harness, run_check
from hermes_whatsapp.emulator import GraphApiEmulator
from hermes_whatsapp.errors import THROUGHPUT
from whatsapp_test_support import APP_SECRET, FAST, PHONE_ID, TOKEN, runner_for


class WhatsAppHarness(Harness):
    platform = "whatsapp"
    chat_id = "4915100000001"  # a wa_id: digits

    async def start(self):
        self.meta = GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET)
        await self.meta.start()
        # one Graph API call may take 1 s (the smallest timeout the config takes): the upload timeout check
        self.runner = runner_for(self.meta, limits={"budgets": FAST}, timeout=1.0, start=True)  # checks the token
        await self.runner.__aenter__()
        self.plugin = self.runner.client

    async def stop(self):
        await self.runner.__aexit__(None, None, None)
        await self.meta.stop()

    async def screen(self, chat_id):
        return self.meta.screen(chat_id)

    async def inject_rate_limit(self, chat_id, retry_after):
        """WhatsApp's flood error (131056) names no wait: the plugin's first wait is what the core gets."""
        self.plugin.pairs.first = retry_after
        self.meta.pair_penalty = retry_after  # the emulator's "too soon after 131056" matches this test's wait
        self.meta.inject_pair_rate_limit(chat_id)

    async def inject_typing_rate_limit(self, chat_id, retry_after):
        """WhatsApp counts messages per user, not typing indicators: the number's throughput limit (130429,
        every chat waits the plugin's 2 s) is what a typing indicator can meet."""
        self.meta.fail_any_call(THROUGHPUT)

    def attachments(self, chat_id):
        return self.meta.attachments(chat_id)

    async def person_message(self, chat_id, text):
        """The user's message as Meta would post it (not delivered: the check only reacts to it)."""
        payload = self.meta.text_message(chat_id, text)
        return payload["entry"][0]["changes"][0]["value"]["messages"][0]["id"]

    def reactions(self, chat_id):
        return {wamid: [emoji] for wamid, emoji in self.meta.user(chat_id).reactions.items()}

    async def inject_upload_timeout(self, chat_id, landed):
        """The media message (the call that shows the file) gets its answer after the plugin's 1 s timeout."""
        self.meta.hang_next(chat_id, 1.5, landed=landed, on="media")


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_whatsapp_conforms(check):
    async with WhatsAppHarness() as harness:
        await run_check(check, harness)
        assert all(not user.violations for user in harness.meta.users.values()), \
            {wa_id: user.violations for wa_id, user in harness.meta.users.items()}
