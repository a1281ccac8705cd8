"""Fixtures for the whatsapp plugin's tests: a Graph API emulator on 127.0.0.1 per test."""

from __future__ import annotations

import pytest

from hermes_whatsapp.emulator import GraphApiEmulator
from whatsapp_test_support import APP_SECRET, PHONE_ID, TOKEN


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    """Conversations and update ids go to a temporary HERMES_HOME, also when this directory is the rootdir."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch):
    """Of the installed plugins only this one loads (``HERMES_LOAD_PLUGINS``), in this process and the
    commands it starts: another plugin installed on the machine changes nothing here."""
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "whatsapp")


@pytest.fixture
async def meta():
    async with GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET) as emulator:
        yield emulator
