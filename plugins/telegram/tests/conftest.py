"""Fixtures for the telegram plugin's tests: a Bot API emulator on 127.0.0.1 per test."""

from __future__ import annotations

import pytest

from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import TOKEN


@pytest.fixture
async def api():
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator
