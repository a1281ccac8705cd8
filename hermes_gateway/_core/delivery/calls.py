"""The one path of every call into a chat that is not a message of a reply's text.

A reply's text goes through :class:`~.session.StreamSession` (previews, the
ledger, the final text, each with its own rules for what may be retried).
Every other call into a chat — the typing indicator, an attachment, a status
reaction, a question with buttons and the update that closes it — goes
through :func:`call_into_chat`, so each one, whoever makes it:

* waits for the chat's budget and the bot's (and the replicas' shared ones),
  a 429's ``retry_after`` included: **no call reaches a chat before its
  ``retry_after`` has passed**;
* takes one token from each (:meth:`.pacing.Pacer.acquire`), in the chat's
  turn (:meth:`.pacing.Pacer.turn`: one call into a chat is out at a time,
  so a 429 is known before the next call goes);
* on a 429 blocks the budget the 429 names (the chat's, or every chat of the
  bot) and tries again once it has passed: **nothing is lost** to a 429,
  unless the caller asked for one attempt (typing, which is refreshed
  anyway) or the 429s outlast ``max_rate_limits`` or the deadline;
* retries a retryable failure with back-off, and never repeats a call that
  may have landed (``maybe_delivered``).

``claim=True`` puts the caller ahead of a streaming reply's previews: while
it waits, the chat's budget counts it in ``ChatBudget.claims``, so previews
leave it the next token (a question with buttons or a reaction must not
wait behind a reply that streams for a minute).

A plugin never sleeps, retries or throttles: it raises
:class:`~hermes_gateway._core.errors.RateLimited` or
:class:`~hermes_gateway._core.errors.DeliveryError`, and this module (or the
session, for the text) does the rest.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Awaitable, Callable, Generic, TypeVar

from ..errors import DeliveryError, RateLimited
from ..telemetry import platform_call
from .pacing import Pacer
from .queue import FINAL, PROMPT

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Why a call did not succeed (:attr:`CallOutcome.failure`).
UNCERTAIN = "uncertain"          # it may have landed (a timeout after the request went out): never repeated
DEADLINE = "deadline"            # the deadline passed before it could be made
RATE_LIMITED = "rate limited"    # 429s beyond ``max_rate_limits``
FAILED = "could not be sent"     # refused for good, retries used up, or the plugin raised something else
WITHDRAWN = "withdrawn"          # ``withdraw_on_text``: the reply ended or its text came while it waited


@dataclass(frozen=True)
class CallOutcome(Generic[T]):
    """What became of one call: its result, or why there is none."""

    value: T | None = None
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


async def call_into_chat(pacer: Pacer, invoke: Callable[[], Awaitable[T]], *, what: str, label: str,
                         deadline: float = float("inf"), max_retries: int = 5, max_rate_limits: int = 20,
                         claim: bool = False, priority: int | None = None,
                         withdraw_on_text: bool = False) -> CallOutcome[T]:
    """Make the call ``invoke()`` makes, paced by ``pacer``'s budgets, until it succeeds or cannot.

    ``deadline`` (loop time) is stretched by the 429 waits the platform asked
    for: a call is never given up because the platform said "wait".
    ``max_rate_limits=0`` and ``max_retries=0``: one attempt (its 429 still
    blocks the chat for every other call). ``what``/``label`` name the call
    and the chat in the log. ``priority``: its place in the bot budget's queue (:mod:`.queue`; by default
    a claimant's is ``PROMPT``, any other's ``FINAL``). ``withdraw_on_text``: the typing indicator, which
    the reply's end or its first words make pointless while it waits for the bot's token.
    """
    failures = rate_limits = 0
    if priority is None:
        priority = PROMPT if claim else FINAL
    while True:
        if pacer.now() > deadline + pacer.rate_limit_waits:
            return CallOutcome(failure=DEADLINE)
        if not await _wait_turn(pacer, claim, deadline):
            return CallOutcome(failure=DEADLINE)
        if not await pacer.bot_slot(priority, interruptible=withdraw_on_text, on_change=withdraw_on_text):
            return CallOutcome(failure=WITHDRAWN)
        try:
            async with pacer.turn():  # one call into the chat at a time: a 429 is known before the next goes
                await pacer.acquire()  # the chat's and the bot's budget, shared by every replica when replicated
                value = await platform_call(invoke(), what)
        except RateLimited as exc:
            pacer.rate_limited(exc)
            rate_limits += 1
            if rate_limits > max_rate_limits:
                log.info("%s on %s: rate limited %d times; not made", what, label, rate_limits)
                return CallOutcome(failure=RATE_LIMITED)
            continue
        except DeliveryError as exc:
            if exc.maybe_delivered:
                return CallOutcome(failure=UNCERTAIN)
            failures += 1
            if exc.retryable and failures <= max_retries:
                pacer.back_off(failures)
                continue
            log.info("%s on %s failed: %s", what, label, exc)
            return CallOutcome(failure=FAILED)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a plugin bug is a failed call, not a crashed caller
            log.warning("%s on %s raised %s: %s", what, label, type(exc).__name__, exc)
            return CallOutcome(failure=FAILED)
        finally:
            pacer.refund()  # granted but not charged (cancelled in the chat's turn): back to the queue
        return CallOutcome(value)


async def _wait_turn(pacer: Pacer, claim: bool, deadline: float) -> bool:
    """Wait until the call may be made (False: not before the deadline). A claimant needs one token only."""
    if not claim:
        await pacer.until(pacer.ready_at, interruptible=False)
        return True
    budget = pacer.budget
    budget.claims += 1
    try:
        while True:
            now = pacer.now()
            at = pacer.ready_at(now, reserve=-float(budget.claims))  # claimants take turns
            if at <= now:
                return True
            if at > deadline + pacer.rate_limit_waits:
                return False
            await asyncio.sleep(at - now)
    finally:
        budget.claims -= 1
