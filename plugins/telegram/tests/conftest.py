"""Fixtures for the telegram plugin's tests: a Bot API emulator on 127.0.0.1 per test."""

from __future__ import annotations

import pytest

from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import TOKEN


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    """The gateway's store in a temporary directory, never ~/.hermes, also when run on their own."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))


@pytest.fixture
async def api():
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator
