"""``run`` with ``api_server.workers: N`` (or ``--workers N``): N processes on one listening address.

The parent binds one ``SO_REUSEPORT`` socket per worker (:mod:`..http.workers`),
starts each worker as ``python -m hermes_gateway run --worker I/N/FD/CONTROL``
with its socket and one end of a socket pair, and then only supervises:

* **Start**: worker 0 first (it creates the store's tables, checks and starts
  the platforms), then the others together. A worker that fails to start
  fails the whole start (its one-line error is already on stderr): exit 1.
* **Control pair**: the parent first writes the media link key (one hex
  line: links sealed by one worker are served by any, see
  ``api_server.media``); the worker writes one ``ready`` line (its address
  and platforms). After that the end of the pair is how a worker learns that
  the parent died, however it died (SIGKILL included): it then stops itself,
  within the shutdown grace, so no worker outlives the parent.
* **A worker dies**: it is logged and started again after a short, growing
  delay; a worker that dies more than :data:`RESTART_LIMIT` times within
  :data:`RESTART_WINDOW` seconds stops the whole gateway (exit 1), so a
  crash loop ends up in the service manager's hands, not in a tight loop here.
* **SIGTERM / SIGINT**: every worker gets SIGTERM and stops as one gateway
  does (``shutdown_grace``); any still there ``shutdown_grace + 5`` seconds
  later is killed. Exit 0. A second signal kills them at once (exit 130).

Workers run in their own session, so a Ctrl-C in the terminal reaches the
parent only, which stops them in order.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import logging
import os
import secrets
import signal
import socket
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..config import MAX_WORKERS, Config
from ..errors import ConfigError, StartError
from ..http.workers import WorkerSlot, bind_listeners

log = logging.getLogger("hermes_gateway._core.cli")

#: A worker may die this many times within :data:`RESTART_WINDOW` seconds; once more stops the gateway.
RESTART_LIMIT = 5
RESTART_WINDOW = 60.0
#: Seconds before the first restart of a worker, doubled for each recent death, at most :data:`RESTART_MAX_DELAY`.
RESTART_DELAY = 0.5
RESTART_MAX_DELAY = 8.0
#: Seconds past ``shutdown_grace`` a worker gets to exit after SIGTERM before it is killed.
STOP_MARGIN = 5.0


def workers_argument(value: str) -> int:
    """``--workers N``: a whole number from 1 to MAX_WORKERS, or ``auto`` (one per core)."""
    if value.strip().lower() == "auto":
        return max(1, min(MAX_WORKERS, os.cpu_count() or 1))
    try:
        count = int(value)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {MAX_WORKERS}, or auto; got {value!r}")
    return count


def with_workers(config: Config, count: int | None) -> Config:
    """``config`` with ``api_server.workers`` set by the command line (None: as the config says)."""
    if count is None:
        return config
    return replace(config, api_server=replace(config.api_server, workers=count))


def check_workers(config: Config) -> None:
    """What several workers need from the rest of the config; a :class:`ConfigError` naming the key if missing."""
    count = config.api_server.workers
    if count <= 1:
        return
    if not config.api_server.enabled:
        raise ConfigError(config.source, "api_server.workers", f"1 while api_server.enabled is false (the workers "
                          f"serve the API; nothing to share out), got {count}")
    from ..store import MEMORY, store_location

    if store_location(config) == MEMORY:
        raise ConfigError(config.source, "store.path", f"a file or PostgreSQL with api_server.workers: {count} "
                          "(the workers share the store; ':memory:' lives in one process)")
    if config.web.enabled:
        raise ConfigError(config.source, "web.enabled", f"false with api_server.workers: {count} (the console's "
                          "sessions and chats live in one process; run it with workers: 1)")


# -- the worker's side --------------------------------------------------------------------------------------


def parse_worker(value: str, config: Config) -> tuple[WorkerSlot, socket.socket]:
    """``--worker I/N/LISTEN_FD/CONTROL_FD`` (set by the parent) as this worker's slot and its control socket.

    The parent's first line on the control pair is the media link key (hex), shared by every worker.
    """
    index, count, listen_fd, control_fd = (int(part) for part in value.split("/"))
    listener = socket.socket(fileno=listen_fd)
    control = socket.socket(fileno=control_fd)
    control.settimeout(30)
    line = b""
    while not line.endswith(b"\n"):
        data = control.recv(256)
        if not data:
            raise StartError("the parent process went away before this worker started")
        line += data
    control.setblocking(False)
    return WorkerSlot(index, count, listener, replicas=bool(config.coordination.url),
                      media_key=bytes.fromhex(line.decode().strip())), control


def watch_parent(control: socket.socket, stop: asyncio.Event) -> None:
    """Set ``stop`` when the parent's end of the control pair closes (the parent exited, however)."""
    loop = asyncio.get_running_loop()

    def readable() -> None:
        try:
            data = control.recv(64)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(control.fileno())
            if not stop.is_set():
                log.warning("the parent process is gone; this worker stops")
                stop.set()

    loop.add_reader(control.fileno(), readable)


