"""``hermes-gateway run`` as an operator runs it: a child process with a config file, stopped by a signal.

For the tests that only a real process can answer: does SIGTERM end it, with
exit code 0, within ``shutdown_grace`` plus a few seconds, whatever its
replies were doing? Its output goes to files in ``directory`` (never to a
pipe nobody reads, which would stall a chatty gateway), and the URL it
listens on is read from its banner.

    async with GatewayProcess(config, tmp_path, env={"TOKEN": ...}) as gateway:
        await gateway.started()
        ...  # talk to it through an emulator, at gateway.url
        stopped = await gateway.stop()
    assert stopped.returncode == 0 and stopped.seconds < 7
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

_LISTENING = re.compile(r"listening on (http://\S+?)[;\s]")


@dataclass(frozen=True)
class Stopped:
    """How the process ended after the signal: its exit code, how long it took, and what it wrote."""

    returncode: int | None  # None: still alive after the timeout (it was then killed)
    seconds: float
    out: str
    err: str


class GatewayProcess:
    """One ``python -m hermes_gateway run --config FILE`` child, with ``HERMES_HOME`` in ``directory``."""

    def __init__(self, config: Mapping[str, Any], directory: Path, *, env: Mapping[str, str] | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.config_path = self.directory / "config.yaml"
        self.config_path.write_text(yaml.safe_dump(dict(config)))
        self._env = {**os.environ, "HERMES_HOME": str(self.directory / "home"), **(env or {})}
        self._env.pop("HERMES_CONFIG", None)
        self._out = self.directory / "stdout.txt"
        self._err = self.directory / "stderr.txt"
        self.process: asyncio.subprocess.Process | None = None
        self.url: str | None = None

    async def __aenter__(self) -> "GatewayProcess":
        with open(self._out, "wb") as out, open(self._err, "wb") as err:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hermes_gateway", "run", "--config", str(self.config_path),
                env=self._env, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=err)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()

    @property
    def out(self) -> str:
        return self._out.read_text(errors="replace")

    @property
    def err(self) -> str:
        return self._err.read_text(errors="replace")

    async def started(self, timeout: float = 30.0) -> str:
        """Wait for the banner ("hermes-gateway: listening on ...; Ctrl-C to stop"); returns it."""
        assert self.process is not None, "use it in `async with`"
        deadline = time.monotonic() + timeout
        while "Ctrl-C to stop" not in self.out:
            if self.process.returncode is not None or time.monotonic() > deadline:
                raise AssertionError(f"the gateway did not start (exit {self.process.returncode}): "
                                     f"{self.out}\n{self.err[-3000:]}")
            await asyncio.sleep(0.05)
        banner = self.out
        found = _LISTENING.search(banner)
        self.url = found.group(1) if found else None
        return banner

    async def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> Stopped:
        """Send ``sig`` and wait up to ``timeout`` seconds for the process to end (then kill it)."""
        assert self.process is not None, "use it in `async with`"
        started = time.monotonic()
        self.process.send_signal(sig)
        try:
            await asyncio.wait_for(self.process.wait(), timeout)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()
            return Stopped(None, time.monotonic() - started, self.out, self.err)
        return Stopped(self.process.returncode, time.monotonic() - started, self.out, self.err)
