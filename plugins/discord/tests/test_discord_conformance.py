"""The plugin keeps every promise of the conformance suite, through discord.py and the emulator."""

from __future__ import annotations

import pytest

from discord_test_support import TOKEN, runner_for
from hermes_gateway.testing.conformance import CHECKS, Harness, run_check
from hermes_discord.emulator import DiscordEmulator


class ChannelId(str):
    """The suite names chats by adding suffixes ("-edit", "-long") to the harness's chat id; Discord's
    channels are numbers, so each suffix stands for a channel of its own in the emulator."""

    api: DiscordEmulator

    def __add__(self, suffix: str) -> "ChannelId":  # type: ignore[override]
        named = self.api.__dict__.setdefault("_suffixes", {})
        if suffix not in named:
            named[suffix] = self.api.text_channel(suffix.strip("-"))
        made = ChannelId(named[suffix])
        made.api = self.api
        return made


class DiscordHarness(Harness):
    platform = "discord"

    async def start(self):
        self.api = DiscordEmulator(TOKEN, bucket_limit=10_000, global_limit=100_000)
        await self.api.start()
        self.chat_id = ChannelId(self.api.general)
        self.chat_id.api = self.api
        self.runner = runner_for(self.api, start=True)  # built and started as the gateway does
        await self.runner.__aenter__()

    async def stop(self):
        await self.runner.__aexit__(None, None, None)
        await self.api.stop()

    async def screen(self, chat_id):
        return self.api.screen(chat_id)

    async def inject_rate_limit(self, chat_id, retry_after):
        self.api.inject_rate_limit(chat_id, retry_after)

    async def inject_edit_failure(self, chat_id):
        """The next call into the channel (the final edit) meets Discord's edit limit: refused for good."""
        self.api.fail_next(chat_id, 400, 30046, "Maximum number of edits to messages older than 1 hour reached.")

    def attachments(self, chat_id):
        return [(sent.filename, sent.data) for sent in self.api.channel(chat_id).uploads]

    async def person_message(self, chat_id, text):
        """A person's message in the channel (the runner's client hands it to nobody in particular)."""
        return await self.api.push_message(chat_id, text)

    def reactions(self, chat_id):
        return dict(self.api.channel(chat_id).reactions)

    async def break_connection(self):
        """A gateway outage: the websocket closes and reconnecting is refused (discord.py keeps trying)."""
        await self.api.take_gateway_down()

    async def restore_connection(self):
        self.api.bring_gateway_back()

    async def inject_upload_timeout(self, chat_id, landed):
        """The upload answers later than the plugin waits for it."""
        self.runner.client.upload_timeout = 0.3
        self.api.uploads.stall(chat_id, 1.0, landed=landed)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_discord_conforms(check):
    async with DiscordHarness() as harness:
        await run_check(check, harness)
        assert not harness.api.violations, harness.api.violations
