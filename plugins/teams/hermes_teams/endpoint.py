"""``POST /api/messages`` (``platforms.teams.path``): the Bot Framework delivers activities here.

Order, so that nothing of a stranger's request is parsed: the bearer token
is verified from the header alone (:mod:`.auth`: 401 for a missing, forged,
expired or wrong-audience token, and nothing else happens); then the body
is read, at most ``max_body_bytes`` (413 past it, before it is all read);
then parsed (400 when it is not an activity); then the checks that need the
activity (its ``serviceUrl`` is the token's, the key endorses its channel:
401). A good ``message`` is handed to the core and answered 200 at once (the
Bot Framework wants an answer within 15 seconds, and retries otherwise); a
button press is handed to the core's ``choose``; any other activity type
(conversationUpdate, typing, reactions) is acknowledged with 200 and
ignored. While the gateway stops the answer is 503, so the activity is
delivered again. Never a 5xx otherwise: a retry cannot fix a bug.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web

from hermes_gateway import ChoiceAnswer, scrub_secrets

from . import cards
from .auth import Unauthorized
from .inbound import incoming_of

if TYPE_CHECKING:
    from .client import TeamsClient

log = logging.getLogger(__name__)


def _refuse(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


class ActivityEndpoint:
    """The route handler of one client."""

    def __init__(self, client: "TeamsClient") -> None:
        self.client = client

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self._handle(request)
        except Exception as exc:  # a bug must not become a 500 the Bot Framework retries forever
            log.warning("teams: could not handle an activity: %s", scrub_secrets(f"{type(exc).__name__}: {exc}"))
            return _refuse(400, "BadRequest", "the activity could not be handled")

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        client = self.client
        try:
            verified = await client.auth.verify(request.headers.get("Authorization", ""))
        except Unauthorized as exc:
            client.context.count("unauthorized")
            log.info("teams: refused an activity: %s", scrub_secrets(str(exc))[:200])
            return _refuse(401, "Unauthorized", "the request is not signed by the Bot Framework")
        limit = client.settings.max_body_bytes
        if request.content_length is not None and request.content_length > limit:
            return _refuse(413, "PayloadTooLarge", f"an activity is at most {limit} bytes")
        raw = await request.content.read(limit + 1)
        if len(raw) > limit:
            return _refuse(413, "PayloadTooLarge", f"an activity is at most {limit} bytes")
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return _refuse(400, "BadRequest", "the body is not JSON")
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            return _refuse(400, "BadRequest", "the body is not an activity")
        try:
            verified.check_activity(data.get("serviceUrl") if isinstance(data.get("serviceUrl"), str) else None,
                                    data.get("channelId") if isinstance(data.get("channelId"), str) else None)
        except Unauthorized as exc:
            client.context.count("unauthorized")
            log.info("teams: refused an activity: %s", exc)
            return _refuse(401, "Unauthorized", "the activity does not match its token")
        if data["type"] not in ("message", "invoke"):
            return web.Response(status=200)
        if not client.context.accepting:
            return web.Response(status=503, text="stopping", headers={"Retry-After": "5"})
        from microsoft_teams.api import ActivityTypeAdapter
        from pydantic import ValidationError

        try:
            activity = ActivityTypeAdapter.validate_python(data)
        except ValidationError as exc:
            return _refuse(400, "BadRequest", f"not a valid activity ({exc.error_count()} problems)")
        if activity.conversation is None or not activity.conversation.id or activity.from_ is None:
            return _refuse(400, "BadRequest", "the activity names no conversation or sender")
        await client.remember_service_url(activity.conversation.id, activity.service_url)
        if activity.type == "invoke":
            return await self._invoke(activity)
        payload = cards.payload_of(getattr(activity, "value", None))
        if payload is not None:
            await self._press(activity, payload)
            return web.Response(status=200)
        client.context.report_connected()
        client.context.receive(incoming_of(activity, client.context.platform, client.session, client.token.get))
        return web.Response(status=200)

    async def _invoke(self, activity: Any) -> web.StreamResponse:
        if getattr(activity, "name", None) != "adaptiveCard/action":
            return web.json_response({"status": 200}, status=200)
        value = activity.value.model_dump(by_alias=True) if hasattr(activity.value, "model_dump") else activity.value
        payload = cards.payload_of(value)
        notice = await self._press(activity, payload) if payload is not None else None
        return web.json_response(cards.invoke_answer(notice or "OK"), status=200)

    async def _press(self, activity: Any, payload: str) -> str | None:
        context = self.client.context
        answer = ChoiceAnswer.from_payload(context.platform, activity.conversation.id, activity.from_.id, payload)
        return await context.choose(answer) if answer is not None else None
