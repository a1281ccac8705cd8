"""What the feature hooks (``register_routes``, ``startup``, ``shutdown``) hand a plugin: a narrow, typed host.

A plugin that adds a feature beside the platforms (another HTTP API, a
webhook bridge) needs the config, a way to hand the core a message, whether
messages are still taken, the listener's address and how long a stop waits:
that is all :class:`PluginHost` carries. The gateway itself stays private,
so its insides can change without breaking a plugin. The old ``gateway``
argument still works for one release, with a ``DeprecationWarning`` when
the plugin loads (:func:`warn_gateway_argument`).
"""

from __future__ import annotations

import asyncio
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .config import Config
    from .messages.incoming import Incoming

#: The feature hooks whose ``gateway`` argument is deprecated in favour of ``host``.
FEATURE_HOOKS = ("register_routes", "startup", "shutdown")


@dataclass(frozen=True)
class PluginHost:
    """The gateway as a feature plugin sees it.

    ``receive(incoming)`` hands the core a message and returns at once (a
    future of the reply's report; nobody has to await it); ``accepting()``
    is False while the gateway stops (answer a webhook 503 then, so it is
    delivered again); ``url()`` is ``http://host:port`` of the listener, once
    it listens; ``shutdown_grace`` is how long a stop lets replies finish.
    """

    config: "Config"
    receive: Callable[["Incoming"], "asyncio.Future[Any]"]
    accepting: Callable[[], bool]
    url: Callable[[], "str | None"]
    shutdown_grace: float


def warn_gateway_argument(plugin_name: str, hookimpls: list[tuple[str, tuple[str, ...]]]) -> None:
    """A third-party feature hook that asks for ``gateway`` loads, with a DeprecationWarning naming the fix."""
    for hook, argnames in hookimpls:
        if hook in FEATURE_HOOKS and "gateway" in argnames:
            warnings.warn(f"plugin {plugin_name}: {hook}(gateway) is deprecated: take `host` "
                          f"(hermes_gateway.PluginHost: config, receive, accepting, url, shutdown_grace) instead; "
                          f"the gateway argument is removed in the next release", DeprecationWarning, stacklevel=4)
