"""Fixtures for agent tests: real upstreams on 127.0.0.1 (the demo server, a scripted fake)."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest

from hermes_gateway.config import parse_config
from hermes_gateway.demo.server import serve

from scripted_upstream import ScriptedUpstream


@pytest.fixture
async def demo_url() -> AsyncIterator[str]:
    """The demo model over real HTTP (aiohttp on an ephemeral port), as fast as possible."""
    async with serve(tokens_per_second=0) as url:
        yield url


@pytest.fixture
async def fake() -> AsyncIterator[ScriptedUpstream]:
    """A scripted OpenAI-compatible upstream for edge cases."""
    async with ScriptedUpstream() as upstream:
        yield upstream


def model_config(base_url: str | None = None, **model: Any) -> Any:
    """A Config whose model points at ``base_url`` (None: the in-process demo model)."""
    section: dict[str, Any] = {"demo": {"tokens_per_second": 0}, **model}
    if base_url:
        section.setdefault("base_url", base_url)
        section.setdefault("name", "test-model")
    return parse_config({"model": section})


@pytest.fixture(autouse=True)
def _forget_upstream_quirks() -> None:
    """Each test starts with no remembered "does not stream" upstreams (ports get reused)."""
    from hermes_gateway.agent.upstream import STREAM_SUPPORT
    STREAM_SUPPORT.forget()
