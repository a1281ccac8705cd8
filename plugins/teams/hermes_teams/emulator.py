"""A strict stand-in for Microsoft Teams on 127.0.0.1: the Bot Connector, the token service, the signing keys.

What it serves (and where each rule comes from; msteams-platform is
learn.microsoft.com/microsoftteams/platform, bot-docs the Bot Framework
REST docs; see also PLATFORM_FACTS.md):

- ``POST /{tenant}/oauth2/v2.0/token``: client credentials (bot-docs,
  connector authentication); a wrong id, secret or scope is refused 401
  ``invalid_client``. Tokens expire after ``token_lifetime`` seconds.
- ``GET /v1/.well-known/openidconfiguration`` and ``/v1/.well-known/keys``:
  the OpenID metadata and the JWKS (its RSA key endorses ``msteams``); every
  activity a person sends is signed with that key (RS256, ``iss``
  ``https://api.botframework.com``, ``aud`` the app id, ``serviceurl``).
- ``POST /v3/conversations/{id}/activities`` and ``PUT …/{activityId}``:
  refused 401 without a bearer token the token service issued (and not
  expired); 404 for an unknown conversation or activity; 413
  ``MessageSizeTooBig`` over 100 KB of text counted as UTF-16
  (``agent-message-size-limit.md``); 400 for an activity type other than
  message/typing or a message with neither text nor attachments.
- Throttling per conversation (``bots/how-to/rate-limit.md``): 7 calls in
  1 s, 8 in 2 s, 60 in 30 s, 1800 in an hour; past one, 429 with
  ``Retry-After`` (the seconds until the window frees) and nothing shown.
- Streaming (``bots/streaming-ux.md``): personal chats only (else 403
  ``ContentStreamNotAllowed``); ``typing`` with a ``streaminfo`` entity of
  type informative/streaming (else 400 "Only start streaming and continue
  streaming types are allowed as a typing activity", the real text), with
  text (400 "Start streaming activities should include text"); the first
  answers 201 ``{"id": streamId}``; later ones carry that id and a strictly
  greater ``streamSequence`` (else 202
  ``ContentStreamSequenceOrderPreConditionFailed``, dropped) and text that
  starts with the text already shown (else 403 ``ContentStreamNotAllowed``
  "Request streamed content should contain the previously streamed
  content", as reported in openclaw/openclaw#56040); one stream per chat at a time; one request per
  second per stream ("The throttling limit is 1 request per second"; a call
  arriving sooner than ``stream_interval - transit`` after the previous is
  429: ``transit`` is 0.2 s of slack for a call's time on the wire of a
  loaded machine); the final ``message`` with ``streamType: final`` ends
  it; after ``stream_cap`` (120 s) 403 "Content stream finished due to
  exceeded streaming time."; anything after the final 403 "…on an already
  completed streamed message".

Everything refused that the real platform would refuse is also appended to
:attr:`violations` (injected 429s are not), so a test asserts the plugin
never broke a rule. :meth:`screen` is what a person sees in a conversation.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import math
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

APP_ID = "00000000-0000-4000-8000-00000000b07a"
APP_PASSWORD = "emulator-client-secret-Xq9~not-a-real-one"
TENANT_ID = "72f988bf-0000-4000-8000-000000000001"
BOT_NAME = "Hermes"
SCOPE = "https://api.botframework.com/.default"
ISSUER = "https://api.botframework.com"
WINDOWS = ((1.0, 7), (2.0, 8), (30.0, 60), (3600.0, 1800))
MAX_TEXT_UTF16_BYTES = 100 * 1024
_KEY: Any = None


def signing_key() -> Any:
    """The emulator's RSA key (one per process: generating one costs CPU)."""
    global _KEY
    if _KEY is None:
        from cryptography.hazmat.primitives.asymmetric import rsa

        _KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return _KEY


@dataclass
class Shown:
    """One message in a conversation, as a person sees it."""

    id: str
    text: str
    from_bot: bool
    attachments: list[dict[str, Any]] = field(default_factory=list)
    stream: str = ""            # "", "streaming", "final", "timed_out"
    sequence: int = 0
    started: float = 0.0
    updates: int = 0
    card: dict[str, Any] | None = None   # the last Adaptive Card it carried (a second device may still show it)


