"""Mattermost's rate limiter, as the emulator applies it: GCRA per token, with the server's headers.

``app/ratelimit.go`` wraps throttled's ``GCRARateLimiter`` with
``RateQuota{MaxRate: PerSec(PerSec), MaxBurst: MaxBurst}`` (defaults 10
and 100 when ``RateLimitSettings.Enable`` is on), keyed by the token
(``VaryByUser``). Every answer carries ``X-RateLimit-Limit`` (MaxBurst + 1),
``X-RateLimit-Remaining`` and ``X-RateLimit-Reset`` (seconds until the
whole burst is back, rounded up); a refused one also ``Retry-After``
(seconds, rounded up), status 429 and the plain-text body ``limit
exceeded``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Verdict:
    limited: bool
    headers: dict[str, str]
    retry_after: float  # seconds (exact), 0 when allowed


class Gcra:
    """throttled's GCRA: emission interval 1/per_sec, tolerance (max_burst + 1) intervals."""

    def __init__(self, per_sec: float = 10.0, max_burst: int = 100) -> None:
        self.interval = 1.0 / per_sec
        self.limit = max_burst + 1
        self.tolerance = self.interval * self.limit
        self.tat: dict[str, float] = {}

    def take(self, key: str, now: float) -> Verdict:
        tat = max(self.tat.get(key, now), now)
        new_tat = tat + self.interval
        allow_at = new_tat - self.tolerance
        diff = now - allow_at
        if diff < 0:
            reset = tat - now
            return Verdict(True, {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": "0",
                                  "X-RateLimit-Reset": str(math.ceil(reset)),
                                  "Retry-After": str(math.ceil(-diff))}, -diff)
        self.tat[key] = new_tat
        remaining = int(diff / self.interval + 1e-9)
        return Verdict(False, {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": str(remaining),
                               "X-RateLimit-Reset": str(math.ceil(new_tat - now))}, 0.0)
