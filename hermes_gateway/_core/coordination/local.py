"""One replica alone: everything the gateway did before it could be replicated, unchanged.

Budgets are the in-process token buckets (:class:`~hermes_gateway._core.delivery.budget.ChatBudgets`),
dedupe is the runtime's LRU (:class:`~hermes_gateway._core.inbound.dedupe.SeenUpdates`, saved in the
conversation store so a restart still recognises a redelivery), and a chat's lane needs no lease:
it is the only one. Nothing here awaits: the hot paths cost what they cost before.
"""

from __future__ import annotations

from .base import Coordination


class LocalCoordination(Coordination):
    """The default (no ``coordination.url``): nothing is shared, because nothing else runs."""

    shared = False