@dataclass
class Conversation:
    id: str
    kind: str                   # personal | groupChat | channel
    messages: list[Shown] = field(default_factory=list)
    calls: list[float] = field(default_factory=list)
    last_stream_call: float = 0.0
    rate_limits: list[float] = field(default_factory=list)


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status, headers=headers)


class TeamsEmulator:
    """Teams for one bot (``app_id``/``app_password``); ``bot_url`` is where it posts people's activities."""

    def __init__(self, *, app_id: str = APP_ID, app_password: str = APP_PASSWORD, stream_interval: float = 1.0,
                 stream_cap: float = 120.0, transit: float = 0.2, token_lifetime: float = 3599,
                 windows: tuple[tuple[float, int], ...] = WINDOWS) -> None:
        self.app_id, self.app_password = app_id, app_password
        self.stream_interval, self.stream_cap, self.transit = stream_interval, stream_cap, transit
        self.token_lifetime, self.windows = token_lifetime, windows
        self.bot_url = ""
        self.conversations: dict[str, Conversation] = {}
        self.violations: list[str] = []
        self.throttled = 0                # 429s answered for a rule the bot broke (injected ones not counted)
        self.tokens: dict[str, float] = {}
        self.token_requests = 0
        self.key_fetches = 0
        self.files: dict[str, bytes] = {}
        self.downloads: list[tuple[str, str | None]] = []   # (file id, Authorization header)
        self.invoke_answers: list[Any] = []
        self._ids = itertools.count(1)
        self._kid = "emu-" + secrets.token_hex(4)
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.base_url = ""

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> "TeamsEmulator":
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    async def start(self) -> None:
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app.router.add_post("/{tenant}/oauth2/v2.0/token", self._token)
        app.router.add_get("/v1/.well-known/openidconfiguration", self._openid)
        app.router.add_get("/v1/.well-known/keys", self._keys)
        app.router.add_post("/v3/conversations/{conversation}/activities", self._create)
        app.router.add_put("/v3/conversations/{conversation}/activities/{activity}", self._update)
        app.router.add_get("/v3/attachments/{file}/views/original", self._attachment)
        app.router.add_get("/files/{file}", self._shared_file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}"
        signing_key()

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def service_url(self) -> str:
        return self.base_url + "/"

    @property
    def token_url(self) -> str:
        return f"{self.base_url}/botframework.com/oauth2/v2.0/token"

    @property
    def openid_metadata_url(self) -> str:
        return f"{self.base_url}/v1/.well-known/openidconfiguration"

    def settings(self, **more: Any) -> dict[str, Any]:
        """``platforms.teams`` pointed at this emulator."""
        return {"app_id": self.app_id, "app_password": self.app_password, "token_url": self.token_url,
                "openid_metadata_url": self.openid_metadata_url, "service_url": self.service_url, **more}

    # ------------------------------------------------------------------ what people see

    def conversation(self, conversation_id: str, kind: str = "personal") -> Conversation:
        if conversation_id not in self.conversations:
            self.conversations[conversation_id] = Conversation(conversation_id, kind)
        return self.conversations[conversation_id]

    def screen(self, conversation_id: str) -> list[str]:
        """The bot's messages with text in the conversation, oldest first (a stream shows its text so far)."""
        found = self.conversations.get(conversation_id)
        return [m.text for m in found.messages if m.from_bot and m.text and not _images(m)] if found else []

    def messages(self, conversation_id: str) -> list[Shown]:
        found = self.conversations.get(conversation_id)
        return [m for m in found.messages if m.from_bot] if found else []

    def attachments(self, conversation_id: str) -> list[tuple[str, bytes]]:
        found = []
        for shown in self.messages(conversation_id):
            for item in _images(shown):
                found.append((item.get("name") or "", base64.b64decode(item["contentUrl"].split(",", 1)[1])))
        return found

    def still_streaming(self) -> list[str]:
        return [m.id for c in self.conversations.values() for m in c.messages if m.stream == "streaming"]

    def inject_rate_limit(self, conversation_id: str, retry_after: float) -> None:
        """The next call into the conversation answers 429 with this Retry-After (not a violation)."""
        self.conversation(conversation_id).rate_limits.append(retry_after)

    # ------------------------------------------------------------------ people's side

    def sign(self, **claims: Any) -> str:
        import jwt

        now = int(time.time())
        body = {"iss": ISSUER, "aud": self.app_id, "iat": now, "nbf": now - 5, "exp": now + 3600,
                "serviceurl": self.service_url, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, signing_key(), algorithm="RS256", headers={"kid": self._kid})

    def activity(self, conversation_id: str, text: str, *, kind: str = "personal", user: str = "alice",
                 mention: bool = True, attachments: list[dict[str, Any]] | None = None,
                 value: Any = None) -> dict[str, Any]:
        """The ``message`` activity Teams posts for a person's message (and shows it on the screen)."""
        conversation = self.conversation(conversation_id, kind)
        activity_id = f"{int(time.time() * 1000)}{next(self._ids):04d}"
        entities: list[dict[str, Any]] = []
        if kind != "personal" and mention:
            tag = f"<at>{BOT_NAME}</at>"
            text = f"{tag} {text}"
            entities.append({"type": "mention", "text": tag, "mentioned": {"id": f"28:{self.app_id}",
                                                                           "name": BOT_NAME}})
        conversation.messages.append(Shown(activity_id, text, from_bot=False))
        activity: dict[str, Any] = {
            "type": "message", "id": activity_id, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "serviceUrl": self.service_url, "channelId": "msteams",
            "from": {"id": f"29:{user}", "name": user.title(), "aadObjectId": f"aad-{user}"},
            "conversation": {"id": conversation_id, "conversationType": kind, "tenantId": TENANT_ID,
                             **({"isGroup": True} if kind != "personal" else {})},
            "recipient": {"id": f"28:{self.app_id}", "name": BOT_NAME}, "text": text, "textFormat": "plain",
            "locale": "en-US", "entities": entities, "channelData": {"tenant": {"id": TENANT_ID}},
        }
        if attachments:
            activity["attachments"] = attachments
        if value is not None:
            activity["value"] = value
        return activity

    async def post(self, activity: dict[str, Any] | bytes, *, token: str | None = "sign",
                   headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """POST an activity to the bot as the Bot Framework does; (status, JSON body or text)."""
        if self._session is None:
            self._session = aiohttp.ClientSession()
        sent = dict(headers or {})
        if token == "sign":
            token = self.sign()
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        body = activity if isinstance(activity, bytes) else json.dumps(activity).encode()
        sent.setdefault("Content-Type", "application/json")
        async with self._session.post(self.bot_url, data=body, headers=sent) as response:
            raw = await response.read()
            try:
                return response.status, json.loads(raw) if raw else None
            except ValueError:
                return response.status, raw.decode("utf-8", "replace")

    async def send(self, conversation_id: str, text: str, **options: Any) -> str:
        """A person's message, delivered and acknowledged; its activity id."""
        activity = self.activity(conversation_id, text, **options)
        status, body = await self.post(activity)
        if status != 200:
            raise AssertionError(f"the bot answered {status}: {body}")
        return str(activity["id"])

    async def press(self, conversation_id: str, message_id: str, option: int = 0, *, user: str = "alice",
                    invoke: bool = True) -> tuple[int, Any]:
        """A person presses a button of the card in ``message_id`` (an ``adaptiveCard/action`` invoke)."""
        shown = next(m for m in self.messages(conversation_id) if m.id == message_id)
        card = shown.card
        assert card is not None, "the message never carried a card"
        data = card["actions"][option]["data"]
        conversation = self.conversation(conversation_id)
        activity = self.activity(conversation_id, "", kind=conversation.kind, user=user, mention=False)
        conversation.messages.pop()  # a press is not a message on the screen
        activity.pop("text")
        if invoke:
            activity.update(type="invoke", name="adaptiveCard/action", replyToId=message_id,
                            value={"action": {"type": "Action.Submit", "data": data}})
        else:
            activity.update(replyToId=message_id, value=data)
        status, body = await self.post(activity)
        self.invoke_answers.append(body)
        return status, body

    def share_file(self, data: bytes, name: str, *, inline: bool = False) -> dict[str, Any]:
        """An attachment a person sends: a file (pre-authenticated downloadUrl) or an inline image (contentUrl)."""
        file_id = secrets.token_hex(6)
        self.files[file_id] = data
        if inline:
            return {"contentType": "image/png", "name": name,
                    "contentUrl": f"{self.base_url}/v3/attachments/{file_id}/views/original"}
        return {"contentType": "application/vnd.microsoft.teams.file.download.info", "name": name,
                "content": {"downloadUrl": f"{self.base_url}/files/{file_id}", "uniqueId": file_id,
                            "fileType": name.rsplit(".", 1)[-1]}}

    # ------------------------------------------------------------------ token service and keys

    async def _token(self, request: web.Request) -> web.Response:
        self.token_requests += 1
        form = await request.post()
        if (form.get("grant_type") != "client_credentials" or form.get("client_id") != self.app_id
                or form.get("client_secret") != self.app_password or form.get("scope") != SCOPE):
            return web.json_response({"error": "invalid_client", "error_description":
                                      "AADSTS7000215: Invalid client secret provided."}, status=401)
        token = "eyJ0eXAiOiJKV1QifQ." + secrets.token_urlsafe(24) + "." + secrets.token_urlsafe(16)
        self.tokens[token] = time.monotonic() + self.token_lifetime
        return web.json_response({"token_type": "Bearer", "expires_in": int(self.token_lifetime),
                                  "ext_expires_in": int(self.token_lifetime), "access_token": token})

    async def _openid(self, request: web.Request) -> web.Response:
        return web.json_response({"issuer": ISSUER, "jwks_uri": f"{self.base_url}/v1/.well-known/keys",
                                  "id_token_signing_alg_values_supported": ["RS256"],
                                  "token_endpoint_auth_methods_supported": ["private_key_jwt"]})

    async def _keys(self, request: web.Request) -> web.Response:
        import jwt

        self.key_fetches += 1
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(signing_key().public_key()))
        public.update(kid=self._kid, use="sig", endorsements=["msteams"])
        return web.json_response({"keys": [public]})

    # ------------------------------------------------------------------ the Bot Connector

    def _authorized(self, request: web.Request) -> bool:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        expires = self.tokens.get(token.strip())
        return scheme == "Bearer" and expires is not None and time.monotonic() < expires

    def _throttle(self, conversation: Conversation, now: float) -> web.Response | None:
        if conversation.rate_limits:
            seconds = conversation.rate_limits.pop(0)
            return _error(429, "ThrottledRequest", "API calls quota exceeded",
                          {"Retry-After": f"{seconds:g}"})
        for window, most in self.windows:
            recent = [t for t in conversation.calls if now - t < window - self.transit]
            if len(recent) >= most:
                wait = max(1, math.ceil(window - (now - recent[0])))
                self.throttled += 1
                self.violations.append(f"429: more than {most} calls in {window:g}s in {conversation.id}")
                return _error(429, "ThrottledRequest", "API calls quota exceeded", {"Retry-After": str(wait)})
        return None

    async def _body(self, request: web.Request) -> dict[str, Any] | web.Response:
        if not self._authorized(request):
            return web.json_response({"message": "Authorization has been denied for this request."}, status=401)
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "BadSyntax", "the body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "BadSyntax", "the body is not an activity")
        return body

    def _refuse(self, status: int, code: str, message: str) -> web.Response:
        self.violations.append(f"{status} {code}: {message}")
        return _error(status, code, message)

    async def _create(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        conversation = self.conversations.get(request.match_info["conversation"])
        if conversation is None:
            return self._refuse(404, "ConversationNotFound", "Conversation not found.")
        now = time.monotonic()
        stream = _stream_info(body)
        refused = self._check_message(body) or self._throttle(conversation, now)
        if refused is not None:
            return refused
        if stream is not None:
            return self._stream(conversation, body, stream, now)
        conversation.calls.append(now)
        if body["type"] == "typing":
            return web.json_response({}, status=200)
        shown = Shown(self._new_id(), body.get("text") or "", from_bot=True,
                      attachments=list(body.get("attachments") or []))
        shown.card = _card_of(shown.attachments)
        conversation.messages.append(shown)
        return web.json_response({"id": shown.id}, status=201)

    async def _update(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        conversation = self.conversations.get(request.match_info["conversation"])
        shown = next((m for m in conversation.messages if m.id == request.match_info["activity"]), None) \
            if conversation is not None else None
        if conversation is None or shown is None or not shown.from_bot:
            return self._refuse(404, "ActivityNotFound", "Activity not found.")
        if body.get("type") != "message":
            return self._refuse(400, "BadArgument", "only a message activity can be updated")
        if shown.stream == "streaming":
            return self._refuse(403, "ContentStreamNotAllowed", "a message being streamed cannot be updated")
        now = time.monotonic()
        refused = self._check_message(body) or self._throttle(conversation, now)
        if refused is not None:
            return refused
        conversation.calls.append(now)
        shown.text = body.get("text") or ""
        shown.attachments = list(body.get("attachments") or [])
        shown.card = _card_of(shown.attachments) or shown.card
        shown.updates += 1
        return web.json_response({"id": shown.id}, status=200)

    def _check_message(self, body: dict[str, Any]) -> web.Response | None:
        kind = body.get("type")
        if kind not in ("message", "typing"):
            return self._refuse(400, "BadArgument", f"unknown activity type {kind!r}")
        text = body.get("text")
        if text is not None and not isinstance(text, str):
            return self._refuse(400, "BadArgument", "text is not a string")
        if len((text or "").encode("utf-16-le")) > MAX_TEXT_UTF16_BYTES:
            return self._refuse(413, "MessageSizeTooBig", "Message size too large")
        attachments = body.get("attachments") or []
        if kind == "message" and not text and not attachments:
            return self._refuse(400, "BadArgument", "a message needs text or attachments")
        for item in attachments:
            problem = _attachment_problem(item)
            if problem:
                return self._refuse(400, "BadArgument", problem)
        return None

    def _stream(self, conversation: Conversation, body: dict[str, Any], stream: dict[str, Any],
                now: float) -> web.Response:
        if conversation.kind != "personal":
            return self._refuse(403, "ContentStreamNotAllowed", "Content stream is not allowed")
        stream_type = stream.get("streamType", "streaming")
        stream_id = stream.get("streamId")
        text = body.get("text") or ""
        if body["type"] == "typing" and stream_type not in ("informative", "streaming"):
            return self._refuse(400, "BadArgument",
                                "Only start streaming and continue streaming types are allowed as a typing activity")
        if body["type"] == "message" and stream_type != "final":
            return self._refuse(400, "BadArgument", "a message activity ends a stream (streamType final)")
        if body["type"] == "typing" and not text:
            return self._refuse(400, "BadArgument", "Start streaming activities should include text")
        if conversation.last_stream_call and now - conversation.last_stream_call < self.stream_interval - self.transit:
            self.throttled += 1
            self.violations.append(f"429: stream updates {now - conversation.last_stream_call:.2f}s apart")
            return _error(429, "ThrottledRequest", "API calls quota exceeded",
                          {"Retry-After": f"{self.stream_interval:g}"})
        shown = None
        if stream_id is not None:
            shown = next((m for m in conversation.messages if m.id == stream_id and m.stream), None)
            if shown is None:
                return self._refuse(400, "BadArgument", "unknown streamId")
            if shown.stream in ("final", "timed_out") and shown.stream == "final":
                return self._refuse(403, "ContentStreamNotAllowed",
                                    "Content stream is not allowed on an already completed streamed message.")
            if shown.stream == "timed_out" or now - shown.started > self.stream_cap:
                shown.stream = "timed_out"
                return _error(403, "ContentStreamNotAllowed", "Content stream finished due to exceeded streaming time.")
        conversation.calls.append(now)
        conversation.last_stream_call = now
        if shown is None:
            if stream_type == "final":
                return self._refuse(400, "BadArgument", "a final stream message needs a streamId")
            if any(m.stream == "streaming" for m in conversation.messages):
                return self._refuse(403, "ContentStreamNotAllowed", "only one stream per chat at a time")
            if stream.get("streamSequence") != 1:
                return self._refuse(400, "BadArgument", "the first streaming activity has streamSequence 1")
            shown = Shown(self._new_id(), text if stream_type == "streaming" else "", from_bot=True,
                          stream="streaming", sequence=1, started=now)
            conversation.messages.append(shown)
            return web.json_response({"id": shown.id}, status=201)
        if stream_type == "final":
            shown.text, shown.stream = text, "final"
            shown.attachments = list(body.get("attachments") or [])
            return web.json_response({"id": shown.id}, status=201)
        sequence = stream.get("streamSequence")
        if not isinstance(sequence, int) or sequence <= shown.sequence:
            self.violations.append(f"202: streamSequence {sequence} after {shown.sequence}")
            return _error(202, "ContentStreamSequenceOrderPreConditionFailed", "out of order; dropped")
        if stream_type == "informative" and shown.text:
            return self._refuse(400, "BadArgument", "informative updates only before the streamed text")
        if not text.startswith(shown.text):
            return self._refuse(403, "ContentStreamNotAllowed",
                                "Request streamed content should contain the previously streamed content")
        shown.text, shown.sequence = text, sequence
        shown.updates += 1
        return web.json_response({}, status=202)

    def _new_id(self) -> str:
        return f"1:{int(time.time() * 1000)}{next(self._ids):04d}"

    async def _attachment(self, request: web.Request) -> web.StreamResponse:
        file_id = request.match_info["file"]
        self.downloads.append((file_id, request.headers.get("Authorization")))
        if not self._authorized(request):
            return web.json_response({"message": "Authorization has been denied for this request."}, status=401)
        if file_id not in self.files:
            return web.Response(status=404)
        return web.Response(body=self.files[file_id], content_type="image/png")

    async def _shared_file(self, request: web.Request) -> web.StreamResponse:
        file_id = request.match_info["file"]
        self.downloads.append((file_id, request.headers.get("Authorization")))
        if file_id not in self.files:
            return web.Response(status=404)
        return web.Response(body=self.files[file_id], content_type="application/octet-stream")


CARD = "application/vnd.microsoft.card.adaptive"


def _images(shown: Shown) -> list[dict[str, Any]]:
    return [a for a in shown.attachments if str(a.get("contentUrl", "")).startswith("data:")]


def _card_of(attachments: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((a["content"] for a in attachments if a.get("contentType") == CARD), None)


def _stream_info(body: dict[str, Any]) -> dict[str, Any] | None:
    for entity in body.get("entities") or []:
        if isinstance(entity, dict) and entity.get("type") == "streaminfo":
            return entity
    return None


def _attachment_problem(item: Any) -> str:
    if not isinstance(item, dict) or not isinstance(item.get("contentType"), str):
        return "an attachment needs a contentType"
    if item["contentType"] == CARD:
        card = item.get("content")
        if not isinstance(card, dict) or card.get("type") != "AdaptiveCard" or not card.get("version"):
            return "an Adaptive Card needs type AdaptiveCard and a version"
        for action in card.get("actions") or []:
            if action.get("type") not in ("Action.Submit", "Action.Execute", "Action.OpenUrl", "Action.ShowCard") \
                    or not action.get("title"):
                return "an Adaptive Card action needs a known type and a title"
        return ""
    url = item.get("contentUrl")
    if isinstance(url, str) and url.startswith("data:"):
        try:
            base64.b64decode(url.split(",", 1)[1], validate=True)
        except (ValueError, IndexError):
            return "a data URI that is not base64"
    return ""


async def _main() -> None:  # pragma: no cover - `python -m hermes_teams.emulator` for trying it by hand
    async with TeamsEmulator() as emulator:
        print(json.dumps(emulator.settings(), indent=2), flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    asyncio.run(_main())
