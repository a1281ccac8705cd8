"""Hooks from outside as a built-in plugin: ``POST /hooks/NAME`` on the gateway's listener.

Registered from ``plugins.BUILTIN_PLUGINS`` like the API server and the web
console; it mounts nothing unless ``hooks:`` lists some (and nothing in the
one-shot commands, which serve nothing). Built from the parts the gateway
hands its private feature hooks (:class:`~..feature_parts.FeatureParts`):
the turn's parts, the schedules' spawn (so a stop gives a hook's turn the
shutdown grace) and the stop signal. What answers a call is
:class:`~..outbound.hooks.receiver.Hooks`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from aiohttp import web

from ..errors import StartError
from ..hookspecs import hookimpl
from ..outbound.hooks.receiver import PREFIX, Hooks

if TYPE_CHECKING:
    from ..feature_parts import FeatureParts

log = logging.getLogger(__name__)

HOOKS_KEY = web.AppKey("hermes_gateway._core.outbound.hooks", Hooks)


@hookimpl
def register_feature_routes(app: web.Application, parts: "FeatureParts") -> None:
    """``/hooks/{name}`` when ``hooks:`` lists some."""
    if not parts.config.hooks or not parts.serve:
        return
    worker = parts.worker
    if worker is not None and worker.count > 1 and not worker.replicas:
        raise StartError(f"api_server.workers is {worker.count}, but hooks: are answered by the platforms, which "
                         "only worker 0 runs: set coordination.url (every worker then runs as a replica), or "
                         "api_server.workers: 1")
    hooks = app[HOOKS_KEY] = Hooks(parts.turn_parts(), parts.spawn, parts.accepting)
    hooks.check(parts.enabled_platforms())
    app.router.add_route("*", PREFIX + "{name}", hooks.handle)
    log.info("hooks at %s{name}: %s", PREFIX, ", ".join(hooks.by_name))


@hookimpl
async def feature_startup(parts: "FeatureParts") -> None:
    """The delivery ids seen before a restart, so a redelivery is still answered ``duplicate``."""
    hooks = parts.app.get(HOOKS_KEY)
    if hooks is not None:
        await hooks.restore()
