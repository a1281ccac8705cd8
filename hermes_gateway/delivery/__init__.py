"""The delivery core: pacing, budgets, overflow, and exactly-once final text.

Each guarantee lives in one module: :mod:`.think_filter` (clean text),
:mod:`.measure` and :mod:`.split` (overflow), :mod:`.budget` (one rate
budget per chat, 429 back-off), :mod:`.ledger` (exactly once),
:mod:`.session` (pacing and the worker), :mod:`.core` (the front door).
"""

from .core import Delivery, deliver_events
from .session import DeliveryPolicy, DeliveryReport, StreamSession

__all__ = ["Delivery", "DeliveryPolicy", "DeliveryReport", "StreamSession", "deliver_events"]
