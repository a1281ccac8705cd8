"""Fixtures for the whatsapp plugin's tests: a Graph API emulator on 127.0.0.1 per test."""

from __future__ import annotations

import pytest

from hermes_whatsapp.emulator import GraphApiEmulator
from whatsapp_test_support import APP_SECRET, PHONE_ID, TOKEN


@pytest.fixture
async def meta():
    async with GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET) as emulator:
        yield emulator
