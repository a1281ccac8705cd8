"""An emulator of the WhatsApp Cloud API (Graph API), and signed webhook deliveries, for tests without a network.

The plugin talks to it exactly as it talks to Meta: ``POST
/{version}/{phone_number_id}/messages`` with a bearer token (text sends up
to 4096 characters, the typing indicator, image/video/audio/document
messages showing uploaded media), ``POST /{version}/{phone_number_id}/media``
(multipart ``messaging_product``, ``type``, ``file``: Meta's mime types,
100 MB; the per-type limits, 5 MB images, 16 MB video and audio, are
checked when a message shows the media), ``GET /{version}/{phone_number_id}``,
errors as ``{"error": {"code": ...}}`` with HTTP 400 (or any status asked
for). Every call is recorded in :attr:`GraphApiEmulator.calls`. Each user's
phone keeps a *screen*: the business's messages in order, which is what the
person sees::

    async with GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET) as meta:
        plugin = WhatsAppPlugin(..., api_base_url=meta.base_url)
        status = await meta.deliver(webhook_url, meta.text_message("4915112345678", "hi"))
        ...
        assert meta.screen("4915112345678") == ["Hello!"]

The other half of Meta is the webhook: :meth:`text_message`,
:meth:`media_message` and :meth:`status_update` build payloads,
:meth:`signed` signs them with the app secret as Meta does, and
:meth:`deliver` POSTs them to the gateway. With :meth:`send_statuses_to`
the emulator also reports ``sent``/``delivered`` for every message the bot
sends, as Meta does. A :meth:`media_message` carries a real file (a photo,
a PDF, an OGG/Opus voice note, or one declared too large and never held),
which the plugin looks up and downloads with its token
(:mod:`.emulator_files`); every lookup and download is logged in :attr:`files`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import web

from hermes_gateway import RateBudget
from hermes_gateway.testing import samples, serve_locally

from .emulator_buttons import check_buttons, tap
from .emulator_files import DOWNLOAD_PATH, MediaStore
from .errors import PAIR_RATE, THROUGHPUT, TOKEN_INVALID, UNDELIVERABLE, UNKNOWN_OBJECT, WINDOW_CLOSED
from .media import NATIVE, UPLOADABLE
from .webhook import SIGNATURE_HEADER, signature

MAX_TEXT_CHARS = 4096
MAX_CAPTION_CHARS = 1024
#: What a message of each type may show, in bytes (Meta's supported media types).
MEDIA_TYPE_LIMITS = {"image": 5 * 1024 * 1024, "video": 16 * 1024 * 1024, "audio": 16 * 1024 * 1024,
                     "document": 100 * 1024 * 1024}
MAX_UPLOAD_BYTES = max(MEDIA_TYPE_LIMITS.values())
MEDIA_TYPES = tuple(MEDIA_TYPE_LIMITS)
#: A 1x1 PNG: the default picture a user sends.
PNG_1x1 = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                        "0000000b49444154789c6360000200000500017a5eab3f0000000049454e44ae426082")
#: What a user sends of each media type unless a test gives the bytes: (mime type, bytes or a maker).
SAMPLE_FILES: dict[str, tuple[str, Any]] = {
    "image": ("image/png", PNG_1x1),
    "audio": ("audio/ogg; codecs=opus", lambda: samples.voice_ogg(0.5)),
    "video": ("video/mp4", b"\0\0\0\x18ftypmp42\0\0\0\0mp42isom"),
    "document": ("application/pdf", b"%PDF-1.4\n% a one-line document\n%%EOF\n"),
    "sticker": ("image/webp", b"RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0\x2f\0\0\0\x10\x07\x10\x11\x11\x88\x88\xfe\x07\0"),
}
#: After a pair rate limit, a send to the same user sooner than this is recorded as a violation.
PAIR_PENALTY = 4.0

#: Meta's wording for the codes tests ask for.
MESSAGES = {
    PAIR_RATE: ("(#131056) (Business Account, Consumer Account) pair rate limit hit",
                "Message failed to send because there were too many messages sent from this phone number to "
                "the same phone number in a short period of time."),
    THROUGHPUT: ("(#130429) Rate limit hit", "Cloud API message throughput has been reached."),
    WINDOW_CLOSED: ("(#131047) Re-engagement message",
                    "Message failed to send because more than 24 hours have passed since the customer last "
                    "replied to this number."),
    UNDELIVERABLE: ("(#131026) Message Undeliverable", "Unable to deliver message."),
    TOKEN_INVALID: ("Invalid OAuth access token - Cannot parse access token", ""),
    131000: ("(#131000) Something went wrong", "Something went wrong."),
}


@dataclass(frozen=True)
class GraphCall:
    """One request to the emulator: when (``time.monotonic()``), what, and how it was answered."""

    at: float
    method: str
    path: str
    body: Any
    status: int
    outcome: str    # "sent", "typing", "lookup", or the error text


@dataclass(frozen=True)
class UploadedMedia:
    """A file uploaded to ``/media``: what the phone downloads when a message shows it."""

    id: str
    mime: str
    filename: str
    data: bytes = field(repr=False)


@dataclass
class PhoneMessage:
    """One message from the business as the user's phone shows it."""

    wamid: str
    text: str
    quotes: str | None = None    # the wamid of the user's message it replies to
    preview_url: bool = False
    kind: str = "text"           # or image/video/audio/document
    media: UploadedMedia | None = None
    caption: str = ""
    filename: str = ""           # the name the phone shows: a document's filename, else the upload's
    buttons: list[tuple[str, str]] = field(default_factory=list)  # reply buttons under it: (id, title)