def report_ready(control: socket.socket, banner: dict[str, Any]) -> None:
    """Tell the parent this worker serves (one JSON line)."""
    control.setblocking(True)
    try:
        control.sendall(json.dumps({"ready": True, **banner}).encode() + b"\n")
    finally:
        control.setblocking(False)


# -- the parent's side --------------------------------------------------------------------------------------


class WorkerProcess:
    """One worker: its socket (kept open here across restarts), its process, its control pair, its deaths."""

    def __init__(self, index: int, count: int, sock: socket.socket, command: list[str], media_key: bytes) -> None:
        self.media_key = media_key
        self.index = index
        self.count = count
        self.sock = sock
        self.command = command
        self.process: asyncio.subprocess.Process | None = None
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.deaths: collections.deque[float] = collections.deque()

    async def spawn(self) -> None:
        self.close_control()
        mine, theirs = socket.socketpair()
        fds = (self.sock.fileno(), theirs.fileno())
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.command, "--worker", f"{self.index}/{self.count}/{fds[0]}/{fds[1]}", pass_fds=fds,
                stdin=asyncio.subprocess.DEVNULL, start_new_session=True)
        finally:
            theirs.close()
        mine.sendall(self.media_key.hex().encode() + b"\n")  # the first line a worker reads
        self.reader, self.writer = await asyncio.open_connection(sock=mine)

    async def ready(self) -> dict[str, Any] | None:
        """The worker's ready line, or None if it exited (or closed the pair) first."""
        assert self.reader is not None
        line = await self.reader.readline()
        try:
            message = json.loads(line) if line else None
        except ValueError:
            message = None
        return message if isinstance(message, dict) and message.get("ready") else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def signal(self, sig: int) -> None:
        if self.alive:
            assert self.process is not None
            try:
                self.process.send_signal(sig)
            except ProcessLookupError:
                pass

    def close_control(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def describe_exit(code: int | None) -> str:
    if code is None:
        return "is gone"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def worker_command(args: argparse.Namespace, config: Config) -> list[str]:
    """How a worker is started: this interpreter, the same config file, loop and verbosity."""
    command = [sys.executable, "-m", "hermes_gateway"]
    verbose = int(getattr(args, "verbose", 0) or 0)
    if verbose:
        command.append("-" + "v" * min(verbose, 2))
    command.append("run")
    if config.source != "(defaults)":
        command += ["--config", str(Path(config.source).resolve())]
    return command + ["--loop", getattr(args, "loop", "auto") or "auto"]


class Supervisor:
    """Starts, watches, restarts and stops the workers; see the module docstring."""

    def __init__(self, config: Config, command: list[str]) -> None:
        self.config = config
        self.count = config.api_server.workers
        self.command = command
        self.grace = config.conversation.shutdown_grace
        self.workers: list[WorkerProcess] = []
        self.stopping = asyncio.Event()
        self.failed = 0  # the exit code when the workers could not be kept running

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM)

        def on_signal() -> None:
            if self.stopping.is_set():
                for worker in self.workers:
                    worker.signal(signal.SIGKILL)
                sys.exit(130)  # a second Ctrl-C: out now, workers included
            self.stopping.set()

        sockets = bind_listeners(self.config.api_server.host, self.config.api_server.port, self.count)
        media_key = secrets.token_bytes(32)  # media links sealed by one worker, served by any (never stored)
        self.workers = [WorkerProcess(i, self.count, sock, self.command, media_key)
                        for i, sock in enumerate(sockets)]
        for sig in signals:
            loop.add_signal_handler(sig, on_signal)
        try:
            started = asyncio.ensure_future(self._start())
            stop = asyncio.ensure_future(self.stopping.wait())
            await asyncio.wait({started, stop}, return_when=asyncio.FIRST_COMPLETED)
            if started.done() and started.result():
                banner = started.result()
                print(f"hermes-gateway: {banner}; Ctrl-C to stop", flush=True)
                keepers = [asyncio.ensure_future(self._keep(worker)) for worker in self.workers]
                await stop
                for task in keepers:
                    task.cancel()
                print("hermes-gateway: stopping", flush=True)
            else:
                started.cancel()
                stop.cancel()
                if not self.stopping.is_set():
                    self.failed = self.failed or 1
        finally:
            await self._stop_all()
            for sock in sockets:
                sock.close()
            for sig in signals:
                loop.remove_signal_handler(sig)
        if self.failed:
            return self.failed
        print("hermes-gateway: stopped", flush=True)
        return 0

    async def _start(self) -> str | None:
        """Worker 0, then the others at once; the banner, or None when one could not start."""
        first = await self._start_one(self.workers[0])
        if first is None:
            return None
        rest = await asyncio.gather(*(self._start_one(worker) for worker in self.workers[1:]))
        if any(message is None for message in rest):
            return None
        pids = ", ".join(str(worker.process.pid) for worker in self.workers if worker.process is not None)
        parts = list(first.get("parts") or [])
        parts.insert(1 if parts else 0, f"{self.count} workers (pids {pids})")
        return "; ".join([*parts, str(first.get("model", ""))])

    async def _start_one(self, worker: WorkerProcess) -> dict[str, Any] | None:
        await worker.spawn()
        message = await worker.ready()
        if message is None:
            assert worker.process is not None
            code = await worker.process.wait()
            if code not in (1, 2):  # 1 and 2: it said why in one line ("cannot start", "config error")
                print(f"hermes-gateway: worker {worker.index} {describe_exit(code)} before it was ready",
                      file=sys.stderr, flush=True)
            self.failed = code if code and code > 0 else 1
        return message

    async def _keep(self, worker: WorkerProcess) -> None:
        """Restart ``worker`` whenever it dies, until stopping, or stop everything when it dies too often."""
        while True:
            assert worker.process is not None
            code = await worker.process.wait()
            if self.stopping.is_set():
                return
            now = time.monotonic()
            worker.deaths.append(now)
            while worker.deaths and worker.deaths[0] < now - RESTART_WINDOW:
                worker.deaths.popleft()
            if len(worker.deaths) > RESTART_LIMIT:
                print(f"hermes-gateway: worker {worker.index} {describe_exit(code)}, its {len(worker.deaths)}th "
                      f"death in {RESTART_WINDOW:g} s; stopping", file=sys.stderr, flush=True)
                self.failed = 1
                self.stopping.set()
                return
            delay = min(RESTART_MAX_DELAY, RESTART_DELAY * 2 ** (len(worker.deaths) - 1))
            log.error("worker %d (pid %s) %s; restarting it in %.1f s", worker.index, worker.process.pid,
                      describe_exit(code), delay)
            try:
                await asyncio.wait_for(self.stopping.wait(), delay)
                return
            except asyncio.TimeoutError:
                pass
            try:
                await worker.spawn()
            except OSError as exc:  # counted as another death when the loop comes round
                log.error("worker %d could not be started again: %s", worker.index, exc)
                continue
            if await worker.ready() is not None:
                log.warning("worker %d is back (pid %s)", worker.index, worker.process.pid)

    async def _stop_all(self) -> None:
        """SIGTERM to every worker; whoever is still there after ``shutdown_grace`` + :data:`STOP_MARGIN` is killed."""
        alive = [worker for worker in self.workers if worker.alive]
        for worker in alive:
            worker.signal(signal.SIGTERM)
        waits = [worker.process.wait() for worker in alive if worker.process is not None]
        if waits:
            try:
                await asyncio.wait_for(asyncio.gather(*waits), self.grace + STOP_MARGIN)
            except asyncio.TimeoutError:
                for worker in alive:
                    if worker.alive:
                        log.error("worker %d did not stop in %.0f s; killing it", worker.index,
                                  self.grace + STOP_MARGIN)
                        worker.signal(signal.SIGKILL)
                await asyncio.gather(*(w.process.wait() for w in alive if w.process is not None))
        for worker in self.workers:
            worker.close_control()


async def supervise(config: Config, args: argparse.Namespace) -> int:
    """Serve with ``config.api_server.workers`` processes until a signal; the exit code."""
    return await Supervisor(config, worker_command(args, config)).run()
