"""One running Teams bot per gateway: the messaging endpoint, the bot token, and the stream methods.

The core builds it as ``TeamsClient(settings, context)``; building does no
I/O and mounts ``POST {path}`` (``/api/messages``) on the gateway's
listener — Teams pushes activities, so there is nothing to start but that.
The Teams SDK's own app server (FastAPI + uvicorn on its own port) is not
used: the route is the gateway's, and the SDK provides the activity models,
the Bot Connector client and the token claim checks (see :mod:`.auth`,
:mod:`.connector`). Where each conversation lives (its ``serviceUrl``,
learnt from a verified activity) is kept in the gateway's store, so a reply
after a restart, or ``hermes-gateway send``, reaches it.
"""

from __future__ import annotations

import base64
import hashlib
import logging

import aiohttp

from hermes_gateway import (Choice, ConfigError, DeliveryError, Media, MessageRef, PlatformClient, PlatformContext,
                            Stream, rewrite_tables)

from . import cards
from .auth import InboundAuth
from .connector import Connector
from .endpoint import ActivityEndpoint
from .outbound import Outbound, message
from .settings import TeamsSettings
from .token import BotToken

log = logging.getLogger(__name__)
_SERVICE_URL_KEY = "service_url:"


class TeamsClient(PlatformClient):
    """Receives activities for one bot (one app id) and sends its replies through the Bot Connector."""

    settings: TeamsSettings

    def __init__(self, settings: TeamsSettings, context: PlatformContext) -> None:
        super().__init__(settings, context)
        self._session: aiohttp.ClientSession | None = None
        self._service_urls: dict[str, str] = {}
        self.auth = InboundAuth(settings.app_id, settings.openid_metadata_url, settings.issuer, self.session)
        self.token = BotToken(settings.token_url, settings.app_id, settings.app_password, settings.scope,
                              self.session)
        self.connector = Connector(self.token, settings.api_timeout)
        self.outbound = Outbound(self.connector, self.service_url, settings.native_streaming)
        context.add_route("POST", settings.path, ActivityEndpoint(self).handle)

    async def session(self) -> aiohttp.ClientSession:
        """The aiohttp session for the token service, the signing keys and downloads (opened on first use)."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.settings.api_timeout))
        return self._session

    # ---------------------------------------------------------------- where conversations live

    async def remember_service_url(self, chat_id: str, service_url: str | None) -> None:
        if not service_url or self._service_urls.get(chat_id) == service_url:
            return
        self._service_urls[chat_id] = service_url
        try:
            await self.context.set_value(_key(chat_id), service_url)
        except ValueError:
            pass  # the platform's 1 MiB of values is full: this run still knows it

    async def service_url(self, chat_id: str) -> str:
        known = self._service_urls.get(chat_id)
        if known is None:
            stored = await self.context.get_value(_key(chat_id), None)
            known = stored if isinstance(stored, str) else self.settings.service_url
            self._service_urls[chat_id] = known
        return known

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Teams posts to the endpoint, so there is nothing to connect; the bot's token is fetched now.

        Credentials the token service refuses stop start-up in one line naming
        the key; a token service that cannot be reached is logged, and the
        token is asked for again with the first reply. (Fetching it now also
        keeps its round trip out of the first reply's pacing.)
        """
        try:
            await self.token.get()
        except DeliveryError as exc:
            if not exc.retryable:
                raise ConfigError(self.context.source, "platforms.teams.app_password", str(exc)) from None
            log.warning("%s", exc)

    async def stop(self) -> None:
        """Nothing to stop: the endpoint answers 503 while the gateway stops (``context.accepting``)."""

    async def close(self) -> None:
        await self.connector.close()
        if self._session is not None:
            await self._session.close()
            self._session = None

    # ---------------------------------------------------------------- stream methods

    def supports_edit(self, stream: Stream) -> bool:
        return True

    async def on_stream_start(self, stream: Stream) -> None:
        await self.outbound.typing(stream)

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self.outbound.preview(stream, message, text)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self.outbound.final(stream, message, rewrite_tables(text, style="markdown"))

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """An image, inline in a message (base64 ``contentUrl``) with its caption as the text."""
        from microsoft_teams.api.models.attachment.attachment import Attachment

        data = base64.b64encode(media.read()).decode("ascii")
        mime = media.mime or "image/png"
        attachment = Attachment(content_type=mime, content_url=f"data:{mime};base64,{data}", name=media.filename)
        url = await self.service_url(stream.chat_id)
        sent = await self.connector.create(url, stream.chat_id, message(media.caption, [attachment]), what="image")
        return MessageRef(stream.chat_id, sent, stream.thread_id)

    # ---------------------------------------------------------------- approval buttons

    async def offer_choice(self, stream: Stream, choice: Choice) -> MessageRef:
        url = await self.service_url(stream.chat_id)
        sent = await self.connector.create(url, stream.chat_id, message(choice.prompt, [cards.attachment_of(choice)]),
                                           what="choice")
        return MessageRef(stream.chat_id, sent, stream.thread_id)

    async def close_choice(self, stream: Stream, ref: MessageRef, text: str) -> None:
        url = await self.service_url(ref.chat_id)
        await self.connector.update(url, ref.chat_id, ref.message_id, message(text), what="choice")




def _key(chat_id: str) -> str:
    """The store key of a conversation's service URL (a hash: Teams' conversation ids can be long)."""
    return _SERVICE_URL_KEY + hashlib.sha256(chat_id.encode()).hexdigest()[:32]
