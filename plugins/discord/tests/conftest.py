"""Fixtures for the discord plugin's tests: a Discord emulator on 127.0.0.1 per test, a private data directory."""

from __future__ import annotations

import pytest

from discord_test_support import TOKEN
from hermes_discord.emulator import DiscordEmulator


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    """The gateway's store (conversations, received message ids) in a temporary directory, never ~/.hermes:
    run on their own (rootdir plugins/discord), these tests do not get the repository's root conftest."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch):
    """Of the installed plugins only this one loads (``HERMES_LOAD_PLUGINS``), in this process and the
    commands it starts: another plugin installed on the machine changes nothing here."""
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "discord")


@pytest.fixture
async def api():
    async with DiscordEmulator(TOKEN) as emulator:
        yield emulator


@pytest.fixture
async def loose_api():
    """Buckets wide enough for the fast (unpaced) plugin."""
    async with DiscordEmulator(TOKEN, bucket_limit=10_000, global_limit=100_000) as emulator:
        yield emulator
