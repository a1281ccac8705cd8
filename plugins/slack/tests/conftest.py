"""Fixtures for the slack plugin's tests: a Slack emulator on 127.0.0.1 per test."""

from __future__ import annotations

import pytest

from hermes_slack.emulator import SlackEmulator


@pytest.fixture
async def api():
    async with SlackEmulator() as emulator:
        yield emulator
