"""The sign-in throttle: wrong guesses slow their sender, and an attempt is counted before it is checked.

Each client address (:mod:`.client_address`) may guess wrong
:data:`FREE_GUESSES` times; from then on each further try waits twice as
long as the last (capped at :data:`MAX_LOCKOUT`), and a try made too soon is
answered 429 without its secret being looked at. A right secret clears the
address's count.

The order is what makes it hold: :meth:`Throttle.reserve` counts the attempt
as a failure *before* the secret is compared, and :meth:`Throttle.succeeded`
takes the count back when it was right. So however many sign-ins arrive at
once, each one sees the attempts reserved before it, and no more than the
free ones are ever checked in parallel (counting after the check, as before,
let 200 parallel tries from one address through).

Only numbers are kept, keyed by an address or a network, never a secret;
the oldest of more than :data:`MAX_TRACKED` keys is forgotten first.

Per client, not per account (issue 33 asked for both; this is the
decision). A sign-in sends only a secret (``web.password`` or an API key),
no account name, so a wrong try names no account: which account a try was
for is known only once its secret is right. A count "per account" would
therefore be one count of every wrong try from anywhere, and whoever kept
it full (five wrong tries, then one each time the wait ends) would lock
the operator out from every address. Counting per key prefix or
fingerprint would not help either: a wrong guess is no key at all. So the
count is per client address (behind a reverse proxy only when
``web.trusted_proxies`` names it, or every browser is one client:
:mod:`.client_address`), and guesses spread over many addresses are not
slowed here: they meet the secret's strength (``web.password`` has at
least 8 characters; API keys are as long as the operator makes them).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

#: Failed sign-ins from one address before each further try must wait.
FREE_GUESSES = 5
#: The longest wait between two tries from one address, in seconds.
MAX_LOCKOUT = 300.0
#: Addresses whose failed guesses are remembered at once.
MAX_TRACKED = 10_000


@dataclass
class _Guesses:
    failures: int = 0
    next_try: float = 0.0


@dataclass(frozen=True)
class Attempt:
    """A reserved try: already counted as a failure, until :meth:`Throttle.succeeded` says it was right."""

    key: str


class Throttle:
    """Wrong guesses per key (a client address), in this process's memory."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, free: int = FREE_GUESSES,
                 max_wait: float = MAX_LOCKOUT, tracked: int = MAX_TRACKED) -> None:
        self.clock = clock
        self.free = free
        self.max_wait = max_wait
        self.tracked = tracked
        self._guesses: OrderedDict[str, _Guesses] = OrderedDict()

    def wait(self, key: str) -> float:
        """Seconds ``key`` must still wait before its next try (0: it may try now)."""
        guesses = self._guesses.get(key)
        return 0.0 if guesses is None else max(0.0, guesses.next_try - self.clock())

    def reserve(self, key: str) -> Attempt | float:
        """Count a try of ``key`` now (as a failure): the :class:`Attempt`, or the seconds to wait first."""
        wait = self.wait(key)
        if wait > 0:
            return wait
        guesses = self._guesses.setdefault(key, _Guesses())
        self._guesses.move_to_end(key)
        while len(self._guesses) > self.tracked:
            self._guesses.popitem(last=False)
        guesses.failures += 1
        if guesses.failures >= self.free:
            guesses.next_try = self.clock() + min(self.max_wait, 2.0 ** (guesses.failures - self.free))
        return Attempt(key)

    def succeeded(self, attempt: Attempt) -> None:
        """The reserved try was right: its key starts afresh."""
        self._guesses.pop(attempt.key, None)
