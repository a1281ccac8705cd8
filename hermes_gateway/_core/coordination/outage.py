"""Redis gone while the gateway runs: keep answering on local state, say so once a minute, come back.

Every shared operation asks :meth:`Outage.available` first; while the
coordinator is known to be down it is not asked again for ``retry`` seconds
(doubling while it stays down, up to ``max_retry``), so a dead or hung
Redis costs no connection attempt, and no timeout, per platform call. The callers
fall back to what is safe without it: the replica's own budgets, its own
dedupe, no lease. One warning per ``log_every`` seconds tells the operator,
with how many operations ran without it; one line says when it is back.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

log = logging.getLogger("hermes_gateway._core.coordination")


class Outage:
    """Whether the coordinator is reachable now, and the once-a-minute log line when it is not."""

    def __init__(self, where: str, *, retry: float = 1.0, max_retry: float = 10.0, log_every: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.where = where
        self.retry = retry
        self.max_retry = max_retry
        self.log_every = log_every
        self.clock = clock
        self.down = False
        self.since = 0.0
        self.fallbacks = 0          # operations that ran on local state, in all
        self.outages = 0            # times it went away
        self._unlogged = 0          # fallbacks since the last log line
        self._pause = retry         # the next pause after a failure
        self.retry_at = float("-inf")  # asked again from then on
        self._log_at = float("-inf")

    def available(self) -> bool:
        """True unless it failed less than ``retry`` seconds ago (then the caller falls back at once)."""
        if not self.down or self.clock() >= self.retry_at:
            return True
        self.fell_back()
        return False

    def fell_back(self) -> None:
        self.fallbacks += 1
        self._unlogged += 1

    def failed(self, exc: BaseException) -> None:
        """An operation could not reach it; the caller falls back."""
        now = self.clock()
        if not self.down:
            self.down, self.since = True, now
            self.outages += 1
            self._pause = self.retry
        self.retry_at = now + self._pause
        self._pause = min(self._pause * 2, self.max_retry)
        self.fell_back()
        if now >= self._log_at:
            self._log_at = now + self.log_every
            log.warning("coordination: Redis at %s is unreachable (%s); replies go on with this replica's own "
                        "budgets and dedupe and no chat lease (%d operation%s so far)", self.where,
                        type(exc).__name__, self._unlogged, "" if self._unlogged == 1 else "s")
            self._unlogged = 0

    def succeeded(self) -> None:
        if self.down:
            self.down = False
            self._log_at = float("-inf")
            log.warning("coordination: Redis at %s is back after %.0f s; shared budgets, dedupe and leases again",
                        self.where, self.clock() - self.since)
