"""One occurrence, one run: claimed through the coordination layer, then recorded in the store.

Every replica's scheduler wakes at the same instants (occurrences are
computed, not coordinated), so each asks here before it runs one:

1. the coordination layer (:meth:`~..coordination.base.Coordination.claim`):
   with ``coordination.url``, a Lua compare-and-set on Redis, so of the
   replicas asking at once one gets it; alone, this process's memory;
2. the store (``claim_schedule_run``, ``advance_reminder``): a
   compare-and-set in one transaction, which also holds across restarts
   (an occurrence recorded as run is never run again) and between replicas
   sharing the database while Redis is unreachable.

Both must say yes. The claim comes before delivery, so a crash mid-delivery
loses that occurrence rather than sending it twice.
"""

from __future__ import annotations

import logging
from typing import Any

from ..store import StoreError
from ..store.outage import report as report_store_failure
from ..store.outbound_records import Reminder

log = logging.getLogger(__name__)


async def claim_schedule(coordination: Any, store: Any, name: str, at: float) -> bool:
    """Whether this replica runs occurrence ``at`` of schedule ``name``."""
    shared = await coordination.claim(f"schedule:{name}", at)
    if shared is False:
        return False
    try:
        return await store.claim_schedule_run(name, at)
    except StoreError as exc:
        report_store_failure(store, log, f"schedule {name} not recorded", exc)
        return shared is True  # Redis gave it to this replica alone: run it; with neither answering, do not


async def claim_reminder(coordination: Any, store: Any, reminder: Reminder, next_at: float | None) -> bool:
    """Whether this replica fires ``reminder`` now (it then moves to ``next_at``, or is gone when None)."""
    shared = await coordination.claim(f"reminder:{reminder.id}", reminder.next_at)
    if shared is False:
        return False
    try:
        return await store.advance_reminder(reminder.id, reminder.next_at, next_at)
    except StoreError as exc:
        report_store_failure(store, log, f"reminder {reminder.id} not advanced", exc)
        return False  # fired again later rather than maybe twice now
