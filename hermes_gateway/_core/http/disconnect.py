"""What a client's hang-up does to its handler: cancel it (streams), or let it finish (webhooks).

aiohttp cancels a handler when its client disconnects (the gateway's runner
sets ``handler_cancellation``). A handler marked with
:func:`cancel_on_disconnect` takes that: an abandoned API stream cancels its
agent turn and upstream request at once. Every other handler (a platform's
webhook) is shielded by :func:`finish_unless_cancellable` and runs to
completion even if the sender hangs up early, so an incoming message is
never lost half-processed.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

from aiohttp import web

CANCEL_ON_DISCONNECT = "_hermes_cancel_on_disconnect"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def cancel_on_disconnect(handler: Handler) -> Handler:
    """Mark a route handler to be cancelled when its client goes away (streams, long model calls)."""
    setattr(handler, CANCEL_ON_DISCONNECT, True)
    return handler


@web.middleware
def finish_unless_cancellable(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
    """The app cancels a handler when its client disconnects; shield those not marked for that.

    A plain function: aiohttp awaits what a middleware returns, so the handler's coroutine (or the shield)
    is returned as it is, and this middleware adds no frame to every await of the request (each one costs
    the whole chain of frames a resumption, bench/README.md issue 28).
    """
    if getattr(request.match_info.handler, CANCEL_ON_DISCONNECT, False):
        return handler(request)
    return asyncio.shield(handler(request))
