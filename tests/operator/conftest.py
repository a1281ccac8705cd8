"""A real PostgreSQL server for the replica tests (as in tests/store): a fresh database per test; a machine
where the bundled server cannot run skips them, saying why."""

from __future__ import annotations

from typing import Iterator

import pytest


@pytest.fixture(scope="session")
def postgres_server() -> Iterator["LocalPostgres"]:  # noqa: F821  (imported lazily: a machine without it skips)
    from hermes_gateway.testing.postgres import start_or_skip

    server = start_or_skip()
    yield server
    server.cleanup()


@pytest.fixture
def postgres_url(postgres_server) -> Iterator[str]:
    name = postgres_server.create_database()
    yield postgres_server.url(name)
    postgres_server.drop_database(name)
