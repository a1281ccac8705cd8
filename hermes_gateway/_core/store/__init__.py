"""Conversations that survive a restart: the :class:`ConversationStore` seam and its backends.

:func:`open_store` picks the backend from ``store:`` in the config: an
SQLite file (``store.path``, ``store.url: sqlite:///...``, default
``<data dir>/state.db``), memory for ``":memory:"``, or a PostgreSQL
database (``store.url: postgresql://...``, shared by several replicas).
Opening is lazy: nothing touches the disk or the network until the first
read or write (or ``open()``), and psycopg is imported only for PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..config import Config, data_dir
from .base import ConversationKey, ConversationStore, ConversationSummary, StoredResponse, StoreError
from .memory import MemoryStore
from .pgurl import describe, is_postgres_url
from .sqlite import SQLiteStore

__all__ = ["MEMORY", "ConversationKey", "ConversationStore", "ConversationSummary", "MemoryStore", "PostgresStore",
           "SQLiteStore", "StoreError", "StoredResponse", "is_server_store", "open_store", "store_location"]

MEMORY = ":memory:"


def is_server_store(config: Config) -> bool:
    """Whether the store is a database server (PostgreSQL), not a file on this machine."""
    return is_postgres_url(config.store.url)


def store_location(config: Config) -> str:
    """Where the config puts the store: a file path, ``":memory:"``, or ``PostgreSQL at host:port/dbname``.

    ``store.url`` follows the usual SQLite URL form: ``sqlite:///relative.db``
    (three slashes, relative to the working directory) and
    ``sqlite:////absolute/state.db`` (four). ``store.path`` may use ``~``.
    """
    cfg = config.store
    if is_server_store(config):
        return f"PostgreSQL at {describe(cfg.url or '')}"
    if cfg.url:
        path = unquote(urlsplit(cfg.url).path)
        path = path[1:] if path.startswith("/") else path  # sqlite:///x -> "x"; sqlite:////x -> "/x"
        return path if path == MEMORY else str(Path(path).expanduser())
    if cfg.path:
        return cfg.path if cfg.path == MEMORY else str(Path(cfg.path).expanduser())
    return str(data_dir() / "state.db")


def open_store(config: Config | None) -> ConversationStore:
    """The store ``config`` asks for (not yet touching the disk; a bad file shows on first use).

    ``None`` (no configuration at all, as in a unit test) gives an empty :class:`MemoryStore`.
    """
    if config is None:
        return MemoryStore()
    cfg = config.store
    if is_server_store(config):
        from .postgres import PostgresStore

        return PostgresStore(cfg.url or "", history_messages=cfg.history_messages, history_chars=cfg.history_chars)
    location = store_location(config)
    if location == MEMORY:
        return MemoryStore(history_messages=cfg.history_messages, history_chars=cfg.history_chars)
    return SQLiteStore(location, history_messages=cfg.history_messages, history_chars=cfg.history_chars)


def __getattr__(name: str) -> object:
    # PostgresStore pulls in psycopg: import it only when asked for, so the SQLite default stays light.
    if name == "PostgresStore":
        from .postgres import PostgresStore
        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
