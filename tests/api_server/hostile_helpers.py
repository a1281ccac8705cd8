"""Helpers for the hardening tests: a gateway in its own process, a /health watcher, raw HTTP requests.

The gateway runs as ``python -m hermes_gateway run`` so that what the
watcher measures is the server's event loop, not the test's: a request
that blocks the server's loop shows up as a slow ``/health`` answer on a
second connection, polled from a thread every few milliseconds.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import yaml

#: The behaviour bound of issue 13: no request may hold /health up longer than this.
HEALTH_BOUND = 0.100


@dataclass
class ServedGateway:
    url: str
    host: str
    port: int
    proc: subprocess.Popen
    stderr_path: Path

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@contextlib.contextmanager
def served_gateway(tmp: Path, config: dict, *, args: tuple[str, ...] = (), nofile: int | None = None,
                   env: dict | None = None) -> Iterator[ServedGateway]:
    """``hermes-gateway run`` on an ephemeral port; SIGTERM and wait on exit. ``nofile``: its fd limit."""
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    err_path = tmp / "stderr.txt"

    def limit_files() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    with open(err_path, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "hermes_gateway", *args, "run", "--config", str(path)],
                                stdout=subprocess.PIPE, stderr=err, preexec_fn=limit_files,
                                env={**os.environ, "HERMES_HOME": str(tmp), **(env or {})})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        match = re.search(r"listening on (http://\S+)", line)
        assert match, line + err_path.read_text()
        url = match.group(1)
        parts = urlsplit(url)
        yield ServedGateway(url, parts.hostname or "127.0.0.1", parts.port or 0, proc, err_path)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


class HealthWatch:
    """Polls ``GET /health`` on its own connection from a thread; ``worst`` is the slowest answer seen.

    With the gateway's ``pid``, a sample counts only the time the gateway's main thread (its event loop) was on
    a CPU while the request waited (``/proc/PID/task/PID/schedstat``), when that is less than the wall time: a
    loop blocked by work is on a CPU all along, while a machine busy with other tests (parallel workers) only
    keeps the loop waiting for a core, which is not what this bound is about.
    """

    def __init__(self, host: str, port: int, interval: float = 0.005, *, pid: int | None = None) -> None:
        self.host, self.port, self.interval, self.pid = host, port, interval, pid
        self.samples: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="health-watch", daemon=True)

    @property
    def worst(self) -> float:
        return max(self.samples, default=0.0)

    def __enter__(self) -> "HealthWatch":
        self._thread.start()
        deadline = time.monotonic() + 5
        while len(self.samples) < 3 and time.monotonic() < deadline:  # the connection is up and warm
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(3 * self.interval)  # a sample that started during the request ends after it
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        while not self._stop.is_set():
            start, cpu = time.perf_counter(), self._loop_cpu()
            try:
                conn.request("GET", "/health", headers={"Host": f"127.0.0.1:{self.port}"})
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    self.failures.append(f"status {response.status}")
            except (OSError, http.client.HTTPException) as exc:
                self.failures.append(f"{type(exc).__name__}: {exc}")
                conn.close()
                conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
            took = time.perf_counter() - start
            if cpu is not None:
                after = self._loop_cpu()
                took = min(took, after - cpu) if after is not None else took
            self.samples.append(took)
            time.sleep(self.interval)
        conn.close()

    def _loop_cpu(self) -> float | None:
        """Seconds the gateway's main thread has spent on a CPU, or None without a pid (or once it is gone)."""
        if self.pid is None:
            return None
        try:
            with open(f"/proc/{self.pid}/task/{self.pid}/schedstat") as stat:
                return int(stat.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            return None

    def mark(self) -> int:
        """Where the samples stand now (see :meth:`worst_since`)."""
        return len(self.samples)

    def worst_since(self, mark: int) -> float:
        time.sleep(3 * self.interval)  # a sample that started during the request ends after it
        return max(self.samples[max(mark - 1, 0):], default=0.0)

    def assert_responsive(self, what: str = "") -> None:
        assert not self.failures, f"/health failed during {what}: {self.failures[:3]}"
        assert len(self.samples) >= 3, "the watcher took no samples"
        assert self.worst <= HEALTH_BOUND, f"/health took {self.worst * 1e3:.0f} ms during {what}"


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def request(gw: ServedGateway, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None, timeout: float = 30) -> Answer:
    """One request on a fresh connection, headers exactly as given (plus Host and Content-Length)."""
    conn = http.client.HTTPConnection(gw.host, gw.port, timeout=timeout)
    try:
        sent = {"Host": f"127.0.0.1:{gw.port}", **(headers or {})}
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in sent.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        conn.close()


def post_json(gw: ServedGateway, path: str, body: bytes | Any, headers: dict[str, str] | None = None,
              timeout: float = 30) -> Answer:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return request(gw, "POST", path, raw, {"Content-Type": "application/json", **(headers or {})}, timeout)


def assert_openai_error(answer: Answer, status: int, code: str | None = None) -> dict:
    """The refusal a client sees: the status, JSON, OpenAI's four fields (and ``code`` when given)."""
    assert answer.status == status, (answer.status, answer.body[:300])
    assert answer.headers["content-type"].startswith("application/json"), answer.headers
    error = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"] and "Traceback" not in error["message"]
    if code is not None:
        assert error["code"] == code, error
    return error


def raw_socket(gw: ServedGateway) -> socket.socket:
    sock = socket.create_connection((gw.host, gw.port), timeout=10)
    return sock


def closed_by_peer(sock: socket.socket, within: float) -> bytes | None:
    """What the server sent before closing ``sock``, or None if it is still open after ``within`` s."""
    sock.settimeout(within)
    received = b""
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                return received
            received += chunk
    except socket.timeout:
        return None
    except ConnectionResetError:
        return received
    return None
