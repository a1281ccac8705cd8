"""Fixtures for the slack plugin's tests: a Slack emulator on 127.0.0.1 per test."""

from __future__ import annotations

import pytest

from hermes_slack.emulator import SlackEmulator


@pytest.fixture(autouse=True)
def hermes_home(tmp_path, monkeypatch):
    """Conversations and seen event ids go to a fresh data directory, never the person's ~/.hermes."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes-home"))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch):
    """Of the installed plugins only this one loads (``HERMES_LOAD_PLUGINS``), in this process and the
    commands it starts: another plugin installed on the machine changes nothing here."""
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "slack")


@pytest.fixture
async def api():
    async with SlackEmulator() as emulator:
        yield emulator
