"""One running Matrix account per gateway: the homeserver connection, the sync loop, and the stream methods.

The core builds it as ``MatrixClient(settings, context)``; building does no
I/O. ``start()`` logs in (the access token is checked with ``whoami``; a
password logs in as ``device_id``) and starts the sync loop
(:mod:`.receiving`); ``stop()`` ends the loop while replies still being
written go out; ``close()`` closes the HTTP session. ``hermes-gateway ask``
builds it without starting it: the first call logs in.

Sending: a reply's first text is a new ``m.room.message``; its previews
and its final text are ``m.replace`` edits of that event (:mod:`.formatting`
builds the content, ``m.new_content`` included). An edit to the text the
message already shows is not sent. Every failure is translated by
:mod:`.errors`; nothing here sleeps or retries.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any

from hermes_gateway import (ChoiceAnswer, ConfigError, DeliveryError, Media, MessageRef, PlatformClient,
                            PlatformContext, Stream)

from . import formatting
from . import media as files
from .choices import Questions
from .errors import translate
from .inbound import EventReader, Reaction
from .receiving import Receiver
from .settings import MatrixSettings

log = logging.getLogger(__name__)

#: Events of the bot remembered (a reply to one is a mention; an identical edit is skipped).
REMEMBERED = 2048
#: Milliseconds a typing indicator lasts unless renewed (the core renews it well within).
TYPING_MS = 30_000


class MatrixClient(PlatformClient):
    """Sends into and receives from one Matrix account, for one gateway."""

    settings: MatrixSettings

    def __init__(self, settings: MatrixSettings, context: PlatformContext) -> None:
        super().__init__(settings, context)
        self._api: Any = None
        self._login_lock: asyncio.Lock | None = None
        #: What each of the bot's messages shows now (event id → text), oldest forgotten first.
        self._shown: collections.OrderedDict[str, str] = collections.OrderedDict()
        self.questions = Questions()
        self.reader = EventReader(context.platform, settings.user_id, is_direct=self._is_direct,
                                  sent_by_bot=lambda event_id: event_id in self._shown,
                                  attachment=files.attachment_maker(lambda: self._api, settings.homeserver))
        self.receiver = Receiver(context, lambda: self._api, self.reader, sync_timeout=settings.sync_timeout,
                                 timeline_limit=settings.timeline_limit, on_reaction=self._reaction)
        self._tasks: set[asyncio.Task[Any]] = set()

    # ---------------------------------------------------------------- connection

    async def api(self) -> Any:
        """The logged-in ``mautrix`` ClientAPI (logged in on first use)."""
        if self._api is not None and self._api.api.token:
            return self._api
        if self._login_lock is None:
            self._login_lock = asyncio.Lock()
        async with self._login_lock:
            if self._api is None:
                import aiohttp
                from mautrix.client import ClientAPI
                from mautrix.types import DeviceID, UserID

                from .api import GatewayHTTPAPI

                http = GatewayHTTPAPI(self.settings.homeserver, self.settings.access_token or "",
                                      client_session=aiohttp.ClientSession(),
                                      request_timeout=self.settings.request_timeout,
                                      sync_timeout=self.settings.sync_timeout, log=logging.getLogger("mau.http"))
                self._api = ClientAPI(UserID(self.settings.user_id), DeviceID(self.settings.device_id), api=http)
            if not self._api.api.token:
                await self._login()
        return self._api

    async def _login(self) -> None:
        from mautrix.types import LoginType, MatrixUserIdentifier

        try:
            answer = await self._api.login(identifier=MatrixUserIdentifier(user=self.settings.user_id),
                                           login_type=LoginType.PASSWORD, password=self.settings.password,
                                           device_id=self.settings.device_id,
                                           device_name="hermes-gateway", store_access_token=True)
        except Exception as exc:
            raise translate(exc, "login") from None
        log.info("matrix: logged in as %s (device %s)", answer.user_id, answer.device_id)

    async def warm_up(self) -> None:
        await self.api()

    async def start(self) -> None:
        """Log in and check who the token belongs to, then start syncing."""
        try:
            api = await self.api()
            whoami = await api.whoami()
        except DeliveryError as exc:
            raise self._refused(exc) from None
        except Exception as exc:
            raise self._refused(translate(exc, "whoami")) from None
        if whoami.user_id != self.settings.user_id:
            raise ConfigError(self.context.source, f"platforms.{self.context.platform}.user_id",
                              f"the token belongs to {whoami.user_id}, not {self.settings.user_id}")
        try:
            direct = await api.get_account_data("m.direct")
        except Exception:
            direct = {}
        self.receiver.read_account_data({"events": [{"type": "m.direct", "content": direct}]})
        self.context.report_connected()
        self.receiver.start()

    def _refused(self, exc: DeliveryError) -> Exception:
        """A login the homeserver refused for good is one config line; the rest stays a delivery error."""
        if exc.retryable:
            return exc
        key = "access_token" if self.settings.access_token else "password"
        return ConfigError(self.context.source, f"platforms.{self.context.platform}.{key}",
                           f"the homeserver refused it ({exc}); not shown: it is a secret")

    async def stop(self) -> None:
        await self.receiver.stop()

    async def close(self) -> None:
        await self.receiver.stop()
        for task in list(self._tasks):
            task.cancel()
        api, self._api = self._api, None
        if api is not None and not api.api.session.closed:
            await api.api.session.close()

    def _is_direct(self, room: str) -> bool:
        return room in self.receiver.direct_rooms

    # ---------------------------------------------------------------- sending

    async def _send(self, room: str, content: dict[str, Any], what: str, event_type: str = "m.room.message") -> str:
        api = await self.api()
        try:
            return str(await api.send_message_event(room, event_type, content))
        except Exception as exc:
            raise translate(exc, what) from None

    def _remember(self, event_id: str, text: str) -> None:
        self._shown[event_id] = text
        self._shown.move_to_end(event_id)
        while len(self._shown) > REMEMBERED:
            self._shown.popitem(last=False)

    async def _show(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        if message is None:
            extra = None
            if stream.reply_to and stream.chat_kind not in ("private", None):
                extra = {"m.relates_to": {"m.in_reply_to": {"event_id": stream.reply_to}}}
            event_id = await self._send(stream.chat_id, formatting.message_content(text, extra=extra), "send")
            self._remember(event_id, text)
            return MessageRef(stream.chat_id, event_id, stream.thread_id)
        if self._shown.get(message.message_id) == text:
            return message  # "not modified": the message shows this already
        await self._send(stream.chat_id, formatting.message_content(text, edit_of=message.message_id), "edit")
        self._remember(message.message_id, text)
        return message

    def supports_edit(self, stream: Stream) -> bool:
        return True

    async def on_stream_start(self, stream: Stream) -> None:
        """The typing indicator (``/typing``, 30 s unless renewed; not counted by Synapse's ``rc_message``)."""
        api = await self.api()
        try:
            await api.set_typing(stream.chat_id, timeout=TYPING_MS)
        except Exception as exc:
            raise translate(exc, "typing") from None
        stream.state["typing"] = True

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self._show(stream, message, text)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        ref = await self._show(stream, message, text)
        if stream.state.pop("typing", False):
            self._spawn(self._stop_typing(stream.chat_id))
        return ref

    async def _stop_typing(self, room: str) -> None:
        """Take the indicator away at once (else it shows for up to 30 s after the reply); best effort."""
        api = self._api  # never a new connection for this: after close() there is none
        if api is None:
            return
        try:
            await api.set_typing(room, timeout=0)
        except Exception:
            pass

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """Upload (once per reply, kept in ``stream.state``), then one event pointing at the ``mxc://`` URI."""
        api = await self.api()
        key = f"mxc:{media.path or media.filename}:{media.size}"
        mxc = stream.state.get(key)
        if mxc is None:
            try:
                mxc = await api.upload_media(media.read(), mime_type=media.mime or "application/octet-stream",
                                             filename=media.filename)
            except Exception as exc:
                raise translate(exc, "upload") from None
            stream.state[key] = mxc
        event_id = await self._send(stream.chat_id, files.file_content(media, str(mxc)), "send a file")
        return MessageRef(stream.chat_id, event_id, stream.thread_id)

    # ---------------------------------------------------------------- reactions (issue 24)

    async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
        """An ``m.annotation`` on the person's message; the same one twice is not an error."""
        content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": message_id, "key": emoji}}
        try:
            await self._send(chat_id, content, "react", event_type="m.reaction")
        except DeliveryError as exc:
            if "M_DUPLICATE_ANNOTATION" not in str(exc):
                raise

    # ---------------------------------------------------------------- approvals as reactions (issue 25)

    async def offer_choice(self, stream: Stream, choice: Any) -> MessageRef:
        """The question, then one reaction per option under it (:mod:`.choices`); after a 429 it goes on."""
        offer = self.questions.offer(stream.chat_id, choice)
        if offer.event_id is None:
            event_id = await self._send(stream.chat_id, formatting.message_content(choice.prompt), "choice")
            self._remember(event_id, choice.prompt)
            self.questions.shown(offer, event_id)
        assert offer.event_id is not None
        for emoji in offer.options:
            if emoji not in offer.seeded:
                await self.react(stream.chat_id, offer.event_id, emoji)
                offer.seeded.append(emoji)
        return MessageRef(stream.chat_id, offer.event_id, stream.thread_id)

    async def close_choice(self, stream: Stream, message: MessageRef, text: str) -> None:
        """The question now reads ``text``; a reaction on it no longer answers anything."""
        self.questions.close(message.message_id)
        await self._show(stream, message, text)

    def _reaction(self, reaction: Reaction) -> None:
        payload = self.questions.press(reaction.target, reaction.key)
        if payload is None:
            return
        answer = ChoiceAnswer.from_payload(self.context.platform, reaction.room, reaction.sender, payload)
        if answer is not None:
            self._spawn(self.context.choose(answer))

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
