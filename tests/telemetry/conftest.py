"""A local OTLP/HTTP receiver per test (the test kit's), and a private HERMES_HOME: the gateways here keep a store."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))


@pytest.fixture
async def otlp():
    pytest.importorskip("opentelemetry.sdk", reason="the telemetry extra is not installed")
    from hermes_gateway.testing.otlp import OtlpReceiver

    async with OtlpReceiver() as receiver:
        yield receiver
