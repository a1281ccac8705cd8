"""Who gets through, after dedupe and the chat checks: known users, admins, pairing, and the rate limit.

The inbound runtime asks :meth:`Gate.screen` (synchronously, as ``receive``
must return at once) for each message that passed its own checks:

* admins (``access.admins``) always pass;
* a user in ``allowed_users`` (or anyone when there is no such list and
  ``access.unknown_users`` is not ``pair``) passes;
* anyone else, by ``access.unknown_users``: ``ignore`` drops the message,
  ``allow`` lets it pass, and ``pair`` answers :data:`CHECK`: the runtime then
  awaits :meth:`Gate.check`, which reads the store (so an approval made on any
  replica counts at once) and either lets the message through or answers
  a direct message with the user's pairing code;
* then ``access.max_messages_per_minute``: past it, messages are dropped
  (not queued), the sender is told once a minute, and each drop counts in
  ``hermes_inbound_rate_limited_total{platform}``.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Protocol

from ..store import StoreError
from . import pairing
from .store_ops import issue_code

if TYPE_CHECKING:
    from ..messages.incoming import Incoming

log = logging.getLogger(__name__)

#: :meth:`Gate.screen`'s answer when only the store can tell (an unknown user under ``pair``).
CHECK = "(pairing check)"
WINDOW = 60.0
SLOW_DOWN = "🐢 You're writing faster than I can keep up with (at most {n} messages a minute). " \
            "I skipped your last message{s}; please wait a moment."


class AccessPolicy(Protocol):
    """What the gate reads of a platform's access rules (:class:`~..inbound.access.AccessPolicy`, which sits above
    the operator's code: the inbound runtime hands it over)."""

    @property
    def allowed_users(self) -> frozenset[str] | None: ...


class Gate:
    """One per inbound runtime; ``clock`` for tests."""

    def __init__(self, access: Any, store: Callable[[], Any], metrics: Callable[[], Any] = lambda: None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``access``: ``operator.access``; ``store()`` keeps pairings; ``metrics()`` counts drops (or None)."""
        self.access = access
        self._store = store
        self._metrics = metrics
        self.clock = clock
        self._recent: dict[tuple[str, str], deque[float]] = {}
        self._told: dict[tuple[str, str], float] = {}
        self._skipped: dict[tuple[str, str], int] = {}
        self._codes_told: dict[tuple[str, str], float] = {}

    def mode(self, policy: AccessPolicy) -> str:
        """``access.unknown_users``, or its default: ``ignore`` with an ``allowed_users`` list, else ``allow``."""
        if self.access.unknown_users:
            return self.access.unknown_users
        return "ignore" if policy.allowed_users is not None else "allow"

    def screen(self, incoming: "Incoming", policy: AccessPolicy) -> str | None:
        """None: let it through; :data:`CHECK`: ask :meth:`check`; otherwise why it is dropped."""
        if self.access.is_admin(incoming.platform, incoming.sender_id):
            return None
        known = policy.allowed_users is not None and (incoming.sender_id or "") in policy.allowed_users
        mode = self.mode(policy)
        if not known and mode != "allow":
            if mode == "pair" and incoming.sender_id:
                return CHECK
            return f"user {incoming.sender_id} is not in allowed_users"
        return self.over_limit(incoming)

    async def check(self, incoming: "Incoming") -> tuple[str | None, str | None]:
        """For :data:`CHECK`: ``(None, None)`` lets the message through; otherwise ``(why dropped, what to
        answer)`` (the answer only for a direct message: the pairing code)."""
        store, user = self._store(), incoming.sender_id or ""
        try:
            if await store.is_approved(incoming.platform, user):
                return self.over_limit(incoming), None
            if not incoming.is_direct:
                return f"user {user} is not approved (pairing happens in a direct message)", None
            now = time.time()
            code, fresh = await issue_code(store, incoming, now, self.access.pairing_ttl)
        except StoreError as exc:
            return f"user {user}: approval not checked ({exc})", None
        key = (incoming.platform, user)
        last = self._codes_told.get(key)
        if not fresh and last is not None and self.clock() - last < pairing.REPEAT_AFTER:
            return f"user {user} is waiting for approval (code {pairing.masked(code.code)} already sent)", None
        self._codes_told[key] = self.clock()
        log.info("%s: pairing code %s for user %s (expires in %gs)", incoming.platform, pairing.masked(code.code),
                 user, self.access.pairing_ttl)
        return f"user {user} is not approved: sent a pairing code", pairing.code_message(code.code,
                                                                                       code.expires - now)

    def over_limit(self, incoming: "Incoming") -> str | None:
        """``access.max_messages_per_minute``: None within it; past it, why dropped (and count it)."""
        limit = self.access.max_messages_per_minute
        if not limit or self.access.is_admin(incoming.platform, incoming.sender_id):
            return None
        key = (incoming.platform, incoming.sender_id or f"chat:{incoming.chat_id}")
        now = self.clock()
        self._forget_quiet(now)
        recent = self._recent.setdefault(key, deque())
        while recent and now - recent[0] >= WINDOW:
            recent.popleft()
        if len(recent) < limit:
            recent.append(now)
            return None
        self._count_drop(incoming.platform)
        self._skipped[key] = self._skipped.get(key, 0) + 1
        return f"user {incoming.sender_id} is over access.max_messages_per_minute ({limit})"

    def _forget_quiet(self, now: float) -> None:
        """Now and then, forget people quiet for a minute: memory stays bounded by who writes now."""
        self._calls = getattr(self, "_calls", 0) + 1
        if self._calls % 1024:
            return
        for key in [k for k, times in self._recent.items() if not times or now - times[-1] >= WINDOW]:
            del self._recent[key]
        for table, keep in ((self._told, WINDOW), (self._codes_told, pairing.REPEAT_AFTER)):
            for key in [k for k, at in table.items() if now - at >= keep]:
                del table[key]

    def notice_due(self, incoming: "Incoming") -> str | None:
        """The polite line for a dropped message, at most once a minute per user (None: already told)."""
        key = (incoming.platform, incoming.sender_id or f"chat:{incoming.chat_id}")
        now = self.clock()
        last = self._told.get(key)
        if last is not None and now - last < WINDOW:
            return None
        self._told[key] = now
        skipped = self._skipped.pop(key, 1)
        return SLOW_DOWN.format(n=self.access.max_messages_per_minute, s="s" if skipped > 1 else "")

    def _count_drop(self, platform: str) -> None:
        metrics = self._metrics()
        if metrics is None:
            return
        counter = getattr(metrics, "inbound_rate_limited", None)
        if counter is None:
            from prometheus_client import Counter

            counter = metrics.inbound_rate_limited = Counter(
                "hermes_inbound_rate_limited", "Messages dropped because their sender was over "
                "access.max_messages_per_minute.", ["platform"], registry=metrics.registry)
        counter.labels(platform=platform).inc()
