"""The web console as a built-in plugin: its pages and chat on the gateway's listener, the ``web`` platform.

Registered from ``plugins.BUILTIN_PLUGINS`` exactly like the API server,
and configured by ``web.*`` (:class:`~hermes_gateway._core.config.WebConfig`).
It is built from the parts the gateway hands its private feature hooks
(:class:`~..feature_parts.FeatureParts`: the config and the console's
sources); it never sees the gateway. A third party
could ship another console the same way: a distribution whose plugin
implements ``register_routes`` (mounting under its own path) and, for a
chat, ``register_platforms`` with a platform of its own.

Routes (all under ``/ui``): the pages and sign-in (:mod:`.pages`), the chat
API and its SSE feed (:mod:`.chat`), the dashboard (``/ui/dashboard``: a
placeholder page until the dashboard part mounts its own).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from aiohttp import web

from ..hookspecs import hookimpl
from ..platform import Platform
from . import chat, pages
from .chat_client import WEB_PLATFORM
from .auth import AUTH_KEY, WebAuth
from .responses import add_security_headers
from ..console_sources import ConsoleSources

if TYPE_CHECKING:
    from ..feature_parts import FeatureParts

log = logging.getLogger(__name__)


@hookimpl
def register_platforms(register: Callable[[Platform], None]) -> None:
    """The ``web`` platform; enabled with the console (``web.enabled``), or by ``platforms.web``."""
    register(WEB_PLATFORM)


@hookimpl
def register_feature_routes(app: web.Application, parts: "FeatureParts") -> None:
    if not parts.config.web_enabled:
        return
    mount(app, parts.console_sources())  # the composition of the console: the parts it uses
    log.info("web console at /ui (%s)", "sign-in with web.password or an API key"
             if WebAuth(parts.config).can_sign_in else "open to this machine only: no web.password set")


def mount(app: web.Application, sources: ConsoleSources) -> WebAuth:
    """Every console route on ``app`` (the tests mount it on an app of their own)."""
    auth = app[AUTH_KEY] = WebAuth(sources.config)
    app.on_response_prepare.append(add_security_headers)  # the router's 404/405 under /ui too
    pages.add_routes(app)
    chat.add_routes(app, sources)
    add_dashboard(app, sources)
    return auth


def add_dashboard(app: web.Application, sources: ConsoleSources) -> None:
    """``/ui/dashboard``, its state API and live feed, pairing decisions (:mod:`.dashboard`)."""
    from . import dashboard

    dashboard.add_routes(app, sources)
