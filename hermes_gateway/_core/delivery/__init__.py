"""The delivery core: pacing, budgets, overflow, and exactly-once final text.

Each guarantee lives in one module: :mod:`.preview` with the shared
:mod:`~hermes_gateway._core.reasoning` filter (clean text),
:mod:`.measure` and :mod:`.split` (overflow), :mod:`.budget` (one rate
budget per chat and one per bot), :mod:`.pacing` (when a call may be made,
429 scopes, back-off), :mod:`.preview` (what each message shows while the
reply grows, append-only prefixes), :mod:`.ledger` (exactly once),
:mod:`.final` (every message ended with ``on_stream_end``, no cursor left
whatever failed), :mod:`.session` (the worker and typing), :mod:`.core`
(the front door).
"""

from .core import Delivery, deliver_events
from .session import DeliveryPolicy, DeliveryReport, StreamSession

__all__ = ["Delivery", "DeliveryPolicy", "DeliveryReport", "StreamSession", "deliver_events"]
