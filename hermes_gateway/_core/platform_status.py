"""Each platform's state as an operator sees it: its connection, how it receives, its last error, its 429s.

The gateway knows when it started and stopped a platform's client, the
client's build knows whether it mounted a webhook route, and the delivery
core's observer (:mod:`.metrics`) sees every platform call end. None of that
was kept anywhere an operator could read it; :class:`PlatformStatuses` keeps
it, one small record per platform, for the web console's dashboard.
Recording is cheap (a few attribute writes, a deque append on a 429) and
never raises, so it can sit on the delivery core's call path.

The state (:meth:`PlatformStatus.state`): ``starting`` while the client's
``start()`` runs; then what the client reports through its context
(``PlatformContext.report_connected`` / ``report_disconnected``):
``connected`` or ``disconnected`` (with the error); ``running`` for a
started client that reports nothing (the gateway cannot tell whether it is
reachable); ``stopped`` before its start and after its stop. A report made
while the platform is not running (a websocket closing during the stop) is
not recorded: stopping is not an error.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from .secrets import scrub

#: 429s older than this are forgotten (the dashboard shows those of the last hour).
RATE_LIMIT_WINDOW = 3600.0
#: At most this many 429 times are kept per platform (a storm of them must not grow memory).
RATE_LIMIT_KEEP = 10_000


@dataclass
class PlatformStatus:
    """One platform: its lifecycle, how it receives, its last failure and its recent 429s."""

    name: str
    mode: str | None = None            # "polling", "webhook", "socket", ... (see :func:`receive_mode`)
    running: bool = False              # the gateway started its client and has not stopped it
    started_at: float | None = None    # Unix time of the last start
    stopped_at: float | None = None    # Unix time of the last stop
    last_error: str | None = None      # one line: the last failed platform call, or a failed start
    last_error_at: float | None = None
    starting: bool = False             # the client's start() is running
    connection: str | None = None      # what the client last reported: None, "connected" or "disconnected"
    connection_at: float | None = None  # Unix time of that report
    connection_error: str | None = None  # the error of a "disconnected" report (one line, masked)
    rate_limited_at: deque[float] = field(default_factory=lambda: deque(maxlen=RATE_LIMIT_KEEP))

    def state(self) -> str:
        """``starting``, ``connected``, ``disconnected``, ``running`` (reports nothing) or ``stopped``."""
        if not (self.running or self.starting):
            return "stopped"
        if self.connection is not None:
            return self.connection
        return "starting" if self.starting else "running"

    def rate_limited_since(self, since: float) -> int:
        """How many 429s the platform answered at or after ``since`` (Unix time)."""
        return sum(1 for at in self.rate_limited_at if at >= since)


class PlatformStatuses:
    """The :class:`PlatformStatus` of every platform one gateway knows of (created on first mention)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._by_name: dict[str, PlatformStatus] = {}
        #: bumped on every change, so a watcher (the dashboard's live updates) knows when to look again
        self.version = 0

    def get(self, name: str) -> PlatformStatus:
        status = self._by_name.get(name)
        if status is None:
            status = self._by_name[name] = PlatformStatus(name)
        return status

    def all(self) -> list[PlatformStatus]:
        return list(self._by_name.values())

    def set_mode(self, name: str, mode: str) -> None:
        self.get(name).mode = mode
        self.version += 1

    def starting(self, name: str) -> None:
        """The gateway is calling the client's ``start()``: what an earlier run reported is forgotten."""
        status = self.get(name)
        status.starting, status.connection, status.connection_error = True, None, None
        status.connection_at = None
        self.version += 1

    def started(self, name: str) -> None:
        """The gateway started the platform (its client's ``start()`` returned)."""
        status = self.get(name)
        status.running, status.starting, status.started_at = True, False, self.clock()
        self.version += 1

    def start_failed(self, name: str, error: str) -> None:
        """The client's ``start()`` raised: not starting any more, ``error`` the last error."""
        self.get(name).starting = False
        self.failed(name, error)

    def stopped(self, name: str) -> None:
        status = self.get(name)
        if status.running:
            status.running, status.stopped_at = False, self.clock()
            self.version += 1

    def connected(self, name: str) -> None:
        """The client reported its platform reachable (a no-op when it already was, or when not running)."""
        status = self.get(name)
        if not (status.running or status.starting) or status.connection == "connected":
            return
        status.connection, status.connection_error, status.connection_at = "connected", None, self.clock()
        self.version += 1

    def disconnected(self, name: str, error: str) -> None:
        """The client reported its platform unreachable, with why: also the platform's last error."""
        status = self.get(name)
        if not (status.running or status.starting):
            return
        line = _one_line(error)
        if status.connection == "disconnected" and status.connection_error == line:
            return  # the same failure again (a poll loop backing off): nothing new to show
        status.connection, status.connection_error, status.connection_at = "disconnected", line, self.clock()
        status.last_error, status.last_error_at = line, status.connection_at
        self.version += 1

    def report(self, name: str, up: bool, error: str | None) -> None:
        """What a :class:`~.platform_context.PlatformContext` calls on ``report_connected/disconnected``."""
        if up:
            self.connected(name)
        else:
            self.disconnected(name, error or "disconnected")

    def failed(self, name: str, error: str) -> None:
        """A platform call failed (or its start did): kept as one line, every registered secret masked."""
        status = self.get(name)
        line = _one_line(error)
        status.last_error, status.last_error_at = line, self.clock()
        self.version += 1

    def rate_limited(self, name: str) -> None:
        """The platform answered a 429 (any scope)."""
        status = self.get(name)
        now = self.clock()
        status.rate_limited_at.append(now)
        while status.rate_limited_at and status.rate_limited_at[0] < now - RATE_LIMIT_WINDOW:
            status.rate_limited_at.popleft()
        self.version += 1


def _one_line(error: str) -> str:
    """``error`` as the dashboard shows it: its first line, at most 300 characters, every secret masked."""
    return scrub(error).splitlines()[0][:300] if error.strip() else "failed"


def receive_mode(settings: object, mounted_routes: bool) -> str:
    """How a platform receives: its settings' ``mode`` when it has one (Telegram's ``polling``/``webhook``,
    Slack's ``socket``/``http``), else ``webhook`` when its client mounted a route; else ``socket`` (a
    connection the client keeps open itself, as Discord's gateway) for a platform with settings (it
    connects somewhere), and ``in-process`` for one with none (the web chat, the reference platform)."""
    mode = getattr(settings, "mode", None)
    if isinstance(mode, str) and mode:
        return mode
    if mounted_routes:
        return "webhook"
    return "in-process" if settings is None else "socket"
