"""The store opens, is writable and its schema is current; the media directory is writable.

A store that does not exist yet is not created here (``run`` creates it):
its nearest existing directory is checked for a real write instead. Every
writability check writes for real (a probe file, or an UPDATE rolled back)
rather than trusting permission bits, which say nothing for root or on a
read-only mount.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from ...config import Config
from ...store import MEMORY, SQLiteStore, StoreError, is_server_store, open_store, store_location
from . import Line


async def check_store(config: Config, timeout: float) -> list[Line]:
    location = store_location(config)
    if location == MEMORY:
        return [Line(True, "store", "in memory (nothing is kept between runs)"), _media(config)]
    if is_server_store(config):
        return [await _postgres(config), _media(config)]
    return [await _sqlite(Path(location), config), _media(config)]


async def _sqlite(path: Path, config: Config) -> Line:
    key = "store.url" if config.store.url else "store.path"
    if not path.exists():
        problem = writable_dir_problem(path.parent)
        if problem:
            return Line(False, key, f"{path} cannot be created: {problem}")
        return Line(True, "store", f"{path} does not exist yet; it is created at the first start (its directory "
                                   "is writable)")
    store = SQLiteStore(path, busy_timeout=2.0)
    try:
        await store.open()
        version = await store._run(_sqlite_probe)
    except StoreError as exc:
        return Line(False, key, f"{exc}")
    finally:
        await store.close()
    from ...store.sqlite import SCHEMA_VERSION

    if version != SCHEMA_VERSION:
        return Line(False, key, f"{path}: schema {version}, this hermes-gateway knows {SCHEMA_VERSION}: upgrade it")
    return Line(True, "store", f"{path} opens, is writable, schema {version} (current)")


def _sqlite_probe(db: sqlite3.Connection) -> Any:
    """A real write, rolled back; then the schema version."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("UPDATE schema_version SET version = version")
    finally:
        db.execute("ROLLBACK")
    return db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]


async def _postgres(config: Config) -> Line:
    store: Any = open_store(config)
    from ...store.postgres import SCHEMA_VERSION

    async def probe(conn: Any) -> Any:
        row = await (await conn.execute("SELECT MAX(version), has_table_privilege('hermes_conversations', "
                                        "'INSERT, DELETE') FROM hermes_schema_version")).fetchone()
        return row
    try:
        await store.open()
        version, writable = await store._run(probe)
    except StoreError as exc:
        return Line(False, "store.url", f"{exc}")
    finally:
        await store.close()
    if not writable:
        return Line(False, "store.url", f"{store.location}: the user may not write hermes_conversations: "
                                        "GRANT INSERT, UPDATE, DELETE on the hermes_ tables")
    if version != SCHEMA_VERSION:
        return Line(False, "store.url", f"{store.location}: schema {version}, this hermes-gateway knows "
                                        f"{SCHEMA_VERSION}: upgrade it")
    return Line(True, "store", f"{store.location} reachable, writable, schema {version} (current)")


def _media(config: Config) -> Line:
    directory = config.media.path()
    key = "media.directory"
    target = directory if directory.exists() else directory.parent
    problem = writable_dir_problem(target)
    if problem:
        return Line(False, key, f"{directory}: {problem}")
    return Line(True, "media", f"{directory} is writable" if directory.exists()
                else f"{directory} does not exist yet; it is created at the first file (its parent is writable)")


def writable_dir_problem(directory: Path) -> str | None:
    """Why nothing can be created in ``directory`` (or its nearest existing ancestor), or None: tried for real."""
    found = directory
    while not found.exists() and found != found.parent:
        found = found.parent
    if not found.is_dir():
        return f"{found} is a file, not a directory: move it aside, or choose another path"
    try:
        fd, probe = tempfile.mkstemp(prefix=".hermes-doctor-", dir=found)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"cannot write in {found} ({exc.strerror or exc}): fix its owner or permissions, or choose another path"
    return None
