"""Fixtures for the mattermost plugin's tests: a fresh data directory, only this plugin loaded, an emulator."""

from __future__ import annotations

import pytest

from hermes_mattermost.emulator import MattermostEmulator


@pytest.fixture(autouse=True)
def hermes_home(tmp_path, monkeypatch):
    """Conversations and seen update ids go to a fresh data directory, never the person's ~/.hermes."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes-home"))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "mattermost")


@pytest.fixture
async def mm():
    async with MattermostEmulator() as emulator:
        yield emulator
