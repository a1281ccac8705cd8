"""Graph API failures, translated into the two exceptions the core understands.

WhatsApp reports errors in the body (``{"error": {"code": ..., "message":
...}}``), usually with HTTP 400, so the code decides, not the status:

* ``130429`` (the number's throughput) and ``4``/``80007`` (app and account
  call limits) -> ``RateLimited(scope="bot")``: every chat of this number waits;
* ``131056`` (too many messages to one user) -> ``RateLimited`` for that chat:
  4 s first (Meta's suggestion), doubling while it repeats (:class:`PairBackoff`);
* ``131047`` (the 24-hour window is closed), ``131026`` (undeliverable), bad
  parameters, a rejected token... -> ``DeliveryError(retryable=False)``: the
  core logs it in one line and does not retry;
* HTTP 5xx and Meta's "temporarily unavailable" codes -> retryable.

Timeouts are translated by :mod:`.graph`: a request that may have reached
Meta is ``maybe_delivered`` and the core decides. The plugin never sleeps
or retries itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from hermes_gateway import DeliveryError, RateLimited

from .redaction import scrub

THROUGHPUT = 130429          # the business number's messages per second
PAIR_RATE = 131056           # too many messages from the number to one user
WINDOW_CLOSED = 131047       # more than 24 h since the user last wrote: only templates may be sent
UNDELIVERABLE = 131026
SPAM_LIMIT = 131048
APP_CALL_LIMIT = 4
ACCOUNT_CALL_LIMIT = 80007
TOKEN_INVALID = 190
UNKNOWN_OBJECT = 100       # invalid parameter; for GET /{id}: no such object for this token
#: Meta's own "try again later" codes (unknown error, temporarily unavailable, something went wrong).
TRANSIENT = frozenset({1, 2, 131000, 131016, 133004})
#: The wait for a bot-wide limit when Meta names none: throughput recovers within a second or two,
#: app call limits are counted per hour, so a wait keeps the core from hammering them.
BOT_WAITS = {THROUGHPUT: 2.0, APP_CALL_LIMIT: 60.0, ACCOUNT_CALL_LIMIT: 60.0}

Scope = Literal["chat", "bot"]


def rate_limited(retry_after: float, message: str, scope: Scope) -> RateLimited:
    """``RateLimited`` with its scope: "bot" for the number's own limits, which stop every chat."""
    return RateLimited(retry_after, message, scope=scope)


@dataclass
class PairBackoff:
    """The wait after ``131056`` for each user: ``first`` seconds, doubling while it repeats, up to ``cap``.

    A send that gets through resets that user's wait.
    """

    first: float = 4.0
    cap: float = 120.0
    _next: dict[str, float] = field(default_factory=dict)

    def hit(self, chat_id: str) -> float:
        wait = self._next.get(chat_id, self.first)
        self._next[chat_id] = min(wait * 2, self.cap)
        return wait

    def passed(self, chat_id: str) -> None:
        self._next.pop(chat_id, None)


@dataclass(frozen=True)
class GraphError:
    """The parts of a Graph API error body that matter."""

    status: int
    code: int | None
    message: str
    details: str = ""

    @classmethod
    def parse(cls, status: int, body: Any) -> "GraphError":
        error = body.get("error") if isinstance(body, Mapping) else None
        if not isinstance(error, Mapping):
            return cls(status, None, f"HTTP {status}")
        code = error.get("code")
        data = error.get("error_data")
        details = data.get("details", "") if isinstance(data, Mapping) else ""
        return cls(status, code if isinstance(code, int) and not isinstance(code, bool) else None,
                   str(error.get("message") or f"HTTP {status}"), str(details or ""))

    def describe(self, what: str) -> str:
        code = f" {self.code}" if self.code is not None else ""
        details = f" ({self.details})" if self.details and self.details not in self.message else ""
        return scrub(f"whatsapp {what}: HTTP {self.status}{code}: {self.message}{details}")


def translate(error: GraphError, what: str, chat_id: str, pairs: PairBackoff,
              retry_after_header: str | None = None) -> DeliveryError:
    """The core's view of a Graph API call ``what`` ("send", "typing") that failed with ``error``.

    The result carries WhatsApp's code as ``.code`` (None when the body had none).
    """
    exc = _translate(error, what, chat_id, pairs, retry_after_header)
    exc.code = error.code  # type: ignore[attr-defined]
    return exc


def _translate(error: GraphError, what: str, chat_id: str, pairs: PairBackoff,
               retry_after_header: str | None) -> DeliveryError:
    text = error.describe(what)
    code = error.code
    if code == PAIR_RATE:
        wait = _seconds(retry_after_header) or pairs.hit(chat_id)
        return rate_limited(wait, f"{text}; waiting {wait:g}s before writing to this user again", "chat")
    if code in BOT_WAITS:
        wait = _seconds(retry_after_header) or BOT_WAITS[code]
        return rate_limited(wait, f"{text}; every chat of this number waits {wait:g}s", "bot")
    if error.status == 429:  # a throttle without a WhatsApp code (a proxy, a BSP in between)
        wait = _seconds(retry_after_header) or pairs.hit(chat_id)
        return rate_limited(wait, text, "chat")
    if code == WINDOW_CLOSED:
        return DeliveryError(f"{text}: the user last wrote more than 24 hours ago, so WhatsApp accepts only "
                             "template messages; not retried", retryable=False)
    if code == TOKEN_INVALID or error.status == 401:
        return DeliveryError(f"{text}: the access token was rejected (check platforms.whatsapp.access_token)",
                             retryable=False)
    if code in TRANSIENT or error.status >= 500:
        return DeliveryError(text, retryable=True)
    return DeliveryError(text, retryable=False)  # 131026, 131048, 100 (bad parameter), 10 (permission)...


def _seconds(header: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (a proxy in front of Meta may send one), else None."""
    if not header:
        return None
    try:
        value = float(header)
    except ValueError:
        return None
    return value if 0 < value <= 3600 else None