@dataclass
class GraphError:
    """An error answer waiting to be given."""

    code: int
    status: int = 400
    message: str = ""
    details: str = ""
    delay: float = 0.0           # seconds to wait before answering (a slow or hanging Meta)
    on: str = "any"              # which calls it answers: "send", "typing" or "any"
    landed: bool = False         # a hang (code 0): the call takes effect, then the answer never comes in time


@dataclass
class EmulatedUser:
    """One WhatsApp user (a ``wa_id``) as the emulator sees them."""

    wa_id: str
    messages: list[PhoneMessage] = field(default_factory=list)
    said: list[tuple[str, str]] = field(default_factory=list)    # what the user wrote: (wamid, text or type)
    read: list[str] = field(default_factory=list)                # user messages marked read, in order
    typing: list[str] = field(default_factory=list)              # user messages typing was shown on, in order
    #: the business's reaction on each of the user's messages now (wamid -> emoji; a new one replaces it)
    reactions: dict[str, str] = field(default_factory=dict)
    #: every accepted reaction message: (wamid, emoji or "" when removed, time.monotonic())
    reaction_log: list[tuple[str, str, float]] = field(default_factory=list)
    calls: list[GraphCall] = field(default_factory=list)
    pending_errors: list[GraphError] = field(default_factory=list)
    window_open: bool = True
    blocked_until: float = float("-inf")
    violations: list[str] = field(default_factory=list)
    tokens: float = -1.0
    refilled: float = 0.0

    @property
    def screen(self) -> list[str]:
        """The business's messages, top to bottom; an attachment as ``[image: qr.png] caption``."""
        return [m.text for m in self.messages]

    @property
    def attachments(self) -> list[tuple[str, bytes]]:
        """The files the phone received, in order: ``(file name shown, bytes)``."""
        return [(m.filename, m.media.data) for m in self.messages if m.media is not None]


