"""Coordination between replicas of one bot: shared rate budgets, dedupe, one reply at a time per chat.

:func:`open_coordination` picks the backend from ``coordination:`` in the
config: none (the default) is one replica alone (:mod:`.local`), a
``coordination.url`` is Redis (:mod:`.redis`). The gateway builds it on
first use and connects it at start.
"""

from __future__ import annotations

from ..config import Config
from .base import NO_TICKET, ChatLease, Coordination, Grant, LaneKey, SharedBudget, StopKind
from .local import LocalCoordination

__all__ = ["NO_TICKET", "ChatLease", "Coordination", "Grant", "LaneKey", "LocalCoordination", "SharedBudget", "StopKind",
           "open_coordination"]


def open_coordination(config: Config | None) -> Coordination:
    """The coordination ``config`` asks for, not yet connected (``start()`` connects)."""
    if config is None or not config.coordination.url:
        return LocalCoordination()
    from .redis import RedisCoordination  # redis-py is imported only by a replicated gateway

    cfg = config.coordination
    return RedisCoordination(config.coordination.url, lease_ttl=cfg.lease_ttl, dedupe_ttl=cfg.dedupe_ttl)
