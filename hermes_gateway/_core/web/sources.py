"""What the web console reads and acts on, each part typed: built by the gateway (its composition root).

The console shows what the gateway already keeps (the platforms' state,
the replies in flight, the conversations, the replicas, the pairings, the
schedules) and its chat talks to the ``web`` platform's running client. It
gets exactly those parts, as providers (the gateway opens its store and
builds its runtime on first use, and again after a restart), never the
gateway itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..config import Config
    from ..coordination import Coordination
    from ..delivery import Delivery
    from ..inbound.runtime import InboundRuntime
    from ..outbound.scheduler import Scheduler
    from ..platform_status import PlatformStatuses
    from ..plugins import Plugins
    from ..store import ConversationStore


@dataclass(frozen=True)
class ConsoleSources:
    """The parts of one gateway the console uses; ``client(platform)`` is a platform's running client or None."""

    config: "Config"
    plugins: "Plugins"
    platform_status: "PlatformStatuses"
    store: Callable[[], "ConversationStore"]
    delivery: Callable[[], "Delivery"]
    coordination: Callable[[], "Coordination"]
    inbound: Callable[[], "InboundRuntime"]
    scheduler: Callable[[], "Scheduler"]
    client: Callable[[str], Any]
