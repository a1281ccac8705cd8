"""Fixtures for agent tests: real upstreams on 127.0.0.1 (the demo server, a scripted fake)."""

from __future__ import annotations

from typing import AsyncIterator

import pytest

from hermes_gateway._core.demo.server import serve

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


@pytest.fixture(autouse=True)
def _forget_upstream_quirks() -> None:
    """Each test starts with no remembered "does not stream" upstreams (ports get reused)."""
    from hermes_gateway._core.agent.upstream import STREAM_SUPPORT
    STREAM_SUPPORT.forget()


@pytest.fixture(autouse=True)
async def _close_agents(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """Close every agent's HTTP clients after the test (bookkeeping only; behaviour is untouched)."""
    from hermes_gateway._core.agent import upstream

    pools: list[upstream.UpstreamPool] = []
    original = upstream.UpstreamPool.__init__

    def tracked(self: upstream.UpstreamPool, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)
        pools.append(self)

    monkeypatch.setattr(upstream.UpstreamPool, "__init__", tracked)
    yield
    for pool in pools:
        await pool.aclose()
