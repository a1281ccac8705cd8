"""The plugin keeps every promise of the conformance suite, over HTTP against the Graph API emulator."""

from __future__ import annotations

import pytest

from hermes_gateway.testing.conformance import CHECKS, Harness, run_check
from hermes_whatsapp.emulator import GraphApiEmulator
from whatsapp_test_support import APP_SECRET, FAST, PHONE_ID, TOKEN, plugin_for


class WhatsAppHarness(Harness):
    platform = "whatsapp"
    chat_id = "4915100000001"  # a wa_id: digits

    async def start(self):
        self.meta = GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET)
        await self.meta.start()
        self.plugin = plugin_for(self.meta, budgets=FAST)

    async def stop(self):
        await self.plugin.close()
        await self.meta.stop()

    def screen(self, chat_id):
        return self.meta.screen(chat_id)

    async def inject_rate_limit(self, chat_id, retry_after):
        """WhatsApp's flood error (131056) names no wait: the plugin's first wait is what the core gets."""
        self.plugin.pairs.first = retry_after
        self.meta.inject_pair_rate_limit(chat_id)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_whatsapp_conforms(check):
    async with WhatsAppHarness() as harness:
        await run_check(check, harness)
        assert all(not user.violations for user in harness.meta.users.values()), \
            {wa_id: user.violations for wa_id, user in harness.meta.users.items()}
