"""The web console at ``/ui``: sign-in, the web chat, the dashboard (issue 27).

A built-in plugin (:mod:`.plugin`), registered from
``plugins.BUILTIN_PLUGINS`` exactly like the API server: it mounts its
routes on the gateway's one aiohttp listener and registers the ``web``
platform its chat speaks through. A third party can ship another console
the same way — a package with an entry point in the ``hermes_gateway``
group whose plugin implements ``register_routes`` (and, for a chat,
``register_platforms``).

Modules: :mod:`.auth` (sessions, roles, CSRF, the loopback rule; the
decorators other console routes use), :mod:`.throttle` (wrong sign-ins),
:mod:`.client_address` (the client behind ``web.trusted_proxies``),
:mod:`.pages` (pages, static files, sign-in),
:mod:`.chat` (the chat's routes: send, stop, history, the SSE feed),
:mod:`.chat_client` (the ``web`` platform and its client), :mod:`.feed` (a
chat's live events), :mod:`.responses`
(JSON errors, security headers), ``static/`` (HTML, CSS, JS: no build step).
"""
