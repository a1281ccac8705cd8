"""One real redis-server for the coordination tests (session-scoped), emptied before each test."""

from __future__ import annotations

import pytest

from hermes_gateway.testing.redis import RedisServer


@pytest.fixture(scope="session")
def redis_server():
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server):
    redis_server.flush()
    return redis_server.url
