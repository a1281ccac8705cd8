"""Approval buttons: interactive message buttons, and the integration request a click sends.

``offer_choice`` posts the question with ``props.attachments[0].actions``:
one button per option, each with ``integration: {url, context}``. The URL
is this gateway's own route (``actions_url`` + :func:`path_of`), mounted on
its listener; the context holds the core's payload and a token, an
HMAC-SHA256 of the channel and the payload under ``actions_secret`` (by
default a key derived from the bot token). Mattermost never shows an
action's integration to clients (it replaces it with an encrypted cookie),
so a person cannot read the token; anyone else who POSTs to the route
without it is refused (403) before anything is handed to the core.

A click makes the server POST ``{user_id, channel_id, post_id, context,
...}`` (``model.PostActionIntegrationRequest``) to the URL; the answer
``{"ephemeral_text": ...}`` shows the core's line to the presser only.
``close_choice`` patches the post to the outcome with empty props (the
buttons are gone).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from typing import Any

from aiohttp import web

from hermes_gateway import Choice, ChoiceAnswer, DeliveryError, MessageRef, PlatformContext, Stream

from .settings import MattermostSettings

log = logging.getLogger(__name__)

#: The largest integration request read (Mattermost's is well under 4 KiB).
MAX_REQUEST_BYTES = 64 * 1024
_STYLES = {"primary": "primary", "danger": "danger"}


def path_of(platform: str) -> str:
    """The route of one account's buttons (two accounts, two paths)."""
    return f"/webhooks/{platform}/actions"


def key_of(settings: MattermostSettings) -> bytes:
    if settings.actions_secret:
        return settings.actions_secret.strip().encode()
    return hashlib.sha256(b"hermes-mattermost-actions\n" + settings.token.encode()).digest()


def token_of(key: bytes, channel_id: str, payload: str) -> str:
    return hmac.new(key, f"{channel_id}\n{payload}".encode(), hashlib.sha256).hexdigest()


def props_of(choice: Choice, url: str, key: bytes, channel_id: str) -> dict[str, Any]:
    actions = []
    for index, option in enumerate(choice.options):
        payload = choice.payload(option)
        action_id = re.sub(r"[^A-Za-z0-9]", "", option.value)[:20] or f"option{index}"
        actions.append({"id": action_id, "name": option.label[:80], "type": "button",
                        "style": _STYLES.get(option.style, "default"),
                        "integration": {"url": url, "context": {"payload": payload,
                                                                "token": token_of(key, channel_id, payload)}}})
    return {"attachments": [{"text": "", "actions": actions}]}


async def offer_choice(client: Any, stream: Stream, choice: Choice) -> MessageRef:
    settings: MattermostSettings = client.settings
    if not settings.actions_url:
        raise DeliveryError("mattermost: no platforms.mattermost.actions_url, so no buttons (the question is "
                            "asked as typed commands)", retryable=False)
    url = settings.actions_url + path_of(client.context.platform)
    body: dict[str, Any] = {"channel_id": stream.chat_id, "message": choice.prompt,
                            "props": props_of(choice, url, client.actions_key, stream.chat_id)}
    if stream.thread_id:
        body["root_id"] = stream.thread_id
    post = await client.api.call("POST", "/posts", "create post (question)", json_body=body)
    return MessageRef(stream.chat_id, str(post["id"]), stream.thread_id)


async def close_choice(client: Any, ref: MessageRef, text: str) -> None:
    await client.api.call("PUT", f"/posts/{ref.message_id}/patch", "patch post (answer)",
                          json_body={"message": text, "props": {}})


class ActionRoute:
    """``POST /webhooks/<platform>/actions``: a verified click becomes a ``ChoiceAnswer``; all else a 4xx."""

    def __init__(self, context: PlatformContext, key: bytes) -> None:
        self.context = context
        self.key = key

    async def handle(self, request: web.Request) -> web.Response:
        if request.content_length is not None and request.content_length > MAX_REQUEST_BYTES:
            return _refuse(413, "request too large")
        try:  # the gateway's listener has read it already, within its own body limit and deadline
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _refuse(413, "request too large")
        except Exception:
            return _refuse(400, "unreadable request")
        if len(raw) > MAX_REQUEST_BYTES:
            return _refuse(413, "request too large")
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return _refuse(400, "not JSON")
        if not isinstance(body, dict):
            return _refuse(400, "not a JSON object")
        context, channel, user = body.get("context"), body.get("channel_id"), body.get("user_id")
        if not isinstance(context, dict) or not isinstance(channel, str) or not isinstance(user, str) \
                or not channel or not user:
            return _refuse(400, "not an integration request (context, channel_id, user_id)")
        payload, token = context.get("payload"), context.get("token")
        if not isinstance(payload, str) or not isinstance(token, str) or len(payload) > 200 or len(token) > 200:
            return _refuse(403, "not a button of this bot")
        if not hmac.compare_digest(token.encode(), token_of(self.key, channel, payload).encode()):
            self.context.count("forged_action")
            return _refuse(403, "not a button of this bot")
        if not self.context.accepting:
            return _refuse(503, "the gateway is stopping; press again in a moment")
        answer = ChoiceAnswer.from_payload(self.context.platform, channel, user, payload)
        if answer is None:
            return _refuse(400, "not a question of this bot")
        notice = await self.context.choose(answer)
        return web.json_response({"ephemeral_text": notice} if notice else {})


def _refuse(status: int, why: str) -> web.Response:
    return web.json_response({"error": {"message": why}}, status=status)
