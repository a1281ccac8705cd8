"""The API server as a built-in plugin: it mounts its routes on the gateway's aiohttp app.

Registered from ``plugins.BUILTIN_PLUGINS`` exactly like a third-party
plugin, and configured by ``api_server.*``. It is built from the parts the
gateway hands its private feature hooks (:class:`~..feature_parts.FeatureParts`:
config, agent, store, metrics, worker slot, shutdown grace); it never sees
the gateway.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from typing import TYPE_CHECKING

from aiohttp import web

from ..hookspecs import hookimpl
from ..http.guards import json_not_found
from ..telemetry import add_request_spans
from .access_log import access_log
from .auth import check_bind_safety
from .metrics import Metrics

if TYPE_CHECKING:
    from ..config import ModelConfig
    from ..feature_parts import FeatureParts
    from .routes import ApiServer

log = logging.getLogger(__name__)

#: The running server on the app. Its routes (and with them the openai SDK's types, ~0.5 s) are imported when the
#: server is built, not when the plugins load: ``chat``, ``ask`` and the other commands never need them.
API_SERVER_KEY: "web.AppKey[ApiServer]" = web.AppKey("hermes_gateway._core.api_server")


@hookimpl
def register_feature_routes(app: web.Application, parts: "FeatureParts") -> None:
    config = parts.config
    if not config.api_server.enabled:
        return
    from .routes import ApiServer
    from .store import ResponseStore

    check_bind_safety(config.api_server, config.source)
    store = ResponseStore(parts.store, history_messages=config.store.history_messages,
                          history_chars=config.store.history_chars)  # responses survive a restart
    server = ApiServer(config, agent_factory=parts.agent, store=store,
                       metrics=parts.metrics().attach("api_server", Metrics))  # /metrics: delivery's too
    worker = parts.worker
    if worker is not None and worker.count > 1 and worker.media_key:
        server.media.share(worker.media_key)  # a link made here may be fetched from another worker
    server.add_routes(app)
    app.middlewares.append(access_log)      # outermost of the two: it logs the 404s below too
    app.middlewares.append(json_not_found)  # the router's 404/405 in OpenAI's error shape
    add_request_spans(app)  # telemetry: one trace per request to /v1/... (no middleware when off)
    app[API_SERVER_KEY] = server


#: What a model request needs that is slow to import: the agent and, where the model goes through the
#: ``sdk`` transport (``model.transport: sdk``, or an endpoint the fast one does not suit), the openai SDK.
#: Made lazily on the first request, so a platform-only gateway never loads them; a server of requests
#: loads them here, before serving, instead of in a thread while the first request's stream runs: importing
#: the SDK's ~1,000 pydantic models holds the GIL for long stretches, and /health stalled 0.7 s on it. The
#: fast transport and the demo model never import the SDK (agent/sdk_headers.py, agent/transport_demo.py).
AGENT_MODULES = ("hermes_gateway._core.agent",)
SDK_MODULES = ("openai", "hermes_gateway._core.agent.transport_sdk")


def warm_modules(model: "ModelConfig") -> tuple[str, ...]:
    """The modules to import before serving for ``model`` (see :data:`AGENT_MODULES`)."""
    from ..agent.upstream import uses_sdk  # (the agent: imported here anyway, and off the loop)

    return AGENT_MODULES + SDK_MODULES if uses_sdk(model) else AGENT_MODULES


@hookimpl
async def feature_startup(parts: "FeatureParts") -> None:
    """Import the agent (and the openai SDK where the model needs it, ~1 s) in a thread before serving.

    The agent is made on the first model request; importing it there would
    hold the event loop for that second, so ``/health`` and every other
    stream would stall on the first request after a start. A broken agent
    still does not stop the server: the first request reports it.
    """
    if not parts.config.api_server.enabled:
        return
    try:
        for module in await asyncio.to_thread(warm_modules, parts.config.model):
            await asyncio.to_thread(importlib.import_module, module)
    except Exception as exc:  # reported again, in full, by the first request that needs the agent
        log.warning("the agent could not be imported: %s: %s", type(exc).__name__, exc)


@hookimpl
async def feature_shutdown(parts: "FeatureParts") -> None:
    server = parts.app.get(API_SERVER_KEY)
    if server is not None:
        await server.shutdown(parts.shutdown_grace)


def api_server_of(app: web.Application) -> "ApiServer | None":
    """The running ApiServer (tests and the gateway read its metrics)."""
    return app.get(API_SERVER_KEY)
