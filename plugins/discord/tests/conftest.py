"""Fixtures for the discord plugin's tests: a Discord emulator on 127.0.0.1 per test."""

from __future__ import annotations

import pytest

from discord_test_support import TOKEN
from hermes_discord.emulator import DiscordEmulator


@pytest.fixture
async def api():
    async with DiscordEmulator(TOKEN) as emulator:
        yield emulator


@pytest.fixture
async def loose_api():
    """Buckets wide enough for the fast (unpaced) plugin."""
    async with DiscordEmulator(TOKEN, bucket_limit=10_000, global_limit=100_000) as emulator:
        yield emulator
