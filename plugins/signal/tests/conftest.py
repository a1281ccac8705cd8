"""Fixtures for the signal plugin's tests: a signal-cli daemon emulator on 127.0.0.1 per test."""

from __future__ import annotations

import pytest

from hermes_signal.emulator import SignalDaemonEmulator


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    """Conversations and update ids go to a temporary HERMES_HOME, never the person's ~/.hermes."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch):
    """Of the installed plugins only this one loads (``HERMES_LOAD_PLUGINS``), here and in the commands it starts."""
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "signal")


@pytest.fixture
async def daemon():
    async with SignalDaemonEmulator(keepalive=1.0) as emulator:
        yield emulator
