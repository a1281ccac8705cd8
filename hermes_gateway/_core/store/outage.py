"""While the store fails, one log line a minute: not one per turn, per message or per burst of update ids.

A gateway whose database went away keeps answering (without history,
without recording) and must say so, but a busy bot would otherwise write a
line for every message. Each store has its own throttle, shared by every
caller that reports on it; a line says how many failures it stands for.
"""

from __future__ import annotations

import logging
import time
import weakref
from typing import Any

#: At most one line per this many seconds per store.
INTERVAL = 60.0


class _Throttle:
    def __init__(self) -> None:
        self.last = -float("inf")
        self.folded = 0


_throttles: "weakref.WeakKeyDictionary[Any, _Throttle]" = weakref.WeakKeyDictionary()


def report(store: Any, logger: logging.Logger, what: str, exc: BaseException) -> None:
    """Log ``conversation store unavailable, WHAT: EXC`` unless this store already did within :data:`INTERVAL`."""
    throttle = _throttles.get(store)
    if throttle is None:
        throttle = _throttles[store] = _Throttle()
    now = time.monotonic()
    if now - throttle.last < INTERVAL:
        throttle.folded += 1
        return
    more = f" (and {throttle.folded} more store failures since the last line)" if throttle.folded else ""
    logger.warning("conversation store unavailable, %s: %s%s", what, exc, more)
    throttle.last, throttle.folded = now, 0
