"""When the fast transport retries an upstream request, and how long it waits first.

The same policy as the ``openai`` SDK's client (so ``model.transport: fast``
and ``sdk`` behave alike), written out here because the SDK keeps it in
private methods (``_should_retry``, ``_calculate_retry_timeout``,
``_parse_retry_after_header``) that an upgrade may change or remove without
notice. ``tests/agent/test_agent_retry_policy.py`` states the policy on its
own and checks it against the installed SDK, so a drift shows up as a
failing test rather than as a silent difference between the two transports.

- A failed answer is retried on 408, 409, 429 and 5xx, unless the server
  says otherwise (``x-should-retry: true|false`` wins over the status) or
  asks for a wait over :data:`MAX_RETRY_AFTER` seconds.
- The wait is the server's ``retry-after-ms`` / ``retry-after`` (seconds or
  an HTTP date) when it is in (0, :data:`MAX_RETRY_AFTER`], else an
  exponential backoff from :data:`INITIAL_DELAY` doubling per retry up to
  :data:`MAX_DELAY`, less a random 0-25 % jitter.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from typing import Mapping

#: The first backoff, in seconds (the SDK's ``INITIAL_RETRY_DELAY``).
INITIAL_DELAY = 0.5
#: The longest backoff (the SDK's ``MAX_RETRY_DELAY``).
MAX_DELAY = 8.0
#: The longest server-requested wait that is honoured; a longer one is not retried (``MAX_RETRY_AFTER_DELAY``).
MAX_RETRY_AFTER = 120.0
#: Statuses retried besides every 5xx: request timeout, lock conflict, rate limit.
RETRIED_STATUSES = frozenset({408, 409, 429})

Headers = Mapping[str, str]


def retry_after(headers: Headers | None) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms`` first, then ``retry-after``), or None.

    Non-standard float seconds are accepted; a number too large for a float
    is an excessive wait (reported as just over :data:`MAX_RETRY_AFTER`, so
    it is refused rather than replaced by a short backoff). A date in the
    past gives a negative number (callers then back off instead).
    """
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value)
        except ValueError:
            continue
        if delay == math.inf and value.strip().lower() not in ("inf", "+inf", "infinity", "+infinity"):
            return MAX_RETRY_AFTER + 1
        return delay / divisor
    try:
        parsed = email.utils.parsedate_tz(headers.get("retry-after"))  # type: ignore[arg-type]
        if parsed is None:
            return None
        when = email.utils.mktime_tz(parsed)
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    return float(when - time.time())


def should_retry(status: int, headers: Headers) -> bool:
    """Whether a non-2xx answer with ``status`` and ``headers`` is worth another attempt."""
    wait = retry_after(headers)
    if wait is not None and math.isfinite(wait) and wait > MAX_RETRY_AFTER:
        return False
    told = headers.get("x-should-retry")
    if told == "true":
        return True
    if told == "false":
        return False
    return status in RETRIED_STATUSES or status >= 500


def retry_delay(remaining: int, max_retries: int, headers: Headers | None = None,
                rand: "random.Random | None" = None) -> float:
    """Seconds to wait before the next attempt, with ``remaining`` retries left of ``max_retries``.

    ``headers`` are the failed answer's (None after a connection error or a timeout).
    """
    wait = retry_after(headers)
    if wait is not None and math.isfinite(wait) and 0 < wait <= MAX_RETRY_AFTER:
        return wait
    retries_taken = min(max_retries - remaining, 1000)  # bounded: pow() must not overflow
    backoff = min(INITIAL_DELAY * pow(2.0, retries_taken), MAX_DELAY)
    jitter = 1 - 0.25 * (rand or random).random()
    return max(backoff * jitter, 0.0)
