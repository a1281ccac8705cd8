"""Receiving messages by webhook: ``POST /webhooks/telegram`` on the gateway's HTTP listener.

Telegram posts each update as JSON with the secret given to ``setWebhook``
in ``X-Telegram-Bot-Api-Secret-Token``. The handler checks that header
before it reads anything else (a request without it gets a bare 401), turns
the body into the same ``Incoming`` as polling does, hands it to the core
and answers 200 at once: the reply follows later, in its own calls.

A body that cannot be read as an update is answered 200 too, with one log
line: Telegram would only deliver the same broken body again, holding up
every update behind it. The one 5xx is deliberate: while the gateway stops,
a message is answered 503, so Telegram delivers it again (to another
replica, or after the restart) rather than it being acknowledged and lost.
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any, Callable

from aiohttp import web

from .albums import Albums
from .polling import Attach, to_incoming
from .redaction import scrub

log = logging.getLogger(__name__)

PATH = "/webhooks/telegram"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


def make_handler(secret: Callable[[], str | None], bot: Callable[[], Any], receive: Callable[[Any], Any],
                 accepting: Callable[[], bool], attach: Attach | None = None,
                 on_update: Callable[[Any], bool] | None = None,
                 albums: Albums | None = None) -> Callable[[web.Request], Any]:
    """The aiohttp handler, mounted by the client (``PlatformContext.add_route``).

    ``secret``/``bot`` are read per request (the bot is built on first use);
    ``receive``/``accepting`` are the context's: hand over a message, and
    whether the gateway still takes messages; ``attach`` turns a message's
    files into attachments (as for polling); ``albums``: where an album's
    parts wait for each other (:mod:`.albums`; each part is answered 200 at once).
    """

    async def receive_update(request: web.Request) -> web.Response:
        expected = secret()
        given = request.headers.get(SECRET_HEADER, "")
        # aiohttp keeps bytes that are not UTF-8 as surrogates: compared as the bytes sent, never an error
        if not expected or not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode()):
            return web.Response(status=401)
        body = await request.read()  # over the listener's body limit: aiohttp's 413, nothing else
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
                raise ValueError("not an Update object (no integer update_id)")
            from telegram import Update

            the_bot = bot()
            update = Update.de_json(data, the_bot)
            if on_update is not None and on_update(update):  # a button press (callback_query)
                return web.Response(status=200)
            incoming = to_incoming(update, the_bot, attach)
        except Exception as exc:  # a malformed body: say so once, never 5xx
            log.warning("telegram webhook: ignored a body that is not an update (%s)",
                        scrub(f"{type(exc).__name__}: {exc}")[:200])
            return web.Response(status=200)
        if incoming is not None and not accepting():
            log.info("telegram webhook: the gateway is stopping; Telegram will deliver update %s again",
                     data["update_id"])
            return web.Response(status=503, headers={"Retry-After": "5"})
        if incoming is not None and not (albums is not None and albums.hold(update, incoming)):
            receive(incoming)  # returns at once; the reply comes later
        return web.Response(status=200)

    return receive_update
