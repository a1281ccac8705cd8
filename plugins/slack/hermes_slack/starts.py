"""Keeping ``chat.startStream`` within Slack's limit (about 20 a minute per workspace) without waiting.

The core paces each platform with one bot-wide budget, and Slack's is spent
on ``chat.update`` (about 50 a minute per workspace). Starting a native
stream has its own, smaller limit, which a burst of replies (a busy channel,
many DMs at once) would run into. A plugin never sleeps or retries, so
instead of meeting Slack's 429 and making every chat wait, a reply whose
stream cannot start now without going over the limit uses the edit
transport (``chat.postMessage`` then ``chat.update``): the same text, only
without the streaming animation.

One client serves one app in one workspace, so one window per client is
one window per workspace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

#: Slack documents chat.startStream at about 20 calls a minute per workspace.
START_STREAMS_PER_MINUTE = 20
PERIOD = 60.0


@dataclass
class Start:
    """One ``chat.startStream`` call, counted from when it was sent and then from when Slack answered."""

    at: float


class StartWindow:
    """At most ``count`` stream starts in any ``period`` seconds (a rolling window, as Slack counts)."""

    def __init__(self, count: int = START_STREAMS_PER_MINUTE, period: float = PERIOD,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.count = count
        self.period = period
        self.clock = clock
        self._starts: list[Start] = []

    def take(self) -> Start | None:
        """Count a start now; None when that would make more than ``count`` in the window (do not start)."""
        now = self.clock()
        self._starts = [s for s in self._starts if now - s.at < self.period]
        if len(self._starts) >= self.count:
            return None
        start = Start(now)
        self._starts.append(start)
        return start

    def answered(self, start: Start) -> None:
        """Slack answered: count the start from now. Slack counted it on arrival, between the two, so the
        window here never frees a place before Slack's does."""
        start.at = self.clock()
