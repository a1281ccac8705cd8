"""One running Slack client per gateway: the Web API connection, receiving, and the stream methods.

The core builds it as ``SlackClient(settings, context)`` for an enabled
``platforms.slack`` (the gateway, ``hermes-gateway ask`` and the test kit
alike); building does no I/O, and mounts ``POST /webhooks/slack/events``
only in ``mode: http``. ``start()`` checks the bot token and begins
receiving (:mod:`.receiving`), ``stop()`` stops receiving while replies
still being written go out, ``close()`` closes the Web API connections.
Everything it learns while running (the bot's user id, the threads it
replied in, a workspace's refusal of native streaming, the stream starts
of the last minute) lives in this object, so two gateways in one process
share nothing.

Sending: :mod:`.outbound` (native streaming or post + update); a tool's
files: :mod:`.files` (``files_upload_v2`` into the thread). Files people
share: :mod:`.inbound_files` (as attachments) and :mod:`.download`
(``url_private``, streamed when the core asks).
"""

from __future__ import annotations

import logging
from typing import Any

from hermes_gateway import ConfigError, DeliveryError, Media, MessageRef, PlatformClient, PlatformContext, Stream

from . import files, formatting
from .download import Downloads
from .errors import translate
from .inbound import EventReader
from .outbound import Outbound
from .receiving import EVENTS_PATH, Receiver
from .settings import SlackSettings
from .starts import StartWindow

log = logging.getLogger(__name__)


class SlackClient(PlatformClient):
    """Sends into and receives from one Slack app (one workspace), for one gateway."""

    settings: SlackSettings

    def __init__(self, settings: SlackSettings, context: PlatformContext) -> None:
        super().__init__(settings, context)
        #: Files people share, streamed from ``url_private`` when the core asks (closed in close()).
        self.downloads = Downloads(settings.bot_token, settings.api_base_url)
        self.events = EventReader(self.downloads, context.platform)
        self.outbound = Outbound(lambda: self.web, native=lambda: settings.native,
                                 recipient=self.events.recipient, joined=self.events.joined,
                                 starts=StartWindow(settings.start_streams_per_minute))
        self.receiver = Receiver(settings, context, self.events, lambda: self.web)
        self._web: Any = None
        if settings.mode == "http":
            from .webhook import EventsEndpoint

            context.add_route("POST", EVENTS_PATH, EventsEndpoint(self).handle)
            from .choices import INTERACTIVITY_PATH  # button presses: signed and dispatched like events

            context.add_route("POST", INTERACTIVITY_PATH, EventsEndpoint(self).handle)

    # ---------------------------------------------------------------- the Web API client

    @property
    def web(self) -> Any:
        """The ``AsyncWebClient`` (bot token, ``api_base_url``), built on first use.

        It keeps one aiohttp session, so calls reuse their connection: without
        one, slack_sdk opens a new connection (and TLS handshake) for every
        call, which Slack's final edit of a reply would wait for.
        """
        if self._web is None:
            try:
                web_client = files.web_client_class()   # slack_sdk's AsyncWebClient, noting upload steps
            except ImportError:
                raise DeliveryError("slack needs slack_sdk and slack-bolt: pip install hermes-slack",
                                    retryable=False) from None
            import aiohttp

            timeout = self.settings.api_timeout
            session = (aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) if timeout
                       else aiohttp.ClientSession())
            self._web = web_client(token=self.settings.bot_token, base_url=self.settings.api_base_url,
                                   session=session, logger=logging.getLogger("slack_sdk.web.async_base_client"))
        return self._web

    @property
    def bolt(self) -> Any:
        """The running bolt app (None when not receiving): what the events route hands a signed request to."""
        return self.receiver.bolt

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Check the bot token, then connect Socket Mode (or wait for signed HTTP events)."""
        try:
            _ = self.web  # built now: without slack_sdk, start-up stops here in one line, not at the first reply
        except DeliveryError as exc:
            raise ConfigError(self.context.source, "platforms.slack", str(exc)) from None
        await self.receiver.start()

    async def stop(self) -> None:
        """Stop receiving; the Web API connection stays open for the replies still being written."""
        await self.receiver.stop()

    async def close(self) -> None:
        """Close the Web API and download connections (and Socket Mode, if ``stop`` was never called)."""
        await self.receiver.stop()
        await self.downloads.close()
        web, self._web = self._web, None
        session = getattr(web, "session", None)
        if session is not None and not session.closed:
            await session.close()

    # ---------------------------------------------------------------- status reactions (issue 24)

    async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
        """``reactions.add`` on the person's message (``message_id`` is its ts; see :mod:`.reactions`)."""
        from .reactions import add_reaction

        await add_reaction(self.web, chat_id, message_id, emoji)

    # ---------------------------------------------------------------- approval buttons (issue 25)

    async def offer_choice(self, stream: Stream, choice: Any) -> MessageRef:
        """The question with Block Kit buttons, in the reply's thread (:mod:`.choices`)."""
        from .choices import offer_choice

        try:
            return await offer_choice(self, stream, choice)
        except DeliveryError:
            raise
        except Exception as exc:
            raise translate(exc, "choice") from None

    async def close_choice(self, stream: Stream, message: MessageRef, text: str) -> None:
        """The question's message now reads ``text``; its buttons are gone."""
        from .choices import close_choice

        await close_choice(self, stream, message, text)

    # ---------------------------------------------------------------- stream methods

    def supports_edit(self, stream: Stream) -> bool:
        return True

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        try:
            return await self.outbound.preview(stream, message, text)
        except DeliveryError:
            raise
        except Exception as exc:
            raise translate(exc, "preview") from None

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        try:
            return await self.outbound.final(stream, message, formatting.render(text))  # tables laid out
        except DeliveryError:
            raise
        except Exception as exc:
            raise translate(exc, "final") from None

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """A tool's file, shared into the reply's thread with its caption as the comment (:mod:`.files`)."""
        ref = await files.upload(self.web, stream, media)
        self.events.joined(stream.chat_id, stream.thread_id)
        return ref
