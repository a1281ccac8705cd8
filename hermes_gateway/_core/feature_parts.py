"""What the gateway's built-in features are built from: typed parts, handed over by the composition root.

The API server, the web console and hooks from outside are plugins like a
third party's (registered by name in :data:`~.plugins.BUILTIN_PLUGINS`),
but they need more of the core than the public :class:`~.plugin_host.PluginHost`
offers a stranger: the agent, the store, the metrics registry, the turn's
parts, the console's sources. They implement the private hooks below, which
the gateway calls with :class:`FeatureParts`, beside the public
``register_routes``/``startup``/``shutdown`` (same order: a feature's routes
after the third parties', its startup and shutdown before theirs). Each
feature takes from the parts what it uses and builds itself from those; none
of them sees the gateway. The parts that are built on first use (the store,
the agent ...) are callables, so a feature that is off never builds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable

import pluggy

from .hookspecs import PROJECT

if TYPE_CHECKING:
    from aiohttp import web

    from .agent import AIAgent
    from .config import Config
    from .console_sources import ConsoleSources
    from .conversation import TurnParts
    from .http.workers import WorkerSlot
    from .metrics import GatewayMetrics
    from .store import ConversationStore

feature_hookspec = pluggy.HookspecMarker(PROJECT)


@dataclass(frozen=True)
class FeatureParts:
    """The core as a built-in feature sees it; the gateway makes one per start.

    ``app`` is the listener's application (what a feature mounted on it, it finds there again at shutdown);
    ``serve`` is False in one-shot commands (``ask``, ``send``: nothing
    listens); ``worker`` is this process's slot among ``api_server.workers``
    (None with one process); ``spawn(platform, chat, thread, job, what)``
    runs a job in a chat's lane, stopped with the schedules; ``enabled_platforms()``
    lists the platforms this process runs.
    """

    config: "Config"
    app: "web.Application"
    serve: bool
    worker: "WorkerSlot | None"
    shutdown_grace: float
    accepting: Callable[[], bool]
    turn_parts: Callable[[], "TurnParts"]
    agent: Callable[[], "AIAgent"]
    store: Callable[[], "ConversationStore"]
    metrics: Callable[[], "GatewayMetrics"]
    console_sources: Callable[[], "ConsoleSources"]
    spawn: Callable[..., None]
    enabled_platforms: Callable[[], list[str]]


@feature_hookspec
def register_feature_routes(app: "web.Application", parts: FeatureParts) -> None:
    """Mount a built-in feature's routes on the gateway's listener (called after ``register_routes``)."""


@feature_hookspec
def feature_startup(parts: FeatureParts) -> Awaitable[None] | None:
    """Start a built-in feature (before the platforms, after its routes are mounted)."""


@feature_hookspec
def feature_shutdown(parts: FeatureParts) -> Awaitable[None] | None:
    """Stop a built-in feature (the listener still up: open streams end properly)."""


def add_feature_hookspecs(pm: pluggy.PluginManager) -> None:
    """Give ``pm`` the hooks above, once (the plugin manager is shared by every gateway of a process)."""
    if getattr(pm.hook, "feature_startup", None) is None or pm.hook.feature_startup.spec is None:
        import sys

        pm.add_hookspecs(sys.modules[__name__])


__all__ = ["FeatureParts", "add_feature_hookspecs", "feature_hookspec"]
