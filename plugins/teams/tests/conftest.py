"""Fixtures for the teams plugin's tests: a fresh data directory, only this plugin loaded, a Teams emulator."""

from __future__ import annotations

import pytest

from hermes_teams.emulator import TeamsEmulator


@pytest.fixture(autouse=True)
def hermes_home(tmp_path, monkeypatch):
    """Conversations and seen activity ids go to a fresh data directory, never the person's ~/.hermes."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes-home"))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "teams")


@pytest.fixture
async def api():
    async with TeamsEmulator() as emulator:
        yield emulator
