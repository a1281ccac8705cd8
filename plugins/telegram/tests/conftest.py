"""Fixtures for the telegram plugin's tests: a Bot API emulator on 127.0.0.1 per test.

The plugin's tests also run on their own (``pytest plugins/telegram/tests``,
whose rootdir is this plugin, so the repository's conftest is not loaded):
each test keeps the gateway's data (the store with its update ids) in a
temporary HERMES_HOME, never ~/.hermes, or a second run would take the
emulator's update ids, which start at 1 each time, for redeliveries.
"""

from __future__ import annotations

import pytest

from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import TOKEN


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch):
    """Of the installed plugins only this one loads (``HERMES_LOAD_PLUGINS``), in this process and the
    commands it starts: another plugin installed on the machine changes nothing here."""
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "telegram")


@pytest.fixture
async def api():
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator
