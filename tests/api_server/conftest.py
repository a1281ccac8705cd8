"""Fixtures for the API server tests (the helpers live in ``api_helpers``)."""

from __future__ import annotations

from typing import AsyncIterator

import pytest

from api_helpers import ScriptedUpstream, gateway_config, running_gateway
from hermes_gateway._core.gateway import Gateway


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    async with running_gateway(gateway_config()) as gw:
        yield gw


@pytest.fixture
async def upstream() -> AsyncIterator[ScriptedUpstream]:
    async with ScriptedUpstream() as up:
        yield up
