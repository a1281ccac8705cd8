"""The WhatsApp platform plugin: its declaration, and the client that serves one business number.

:data:`PLATFORM` declares WhatsApp's limits, the settings type and the
client factory; the gateway builds one :class:`WhatsAppClient` per run
from ``platforms.whatsapp`` and a :class:`~hermes_gateway.PlatformContext`.
Tests build theirs the same way with
:class:`hermes_gateway.testing.PlatformRunner`, pointed at
:class:`~hermes_whatsapp.emulator.GraphApiEmulator`.

WhatsApp cannot edit a message the business sent, so ``supports_edit`` is
false: the person sees *typing…* while the reply is written, then the whole
reply once, split by the core past 4096 characters. Messages come in over
a webhook (``/webhooks/whatsapp`` on the gateway's HTTP listener), which is
answered before the model runs.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from collections import Counter
from typing import Any, Mapping

from aiohttp import web

import hermes_gateway
from hermes_gateway import (ConfigError, DeliveryError, Incoming, Media, MessageRef, Platform, PlatformClient,
                            PlatformContext, RateBudget, Stream, markdown_keep_whole)

from .errors import TOKEN_INVALID, UNKNOWN_OBJECT, PairBackoff
from . import formatting
from . import media as attachments
from .graph import GraphClient
from .doctor import doctor
from .notices import NOTICE
from .redaction import scrub
from .settings import WhatsAppSettings
from .inbound_media import MediaDownloads
from .webhook import (MEDIA_TYPES, NOTICE_TYPES, QUIET_TYPES, SHARED_TYPES, SIGNATURE_HEADER, Delivery, handshake, parse,
                      verify_signature)

log = logging.getLogger(__name__)

NAME = "whatsapp"
ROUTE = "/webhooks/whatsapp"
MAX_MESSAGE_CHARS = 4096
#: Per user: about one message every 6 s, with a burst (Meta allows short bursts of many more), so a
#: reply split into several messages, and its typing indicator, still go out at once and in order.
BUDGETS: Mapping[str, RateBudget] = {"default": RateBudget(rate=1 / 6, burst=20)}
#: Per business number: 80 messages a second by default (Meta raises it up to 1,000 for busy numbers).
BOT_BUDGET = RateBudget(rate=80.0, burst=80)
#: The typing indicator lasts 25 s: the platform asks the core for no refresh sooner than this.
TYPING_REFRESH = 20.0
#: Message kinds that carry words the model can answer.
TEXT_TYPES = frozenset({"text", "button", "interactive"})
#: How long a pair (the same user) that met WhatsApp's pair rate limit is left alone at first.
PAIR_WAIT = 4.0


class WhatsAppClient(PlatformClient):
    """Receives and sends WhatsApp messages for one business phone number, for one gateway run."""

    settings: WhatsAppSettings

    def __init__(self, settings: WhatsAppSettings, context: PlatformContext) -> None:
        super().__init__(settings, context)
        self.pairs = PairBackoff(first=PAIR_WAIT)
        self.events: Counter[str] = Counter()   # webhook events by kind, also in /metrics
        self._graph: GraphClient | None = None
        #: The files users send, as attachments downloaded on the core's demand (:mod:`.inbound_media`).
        self.media = MediaDownloads(lambda: self.graph)
        from .choices import Taps

        #: Taps on approval buttons, handed to the core and answered (:mod:`.choices`).
        self.taps = Taps(context, lambda: self.graph)
        from .bursts import Bursts

        #: A person's photos, videos and documents sent at once, handed to the core as one message.
        self.bursts = Bursts(lambda incoming: self.context.receive(incoming))
        context.add_route("GET", ROUTE, self._handshake)
        context.add_route("POST", ROUTE, self._webhook)

    @property
    def graph(self) -> GraphClient:
        """The Graph API client, built on first use (on the running loop)."""
        if self._graph is None:
            self._graph = GraphClient(self.settings, self.pairs)
        return self._graph

    async def stop(self) -> None:
        """The files still being gathered go to the core now (it takes messages until the platforms stopped)."""
        self.bursts.hand_over_all()

    async def close(self) -> None:
        graph, self._graph = self._graph, None
        if graph is not None:
            await graph.close()

    async def start(self) -> None:
        """Check the token and the number id once; the webhook route is already listening."""
        source = self.context.source
        try:
            number = await self.graph.phone_number()
        except DeliveryError as exc:
            code = getattr(exc, "code", None)
            if code == TOKEN_INVALID or "access token was rejected" in str(exc):
                raise ConfigError(source, "platforms.whatsapp.access_token",
                                  "a token Meta accepts (the Graph API answered 190 / 401)") from None
            if code == UNKNOWN_OBJECT:
                raise ConfigError(source, "platforms.whatsapp.phone_number_id",
                                  "the id of a phone number this token can use (the Graph API does not know it)"
                                  ) from None
            log.warning("whatsapp: could not look up the phone number (%s); sending will keep trying", exc)
            self.context.report_disconnected(f"phone number lookup failed: {exc}")
        else:
            shown = number.get("display_phone_number") or self.settings.phone_number_id
            log.info("whatsapp: receiving webhooks for %s at %s", shown, ROUTE)
            # the webhook route is mounted and the Graph API accepts the token and the number: as connected
            # as a webhook platform gets (whether Meta posts here is Meta's side; a signed POST confirms it)
            self.context.report_connected()

    # ---------------------------------------------------------------- the webhook

    async def _handshake(self, request: web.Request) -> web.Response:
        """Meta's subscription check: echo ``hub.challenge`` when ``hub.verify_token`` is ours, else 403."""
        challenge = handshake(request.query, self.settings.verify_token)
        if challenge is None:
            log.warning("whatsapp: refused a webhook verification request (wrong mode or verify token)")
            return web.Response(status=403, text="forbidden")
        log.info("whatsapp: webhook verified by Meta")
        return web.Response(status=200, text=challenge, content_type="text/plain")

    async def _webhook(self, request: web.Request) -> web.Response:
        """Verify the signature on the raw body, then take what it carries; answered at once.

        A 5xx would make Meta deliver again for days, so there is only one: messages arriving while the
        gateway stops (503), which Meta should indeed deliver again, to the restarted gateway.
        """
        settings = self.settings
        body = await request.read()
        header = request.headers.get(SIGNATURE_HEADER)
        if not verify_signature(settings.app_secret, body, header):
            self._count("bad_signature")
            log.warning("whatsapp: refused a webhook POST with a %s %s header", "wrong" if header else "missing",
                        SIGNATURE_HEADER)
            return web.Response(status=403 if header else 401, text="bad signature")
        self.context.report_connected()  # Meta reached the webhook with our app secret's signature
        try:
            delivery = parse(body, str(settings.phone_number_id))  # a str already (settings normalise it)
            if delivery.messages and not self.context.accepting:
                # the only 5xx: a stopping gateway would drop these messages; Meta delivers them again later
                log.info("whatsapp: the gateway is stopping; asked Meta to deliver %d message(s) again later",
                         len(delivery.messages))
                return web.Response(status=503, text="stopping", headers={"Retry-After": "30"})
            self._take(delivery)
        except Exception as exc:  # a bug here must not become a 500 that Meta retries for days
            log.error("whatsapp: a webhook delivery could not be handled: %s", scrub(f"{type(exc).__name__}: {exc}"))
        return web.Response(status=200, text="ok")

    def _take(self, delivery: Delivery) -> None:
        problems = list(delivery.problems)
        if delivery.other_numbers:
            log.info("whatsapp: ignored a webhook for phone number id(s) %s (this gateway serves %s)",
                     ", ".join(sorted(delivery.other_numbers)), self.settings.phone_number_id)
        for status in delivery.statuses:
            self._count(f"status_{status.status}")
            if status.status == "failed":
                errors = "; ".join(f"{code} {title}".strip() for code, title in status.errors) or "no reason given"
                log.warning("whatsapp: message %s to %s failed: %s", status.wamid, status.recipient, errors)
        for message in delivery.messages:
            if message.kind == "interactive" and self.taps.take(message.sender, message.reply_id):
                self._count("choice")  # a tap on an approval button: an answer, not a message
                continue
            incoming = Incoming(NAME, message.sender, message.text, sender_id=message.sender,
                                update_id=message.wamid, message_id=message.wamid, chat_kind="private")
            if message.kind in TEXT_TYPES or (message.kind in SHARED_TYPES and message.text):
                self._count("message_text")  # a shared location or contact: its line is the text
                self.bursts.take(incoming, message.kind)
            elif message.kind in MEDIA_TYPES and message.media is not None:  # the caption is the text
                self._count("message_media")  # photos sent at once are one message (:mod:`.bursts`)
                self.bursts.take(replace(incoming, attachments=(self.media.attachment(message),)), message.kind)
            elif message.kind in NOTICE_TYPES or message.kind in MEDIA_TYPES:  # a media message without its id too
                # the core answers it with the notice, like any message
                self._count("message_not_text")
                self.bursts.take(replace(incoming, text="", notice=NOTICE), message.kind)
            elif message.kind in QUIET_TYPES:
                self._count(f"message_{message.kind}")
            else:
                problems.append(f"a message of unknown type {message.kind[:30]!r}")
        if problems:
            self._count("malformed")
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            log.warning("whatsapp: ignored %s of a webhook delivery: %s%s",
                        "all" if delivery.empty else "part", problems[0], more)

    def _count(self, event: str) -> None:
        """Count a webhook event here and in ``/metrics`` (``hermes_platform_events_total``)."""
        self.events[event] += 1
        self.context.count(event)

    # ---------------------------------------------------------------- approval buttons (issue 25)

    async def offer_choice(self, stream: Stream, choice: Any) -> MessageRef:
        """The question with interactive reply buttons (:mod:`.choices`)."""
        from .choices import offer_choice

        return await offer_choice(self, stream, choice)

    async def close_choice(self, stream: Stream, message: MessageRef, text: str) -> None:
        """The outcome as a new message quoting the question (WhatsApp cannot edit)."""
        from .choices import close_choice

        await close_choice(self, stream, message, text)

    # ---------------------------------------------------------------- stream methods (called by the core)

    async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
        """Status reactions (issue 24): a reaction message on the user's message; a new one replaces the last.

        WhatsApp reports no edits of the person's messages to a Cloud API number: there are none to handle.
        """
        await self.graph.react(chat_id, message_id, emoji)

    def supports_edit(self, stream: Stream) -> bool:
        return False  # WhatsApp cannot edit what the business sent: one final send per message

    async def on_stream_start(self, stream: Stream) -> None:
        """*typing…* (which also marks the question read); the core refreshes it every ``typing_refresh`` s."""
        if not stream.reply_to:
            return  # the indicator hangs on the user's message: without one there is nothing to show it on
        await self.graph.typing(stream.chat_id, stream.reply_to)
        stream.state["read"] = True

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        """Not called while ``supports_edit`` is false; the contract wants it beside ``supports_edit``."""
        return await self._send(stream, message, text)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self._send(stream, message, text)

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """A tool's file: uploaded to ``/media``, then an image/video/audio/document message (:mod:`.media`)."""
        return await attachments.send(self.graph, stream, media)

    async def _send(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        """Send ``text`` as a new message; the reply's first message quotes the question.

        The blank lines at a cut (the core splits at paragraphs) are not sent: on a phone they would show
        as an empty gap at the end of one bubble and the start of the next.
        """
        if message is not None:
            raise DeliveryError("whatsapp cannot edit a message it sent", retryable=False)
        quote = stream.reply_to if not stream.state.get("quoted") else None
        if quote and not stream.state.get("read"):
            await self._mark_read(stream, quote)
        text = formatting.render(text)  # tables laid out for a phone (the core measured this rendering)
        wamid = await self.graph.send_text(stream.chat_id, text.strip() or text, quote=quote)
        stream.state["quoted"] = True
        return MessageRef(stream.chat_id, wamid, stream.thread_id)

    async def _mark_read(self, stream: Stream, message_id: str) -> None:
        """A reply that came before the core showed *typing…* (which marks the question read) still marks it read,
        so the person's message does not stay on grey ticks. Best effort: a failure costs one log line, never the
        reply. A read mark is no message: the pair rate limit counts messages."""
        stream.state["read"] = True
        try:
            await self.graph.mark_read(stream.chat_id, message_id)
        except DeliveryError as exc:
            log.warning("whatsapp: could not mark the question read: %s", exc)


#: WhatsApp as the core sees it: limits, settings, and the client factory.
PLATFORM = Platform(
    name=NAME, max_message_length=MAX_MESSAGE_CHARS, length_unit="chars", edit_interval=0.0,
    budgets=dict(BUDGETS), bot_budget=BOT_BUDGET, typing_interval=TYPING_REFRESH,
    description="WhatsApp Cloud API (Graph API over aiohttp, signed webhooks)",
    media=attachments.LIMITS, settings=WhatsAppSettings, client=WhatsAppClient,
    rendered_length=formatting.rendered_length, keep_whole=markdown_keep_whole, doctor=doctor,
)


class WhatsAppPlugin:
    """The plugin object the entry point registers: it declares the platform, nothing more."""

    __name__ = "hermes_whatsapp"

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Any) -> None:
        register(PLATFORM)