class GraphApiEmulator:
    """An aiohttp app on 127.0.0.1 (ephemeral port) that answers like the Cloud API for one phone number.

    ``pair_limit`` (optional) is Meta's per-user limit: a send beyond it
    gets ``131056``. ``max_text_chars`` is the longest text body accepted.
    """

    def __init__(self, access_token: str, phone_number_id: str, app_secret: str, *, version: str = "v21.0",
                 pair_limit: RateBudget | None = None, max_text_chars: int = MAX_TEXT_CHARS,
                 display_phone_number: str = "+1 555-0100") -> None:
        self.access_token = access_token
        self.phone_number_id = phone_number_id
        self.app_secret = app_secret
        self.version = version
        self.pair_limit = pair_limit
        self.max_text_chars = max_text_chars
        self.display_phone_number = display_phone_number
        self.pair_penalty = PAIR_PENALTY                # after a 131056, a send sooner is a violation
        self.users: dict[str, EmulatedUser] = {}
        self.calls: list[GraphCall] = []
        self.deliveries: list[tuple[int, bytes]] = []   # webhook POSTs made by deliver(): (status, body)
        self._any_call_errors: list[GraphError] = []
        self._lookup_errors: list[GraphError] = []
        self.media: dict[str, UploadedMedia] = {}      # uploads by media id
        #: Files users send (:mod:`.emulator_files`): the lookup, the media server, the download log.
        self.files = MediaStore(access_token)
        self._upload_errors: list[GraphError] = []
        self.upload_attempts = 0                        # POSTs to /media, answered or not
        self._ids = itertools.count(1)
        self._status_url: str | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None
        self.port: int | None = None

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> "GraphApiEmulator":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get(DOWNLOAD_PATH, self.files.serve)
        app.router.add_route("*", "/{version}/{object_id}/messages", self._messages)
        app.router.add_route("*", "/{version}/{object_id}/media", self._upload)
        app.router.add_route("*", "/{version}/{object_id}", self._lookup)
        self._runner = await serve_locally(app, shutdown_timeout=0.5)
        self.port = self._runner.addresses[0][1]
        self.files.base = f"http://127.0.0.1:{self.port}"
        return self.base_url

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._http is not None:
            await self._http.close()
            self._http = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def base_url(self) -> str:
        """What to configure as ``api_base_url``: ``http://127.0.0.1:PORT/v21.0``."""
        if self.port is None:
            raise RuntimeError("the emulator is not started")
        return f"http://127.0.0.1:{self.port}/{self.version}"

    # ------------------------------------------------------------------ what tests read

    def user(self, wa_id: str) -> EmulatedUser:
        if wa_id not in self.users:
            self.users[wa_id] = EmulatedUser(wa_id)
        return self.users[wa_id]

    def screen(self, wa_id: str) -> list[str]:
        return self.user(wa_id).screen

    def attachments(self, wa_id: str) -> list[tuple[str, bytes]]:
        return self.user(wa_id).attachments

    @property
    def uploads(self) -> list[GraphCall]:
        """Every accepted ``/media`` upload, in order."""
        return [c for c in self.calls if c.outcome == "uploaded"]

    @property
    def sends(self) -> list[GraphCall]:
        """Every text send that was accepted, in order."""
        return [c for c in self.calls if c.outcome == "sent"]

    # ------------------------------------------------------------------ errors on demand

    def fail_next(self, wa_id: str, code: int, *, status: int = 400, message: str = "", details: str = "",
                  delay: float = 0.0, on: str = "send") -> None:
        """The next call about this user answers with WhatsApp error ``code``.

        ``on`` picks the call: ``"send"`` (a text), ``"typing"`` (the typing indicator) or ``"any"``.
        """
        default_message, default_details = MESSAGES.get(code, (f"(#{code}) Error", ""))
        self.user(wa_id).pending_errors.append(
            GraphError(code, status, message or default_message, details or default_details, delay, on))

    def fail_any_call(self, code: int, *, status: int = 400, times: int = 1, delay: float = 0.0) -> None:
        """The next ``times`` calls of any kind answer with ``code`` (130429 throughput, a 5xx...)."""
        message, details = MESSAGES.get(code, (f"(#{code}) Error", ""))
        self._any_call_errors.extend([GraphError(code, status, message, details, delay)] * times)

    def fail_lookup(self, code: int, *, status: int = 400, times: int = 1) -> None:
        """The next ``times`` lookups of the phone number (``GET /{phone_number_id}``, the plugin's start-up
        check) answer with ``code`` (e.g. 2, status 503: the Graph API briefly unavailable)."""
        message, details = MESSAGES.get(code, (f"(#{code}) Error", ""))
        self._lookup_errors.extend([GraphError(code, status, message, details)] * times)

    def hang_next(self, wa_id: str, seconds: float, *, landed: bool, on: str = "media") -> None:
        """The next message to this user gets no answer for ``seconds`` (longer than the plugin's timeout).

        ``landed``: the message is shown first (the answer is what got lost); else it never arrives.
        ``on``: ``"media"`` (a media message), ``"send"`` (any message).
        """
        self.user(wa_id).pending_errors.append(GraphError(0, 200, "hang", "", seconds, on, landed))

    def fail_upload(self, code: int, *, status: int = 400, times: int = 1, delay: float = 0.0) -> None:
        """The next ``times`` ``/media`` uploads answer with ``code`` (after ``delay``: a lost answer).

        An upload shows nothing, so a delay longer than the plugin's timeout loses only the answer.
        """
        message, details = MESSAGES.get(code, (f"(#{code}) Error", ""))
        self._upload_errors.extend([GraphError(code, status, message, details, delay)] * times)

    def inject_pair_rate_limit(self, wa_id: str) -> None:
        """The next send to this user answers ``131056`` (too many messages to one user)."""
        self.fail_next(wa_id, PAIR_RATE)

    def close_window(self, wa_id: str) -> None:
        """The user last wrote more than 24 hours ago: free-form sends answer ``131047``."""
        self.user(wa_id).window_open = False

    def send_statuses_to(self, url: str | None) -> None:
        """Report ``sent`` and ``delivered`` for each accepted send by signed webhooks to ``url``, as Meta does."""
        self._status_url = url

    # ------------------------------------------------------------------ the webhook side

    def text_message(self, sender: str, text: str, *, wamid: str | None = None, name: str = "Ada") -> dict[str, Any]:
        """The payload Meta POSTs when ``sender`` writes ``text``; opens the 24-hour window."""
        wamid = wamid or self._wamid()
        user = self.user(sender)
        user.said.append((wamid, text))
        user.window_open = True
        return self._payload(sender, {"from": sender, "id": wamid, "timestamp": str(int(time.time())),
                                      "type": "text", "text": {"body": text}}, name)

    def button_tap(self, sender: str, tapped: str, title: str, *, name: str = "Ada") -> dict[str, Any]:
        """The payload Meta POSTs when ``sender`` taps the reply button ``title`` under message ``tapped``."""
        message = next(m for m in self.user(sender).messages if m.wamid == tapped)
        wamid = self._wamid()
        self.user(sender).said.append((wamid, title))
        return self._payload(sender, tap(sender, wamid, tapped, message.buttons, title, self.phone_number_id), name)

    def media_message(self, sender: str, kind: str = "image", data: bytes | None = None, *, mime: str | None = None,
                      caption: str | None = None, filename: str | None = None, voice: bool = True,
                      size: int | None = None, wamid: str | None = None, name: str = "Ada") -> dict[str, Any]:
        """A message that is not text: ``image``, ``audio`` (a voice note unless ``voice=False``), ``video``,
        ``document``, ``sticker`` (kept as a file users sent, :attr:`files`), ``location``, ``reaction``...

        ``data``: the file's bytes (default: a small real file of the kind — a 1x1 PNG, half a second of
        OGG/Opus, a one-line PDF); ``size`` instead: a file declared that large, never held here.
        """
        wamid = wamid or self._wamid()
        self.user(sender).said.append((wamid, f"<{kind}>" + (f" {caption}" if caption else "")))
        body: dict[str, Any] = {"from": sender, "id": wamid, "timestamp": str(int(time.time())), "type": kind}
        if kind in SAMPLE_FILES:
            sample_mime, sample = SAMPLE_FILES[kind]
            if data is None and size is None:
                data = sample() if callable(sample) else sample
            stored = self.files.add(data, mime or sample_mime, size=size)
            body[kind] = {"id": stored.media_id, "mime_type": stored.mime, "sha256": stored.sha256}
            if kind == "audio":
                body[kind]["voice"] = voice
            if kind == "sticker":
                body[kind]["animated"] = False
            if caption is not None and kind in ("image", "video", "document"):
                body[kind]["caption"] = caption
            if kind == "document":
                body[kind]["filename"] = filename or "file.pdf"
        elif kind == "location":
            body[kind] = {"latitude": 52.52, "longitude": 13.405}
        elif kind == "contacts":  # a contact card the person shared
            body[kind] = [{"name": {"formatted_name": "Grace Hopper", "first_name": "Grace"},
                           "phones": [{"phone": "+1 555 0100", "wa_id": "15550100", "type": "CELL"}]}]
        elif kind == "reaction":
            body[kind] = {"message_id": self.user(sender).messages[-1].wamid if self.user(sender).messages
                          else wamid, "emoji": "👍"}
        return self._payload(sender, body, name)

    def status_update(self, wamid: str, status: str, recipient: str,
                      errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The payload Meta POSTs when a message we sent is ``sent``/``delivered``/``read``/``failed``."""
        body: dict[str, Any] = {"id": wamid, "status": status, "timestamp": str(int(time.time())),
                                "recipient_id": recipient}
        if errors:
            body["errors"] = errors
        return self._envelope({"statuses": [body]})

    def signed(self, payload: Any, *, secret: str | None = None) -> tuple[bytes, dict[str, str]]:
        """The body and headers Meta sends: compact JSON, signed with the app secret (or ``secret``)."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload, separators=(",", ":")).encode()
        return body, {"Content-Type": "application/json",
                      SIGNATURE_HEADER: signature(secret or self.app_secret, body)}

    async def deliver(self, url: str, payload: Any, *, headers: dict[str, str] | None = None,
                      secret: str | None = None) -> int:
        """POST a webhook delivery to ``url`` (the gateway's ``/webhooks/whatsapp``); returns the HTTP status.

        Signed like Meta signs it unless ``headers`` replaces the headers (a forged or unsigned delivery).
        """
        body, signed_headers = self.signed(payload, secret=secret)
        async with self._client().post(url, data=body, headers=signed_headers if headers is None else headers) as r:
            await r.read()
            self.deliveries.append((r.status, body))
            return r.status

    async def verify(self, url: str, verify_token: str, challenge: str = "1158201444") -> tuple[int, str]:
        """Meta's subscription check: ``GET url?hub.mode=subscribe&hub.verify_token=...&hub.challenge=...``."""
        query = urlencode({"hub.mode": "subscribe", "hub.verify_token": verify_token, "hub.challenge": challenge})
        async with self._client().get(f"{url}?{query}") as r:
            return r.status, await r.text()

    def _client(self) -> aiohttp.ClientSession:
        if self._http is None:
            self._http = aiohttp.ClientSession()
        return self._http

    def _wamid(self) -> str:
        return f"wamid.HBgL{next(self._ids):012d}"

    def _payload(self, sender: str, message: dict[str, Any], name: str) -> dict[str, Any]:
        return self._envelope({"contacts": [{"profile": {"name": name}, "wa_id": sender}], "messages": [message]})

    def _envelope(self, value: dict[str, Any]) -> dict[str, Any]:
        metadata = {"display_phone_number": self.display_phone_number.replace("+", "").replace(" ", "")
                    .replace("-", ""), "phone_number_id": self.phone_number_id}
        return {"object": "whatsapp_business_account",
                "entry": [{"id": "102290129340398", "changes": [
                    {"field": "messages", "value": {"messaging_product": "whatsapp", "metadata": metadata, **value}}]}]}

    # ------------------------------------------------------------------ HTTP

    async def _lookup(self, request: web.Request) -> web.Response:
        error = self._check_auth(request)
        path = request.path
        if error is None and request.method == "GET" and request.match_info["object_id"] in self.files.files:
            answer = self.files.lookup(request.match_info["object_id"])
            self.calls.append(GraphCall(time.monotonic(), request.method, path, None, 200, "media lookup"))
            return web.json_response(answer)
        if error is None and request.match_info["object_id"] != self.phone_number_id:
            error = GraphError(UNKNOWN_OBJECT, 400, f"Unsupported get request. Object with ID "
                                                    f"'{request.match_info['object_id']}' does not exist")
        if error is None and self._lookup_errors:
            error = self._lookup_errors.pop(0)
        if error is not None:
            return self._answer_error(None, request.method, path, None, error)
        self.calls.append(GraphCall(time.monotonic(), request.method, path, None, 200, "lookup"))
        return web.json_response({"verified_name": "Hermes Test", "display_phone_number": self.display_phone_number,
                                  "id": self.phone_number_id, "quality_rating": "GREEN"})

    async def _messages(self, request: web.Request) -> web.Response:
        path, method = request.path, request.method
        try:
            body = await request.json()
        except ValueError:
            body = None
        error = self._check_auth(request)
        if error is None and method != "POST":
            error = GraphError(UNKNOWN_OBJECT, 400, f"Unsupported {method.lower()} request.")
        if error is None and request.match_info["object_id"] != self.phone_number_id:
            error = GraphError(UNKNOWN_OBJECT, 400, f"Unsupported post request. Object with ID "
                                                    f"'{request.match_info['object_id']}' does not exist")
        if error is None and (not isinstance(body, dict) or body.get("messaging_product") != "whatsapp"):
            error = GraphError(UNKNOWN_OBJECT, 400, "(#100) The parameter messaging_product is required.")
        if error is not None:
            return self._answer_error(None, method, path, body, error)
        if body.get("status") == "read":
            return await self._read(method, path, body)
        return await self._send(method, path, body)

    async def _read(self, method: str, path: str, body: dict[str, Any]) -> web.Response:
        """Mark a user's message read, with the typing indicator when asked."""
        raw_id = body.get("message_id")
        wamid = raw_id if isinstance(raw_id, str) else ""  # matches no message a user said
        user = next((u for u in self.users.values() if any(w == wamid for w, _ in u.said)), None)
        if user is None:
            return self._answer_error(None, method, path, body, GraphError(
                UNKNOWN_OBJECT, 400, "(#100) Invalid parameter", "message_id is not a message this number received"))
        error = await self._admit(user, typing=True)
        if error is not None:
            return self._answer_error(user, method, path, body, error)
        user.read.append(wamid)
        typing = body.get("typing_indicator")
        if typing is not None:
            if typing != {"type": "text"}:
                return self._answer_error(user, method, path, body, GraphError(
                    UNKNOWN_OBJECT, 400, "(#100) Invalid parameter", "typing_indicator.type must be text"))
            user.typing.append(wamid)
        self._record(user, method, path, body, 200, "typing" if typing is not None else "read")
        return web.json_response({"success": True})

    async def _send(self, method: str, path: str, body: dict[str, Any]) -> web.Response:
        to = body.get("to")
        if not isinstance(to, str) or not to or any(c.isspace() for c in to):  # test chats may be "4915...-long"
            return self._answer_error(None, method, path, body, GraphError(
                UNKNOWN_OBJECT, 400, "(#100) Invalid parameter", "to must be the user's phone number (wa_id)"))
        user = self.user(to)
        kind = body.get("type", "text")
        if kind in MEDIA_TYPES:
            return await self._send_media(user, method, path, body, kind)
        if kind == "reaction":
            return await self._react(user, method, path, body)
        if kind == "interactive":
            try:
                prompt, buttons = check_buttons(body)
            except ValueError as exc:
                user.violations.append(f"an interactive message: {exc}")
                return self._answer_error(user, method, path, body, GraphError(
                    UNKNOWN_OBJECT, 400, "(#100) Invalid parameter", str(exc)))
            return await self._deliver_message(user, method, path, body, "interactive",
                                               PhoneMessage("", prompt, kind="interactive", buttons=buttons))
        if kind != "text":
            return self._answer_error(user, method, path, body, GraphError(
                UNKNOWN_OBJECT, 400, "(#100) Invalid parameter", "only text and media messages are emulated"))
        text: Any = body.get("text")  # JSON as the client sent it
        text_body = text.get("body") if isinstance(text, dict) else None
        if not isinstance(text_body, str) or not text_body.strip():
            return self._answer_error(user, method, path, body, GraphError(
                UNKNOWN_OBJECT, 400, "(#100) The parameter text['body'] is required."))
        if len(text_body) > self.max_text_chars:
            user.violations.append(f"a text of {len(text_body)} characters")
            return self._answer_error(user, method, path, body, GraphError(
                UNKNOWN_OBJECT, 400, f"(#100) Param text['body'] must be at most {self.max_text_chars} characters "
                                     "long."))
        return await self._deliver_message(user, method, path, body, "text",
                                           PhoneMessage("", text_body, None, bool(text.get("preview_url"))))

    async def _react(self, user: EmulatedUser, method: str, path: str, body: dict[str, Any]) -> web.Response:
        """A reaction message on one of the user's messages; it counts against the pair's limit like a message."""
        part = body.get("reaction")
        wamid = part.get("message_id") if isinstance(part, dict) else None
        emoji = part.get("emoji") if isinstance(part, dict) else None
        if not isinstance(wamid, str) or not any(w == wamid for w, _ in user.said) or not isinstance(emoji, str) \
                or len(emoji) > 16:
            user.violations.append(f"a reaction {part!r}")
            return self._answer_error(user, method, path, body, GraphError(
                UNKNOWN_OBJECT, 400, "(#100) Invalid parameter",
                "reaction needs the message_id of a message this user sent and one emoji"))
        error = await self._admit(user, typing=False)
        if error is not None and error.code != 0:
            return self._answer_error(user, method, path, body, error)
        if emoji:
            user.reactions[wamid] = emoji
        else:
            user.reactions.pop(wamid, None)
        user.reaction_log.append((wamid, emoji, time.monotonic()))
        self._record(user, method, path, body, 200, "reaction")
        return web.json_response({"messaging_product": "whatsapp",
                                  "contacts": [{"input": user.wa_id, "wa_id": user.wa_id}],
                                  "messages": [{"id": self._wamid()}]})

    async def _send_media(self, user: EmulatedUser, method: str, path: str, body: dict[str, Any],
                          kind: str) -> web.Response:
        """An image/video/audio/document message showing uploaded media (``{"id", "caption", "filename"}``)."""
        part = body.get(kind)

        def invalid(details: str) -> web.Response:
            user.violations.append(f"a {kind} message: {details}")
            return self._answer_error(user, method, path, body, GraphError(
                UNKNOWN_OBJECT, 400, "(#100) Invalid parameter", details))

        if not isinstance(part, dict):
            return invalid(f"{kind} must be an object with the media id")
        allowed = {"id", "link", "caption"} | ({"filename"} if kind == "document" else set())
        unknown = sorted(set(part) - allowed - ({"caption"} if kind == "audio" else set()))
        if kind == "audio" and "caption" in part:
            unknown.append("caption")
        if unknown:
            return invalid(f"{kind} does not take {', '.join(unknown)}")
        if "link" in part:
            return invalid("media by link is not emulated; upload it to /media and send its id")
        media = self.media.get(str(part.get("id", "")))
        if media is None:
            return invalid(f"{kind}['id'] is not a media id this number uploaded")
        caption = part.get("caption", "")
        if not isinstance(caption, str) or len(caption) > MAX_CAPTION_CHARS:
            return invalid(f"{kind}['caption'] must be a string of at most {MAX_CAPTION_CHARS} characters")
        if kind in NATIVE and media.mime not in NATIVE[kind]:
            return invalid(f"a {kind} message cannot show media of type {media.mime}")
        if len(media.data) > MEDIA_TYPE_LIMITS[kind]:
            return invalid(f"File Too Large: a {kind} may be at most {MEDIA_TYPE_LIMITS[kind] // (1024 * 1024)} MB")
        filename = str(part.get("filename") or media.filename) if kind == "document" else media.filename
        label = f"[{kind}: {filename}]" + (f" {caption}" if caption else "")
        return await self._deliver_message(user, method, path, body, kind,
                                           PhoneMessage("", label, kind=kind, media=media, caption=caption,
                                                        filename=filename))

    async def _deliver_message(self, user: EmulatedUser, method: str, path: str, body: dict[str, Any], kind: str,
                               message: PhoneMessage) -> web.Response:
        """The limits, then the message on the phone (a hang may answer too late, having shown it or not)."""
        error = await self._admit(user, typing=False, media=kind != "text")
        if error is None and not user.window_open:
            error = GraphError(WINDOW_CLOSED, 400, *MESSAGES[WINDOW_CLOSED])
        if error is not None and error.code == 0:  # a hang: the plugin times out before this answer
            if not error.landed:
                await asyncio.sleep(error.delay)
                self._record(user, method, path, body, 504, "hung, not shown")
                return web.json_response({}, status=504)
        elif error is not None:
            return self._answer_error(user, method, path, body, error)
        context = body.get("context")
        message.quotes = context.get("message_id") if isinstance(context, dict) else None
        message.wamid = wamid = self._wamid()
        user.messages.append(message)
        self._record(user, method, path, body, 200, "sent")
        if self._status_url:
            self._spawn(self._report_statuses(self._status_url, wamid, user.wa_id))
        if error is not None:  # a hang that landed: shown, the answer comes too late
            await asyncio.sleep(error.delay)
        return web.json_response({"messaging_product": "whatsapp",
                                  "contacts": [{"input": user.wa_id, "wa_id": user.wa_id}],
                                  "messages": [{"id": wamid}]})

    async def _upload(self, request: web.Request) -> web.Response:
        """``POST /{phone_number_id}/media``: multipart ``messaging_product``, ``type`` and ``file``."""
        path, method = request.path, request.method
        self.upload_attempts += 1
        error = self._check_auth(request)
        if error is None and method != "POST":
            error = GraphError(UNKNOWN_OBJECT, 400, f"Unsupported {method.lower()} request.")
        if error is None and request.match_info["object_id"] != self.phone_number_id:
            error = GraphError(UNKNOWN_OBJECT, 400, f"Unsupported post request. Object with ID "
                                                    f"'{request.match_info['object_id']}' does not exist")
        if error is not None:
            return self._answer_error(None, method, path, None, error)
        fields: dict[str, str] = {}
        upload: tuple[str, str, bytes] | None = None
        if not request.content_type.startswith("multipart/form-data"):  # a form or JSON cannot carry the file
            if request.content_type == "application/x-www-form-urlencoded":
                fields = {k: str(v)[:1000] for k, v in (await request.post()).items()}
            parts: Any = _no_parts()
        else:
            parts = await request.multipart()
        read = 0
        async for part in parts:
            if part.name == "file" and part.filename is not None:
                data = bytearray()
                while chunk := await part.read_chunk(1 << 16):
                    data.extend(chunk)
                    if len(data) > MAX_UPLOAD_BYTES:
                        break
                upload = (part.filename, part.headers.get("Content-Type", ""), bytes(data))
            elif part.name:
                fields[part.name] = (await part.read(decode=True)).decode(errors="replace")[:1000]
            read += 1
            if read > 20:
                break
        summary = {k: v for k, v in fields.items()} | ({"file": upload[0]} if upload else {})
        problem = None
        if fields.get("messaging_product") != "whatsapp":
            problem = ("(#100) The parameter messaging_product is required.", "")
        elif upload is None:
            problem = ("(#100) The parameter file is required.", "")
        elif not fields.get("type"):
            problem = ("(#100) The parameter type is required.", "")
        elif fields["type"] not in UPLOADABLE:
            problem = ("(#100) Param file must be a file with one of the following types: "
                       + ", ".join(sorted(UPLOADABLE)) + f". Received file of type '{fields['type']}'.", "")
        elif len(upload[2]) > MAX_UPLOAD_BYTES:
            problem = ("(#100) Invalid parameter", f"File Too Large: at most {MAX_UPLOAD_BYTES // (1024 * 1024)} MB")
        elif not upload[2]:
            problem = ("(#100) Invalid parameter", "the file is empty")
        if problem is not None:
            return self._answer_error(None, method, path, summary, GraphError(UNKNOWN_OBJECT, 400, *problem))
        injected = self._upload_errors.pop(0) if self._upload_errors else None
        if injected is not None:
            if injected.delay:
                await asyncio.sleep(injected.delay)
            return self._answer_error(None, method, path, summary, injected)
        assert upload is not None
        media = UploadedMedia(f"{next(self._ids) + 1_000_000_000_000_000}", fields["type"], upload[0], upload[2])
        self.media[media.id] = media
        self._record(None, method, path, summary, 200, "uploaded")
        return web.json_response({"id": media.id})

    # ------------------------------------------------------------------ rules

    def _check_auth(self, request: web.Request) -> GraphError | None:
        if request.headers.get("Authorization") != f"Bearer {self.access_token}":
            return GraphError(TOKEN_INVALID, 401, *MESSAGES[TOKEN_INVALID])
        return None

    async def _admit(self, user: EmulatedUser, *, typing: bool, media: bool = False) -> GraphError | None:
        """Injected errors and the pair limit, checked before a call has any effect.

        A hang (code 0) is returned for the caller to act out, not slept here.
        """
        now = time.monotonic()
        error = None
        if self._any_call_errors:
            error = self._any_call_errors.pop(0)
        else:
            kinds = ("typing", "any") if typing else ("send", "any", "media") if media else ("send", "any")
            error = next((e for e in user.pending_errors if e.on in kinds), None)
            if error is not None:
                user.pending_errors.remove(error)
        if error is not None and error.code == 0:
            return error
        if error is not None and error.delay:
            await asyncio.sleep(error.delay)
        if typing:
            return error
        if now < user.blocked_until:
            user.violations.append(f"a send {user.blocked_until - now:.3f}s before the pair rate limit's wait ended")
        if error is None and self.pair_limit is not None:
            budget = self.pair_limit
            if user.tokens < 0:
                user.tokens, user.refilled = float(budget.burst), now
            user.tokens = min(float(budget.burst), user.tokens + (now - user.refilled) * budget.rate)
            user.refilled = now
            if user.tokens < 1.0:
                error = GraphError(PAIR_RATE, 400, *MESSAGES[PAIR_RATE])
            else:
                user.tokens -= 1.0
        if error is not None and error.code == PAIR_RATE:
            user.blocked_until = max(user.blocked_until, now + self.pair_penalty)
        return error

    def _answer_error(self, user: EmulatedUser | None, method: str, path: str, body: Any,
                      error: GraphError) -> web.Response:
        self._record(user, method, path, body, error.status, f"{error.code}: {error.message}")
        payload: dict[str, Any] = {"message": error.message, "type": "OAuthException", "code": error.code,
                                   "fbtrace_id": "AbCdEf123"}
        if error.details:
            payload["error_data"] = {"messaging_product": "whatsapp", "details": error.details}
        return web.json_response({"error": payload}, status=error.status)

    def _record(self, user: EmulatedUser | None, method: str, path: str, body: Any, status: int,
                outcome: str) -> None:
        call = GraphCall(time.monotonic(), method, path, body, status, outcome)
        self.calls.append(call)
        if user is not None:
            user.calls.append(call)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _report_statuses(self, url: str, wamid: str, to: str) -> None:
        for status in ("sent", "delivered"):
            try:
                await self.deliver(url, self.status_update(wamid, status, to))
            except aiohttp.ClientError:
                return


async def _no_parts() -> Any:
    """An empty async iterator: a request without multipart parts."""
    parts: tuple[Any, ...] = ()
    for part in parts:
        yield part
