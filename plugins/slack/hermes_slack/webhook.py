"""``POST /webhooks/slack/events``: the Events API on the gateway's HTTP listener (``mode: http``).

The signature is checked on the raw bytes before anything is parsed
(slack_sdk's ``SignatureVerifier``: v0 HMAC-SHA256 of
``v0:{timestamp}:{body}``, timestamps more than 5 minutes off refused):
a bad or stale request gets 401 and nothing else happens; headers that
cannot even be checked (no timestamp, thousands of digits, a signature
that is not ASCII) get 401 too, and a body that is empty or not UTF-8 gets 400. A good one goes
to the bolt app, which answers ``url_verification`` and acknowledges every
event with 200 before the listener hands the message to the core, so the
model never delays the answer. Slack's retries (``X-Slack-Retry-Num``)
carry the same ``event_id``; the core answers the message once. This
handler answers 5xx only while the gateway stops (503), so Slack delivers
the event again (to another replica, or after the restart) rather than it
being acknowledged and lost; otherwise never: a retry cannot fix a bug.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from aiohttp import web

from .redaction import scrub

if TYPE_CHECKING:
    from .client import SlackClient

log = logging.getLogger(__name__)


class EventsEndpoint:
    """The route handler of one client (``plugin``: the :class:`~.client.SlackClient` it hands events to)."""

    def __init__(self, plugin: "SlackClient") -> None:
        self.plugin = plugin

    async def handle(self, request: web.Request) -> web.StreamResponse:
        from slack_bolt.request.async_request import AsyncBoltRequest
        from slack_sdk.signature import SignatureVerifier

        settings = self.plugin.settings
        app = self.plugin.bolt
        if settings is None or not settings.signing_secret:
            return web.Response(status=404, text="slack is not receiving events")
        raw = await request.read()
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        signature = request.headers.get("X-Slack-Signature", "")
        if not _well_formed(timestamp, signature):
            log.info("slack: refused an events request with a missing or malformed signature")
            return web.Response(status=401, text="invalid signature")
        try:
            valid = SignatureVerifier(settings.signing_secret).is_valid(raw, timestamp, signature)
        except UnicodeDecodeError:  # slack_sdk signs the decoded text: a body that is not UTF-8 is no event
            log.info("slack: refused an events request whose body is not UTF-8")
            return web.Response(status=400, text="the body is not UTF-8")
        if not valid:
            log.info("slack: refused an events request with a bad or stale signature")
            return web.Response(status=401, text="invalid signature")
        if not raw.strip():  # bolt would answer "no listener" (404): an empty body is simply not a request
            log.info("slack: refused a signed events request with an empty body")
            return web.Response(status=400, text="empty request")
        if not self.plugin.context.accepting:
            log.info("slack: the gateway is stopping; Slack will deliver the event again")
            return web.Response(status=503, text="stopping", headers={"Retry-After": "5"})
        if app is None:
            return web.Response(status=404, text="slack is not receiving events")
        try:
            body = raw.decode("utf-8")
            bolt_request = AsyncBoltRequest(body=body, query=request.query_string,
                                            headers={k: v for k, v in request.headers.items()})
            response = await app.async_dispatch(bolt_request)
        except Exception as exc:  # a signed body bolt cannot read: say so, once
            log.warning("slack: could not handle a signed events request: %s", scrub(f"{type(exc).__name__}: {exc}"))
            return web.Response(status=400, text="unreadable request")
        if response.status >= 500:
            log.warning("slack: the events request failed inside bolt (%s); acknowledged anyway", response.status)
            return web.Response(status=200)
        headers = {k: v for k, v in response.first_headers().items() if k.lower() != "content-length"}
        return web.Response(status=response.status, body=response.body.encode() if response.body else b"",
                            headers=headers)


_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


def _well_formed(timestamp: str, signature: str) -> bool:
    """Whether the headers can be checked at all: slack_sdk raises (a 500) on a timestamp that is empty, not a
    number or thousands of digits long, and on a signature that is not ASCII; each is simply not Slack."""
    return bool(_TIMESTAMP.fullmatch(timestamp)) and bool(_SIGNATURE.fullmatch(signature))

