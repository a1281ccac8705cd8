"""The plugin keeps every promise of the conformance suite, through python-telegram-bot and the emulator."""

from __future__ import annotations

import pytest

from hermes_gateway.testing.conformance import CHECKS, Harness, run_check
from hermes_telegram.emulator import BotApiEmulator
from hermes_gateway.testing import PlatformRunner
from hermes_telegram import plugin
from telegram_test_support import FAST_LIMITS, TOKEN, section


class TelegramHarness(Harness):
    platform = "telegram"

    async def start(self):
        self.api = BotApiEmulator(TOKEN)
        await self.api.start()
        # started as the gateway starts it: getMe, then long polling (nobody writes, so it only waits)
        self.runner = PlatformRunner(plugin, section(self.api.base_url, poll_timeout=1), limits=FAST_LIMITS)
        await self.runner.__aenter__()
        self.client = self.runner.client

    async def stop(self):
        await self.runner.__aexit__(None, None, None)
        await self.api.stop()

    async def screen(self, chat_id):
        return self.api.screen(chat_id)

    async def inject_rate_limit(self, chat_id, retry_after):
        self.api.inject_rate_limit(chat_id, int(retry_after))

    async def inject_edit_failure(self, chat_id):
        """A message Telegram will not let the bot edit (still on screen, e.g. too old)."""
        self.api.fail_method("editMessageText", 400, "Bad Request: message can't be edited")

    def attachments(self, chat_id):
        return [(sent.filename, sent.data) for sent in self.api.chat(chat_id).uploads]

    async def person_message(self, chat_id, text):
        """A message a person wrote earlier (on the emulator's screen; not handed to the bot again)."""
        chat = self.api.chat(chat_id)
        message_id = chat.next_message_id
        chat.next_message_id += 1
        chat.said.append((message_id, text))
        return str(message_id)

    def reactions(self, chat_id):
        return {mid: [emoji] for mid, emoji in self.api.chat(chat_id).reactions.items()}

    async def break_connection(self):
        """Telegram unreachable for three polls (502 Bad Gateway); the poll loop backs off, then gets through."""
        self.api.fail_method("getUpdates", 502, "Bad Gateway", times=3)

    async def inject_upload_timeout(self, chat_id, landed):
        """The upload answers later than the plugin waits (a real read timeout in python-telegram-bot)."""
        self.client.upload_timeout = 0.3
        self.api.uploads.stall(chat_id, 1.0, landed=landed)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_telegram_conforms(check):
    async with TelegramHarness() as harness:
        await run_check(check, harness)
        assert all(not chat.violations for chat in harness.api.chats.values()), \
            {cid: chat.violations for cid, chat in harness.api.chats.items()}
