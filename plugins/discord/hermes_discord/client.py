"""One bot's running Discord client: the gateway websocket in, REST calls out, built fresh per gateway.

The gateway builds a :class:`DiscordClient` from the parsed
:class:`~.settings.DiscordSettings` and a :class:`~hermes_gateway.PlatformContext`
(``hermes-gateway ask`` builds one too and never starts it), then:

* ``start()`` logs in (``GET /users/@me``, so a token Discord refuses stops
  start-up in one line), connects the gateway websocket and waits for READY;
* ``stop()`` closes the websocket: no more messages come in, while replies
  still being written keep their REST connection;
* ``close()`` closes discord.py's client and its HTTP session.

Sending and receiving go through discord.py (its REST client and its
gateway websocket). Two things are the plugin's own: discord.py is kept
from sleeping on 429s (:mod:`.ratelimit`), and every message goes out with
``allowed_mentions`` none, so nothing the model writes pings anyone.
discord.py is imported lazily (:mod:`.sdk`), so a gateway without it still
starts and says why Discord is off. Nothing here is shared between two
clients: each has its own discord.py client, URLs (:mod:`.endpoints`) and
429 windows. Files people attach reach the core as attachments
(:mod:`.inbound_files`), streamed from the CDN only when the core asks
(:mod:`.download`, with a session of its own).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from hermes_gateway import (DeliveryError, Media, MessageRef, Platform, PlatformClient, PlatformContext, StartError,
                            Stream)

from . import formatting
from . import media as attachments
from .catch_up import CatchUp
from .endpoints import point_at
from .errors import PermanentFailure, rate_limited, translate
from .ratelimit import RestWatch
from .download import Downloads
from .receiving import edit_to_incoming, target_channel, to_incoming
from .redaction import protect_token_parts, scrub
from .sdk import quiet_voice_warnings, sdk
from .settings import DiscordSettings

log = logging.getLogger(__name__)

#: Seconds one REST call may take before it counts as failed (it may still have landed).
CALL_TIMEOUT = 15.0
#: Default + message_content: what the bot needs to read what people write.
#: The stream a reaction's one call goes through (:meth:`DiscordClient.call` reads only its chat and thread).
REACTING = Platform(name="discord")
INTENTS_NOTE = "enable the Message Content intent in the developer portal"


@dataclass(frozen=True)
class Tuning:
    """Waits the plugin object hands every client it builds (not config keys: they tune, they do not configure).

    ``guild_ready_timeout`` is discord.py's wait for servers before READY
    counts; ``ready_timeout`` how long ``start()`` waits for READY before
    going on (still connecting); ``call_timeout`` bounds one REST call
    (aiohttp's own default is five minutes), ``upload_timeout`` one upload.
    """

    guild_ready_timeout: float = 2.0
    ready_timeout: float = 30.0
    call_timeout: float = CALL_TIMEOUT
    upload_timeout: float = attachments.UPLOAD_TIMEOUT


class DiscordClient(PlatformClient):
    """Sends, edits and receives Discord messages for one bot, in one gateway."""

    settings: DiscordSettings

    def __init__(self, settings: DiscordSettings, context: PlatformContext, *, tuning: Tuning = Tuning()) -> None:
        super().__init__(settings, context)
        protect_token_parts(settings.token)  # the whole token is masked by the core already
        self.guild_ready_timeout = tuning.guild_ready_timeout
        self.ready_timeout = tuning.ready_timeout
        self.call_timeout = tuning.call_timeout
        self.upload_timeout = tuning.upload_timeout
        #: The 429 windows and response counts of the current discord.py client (None before the first call).
        self.watch: RestWatch | None = None
        self._discord: Any = None          # the discord.Client, built on first use
        self._logged_in = False
        self._lock = asyncio.Lock()
        self._connection: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._receiving = False
        #: Files people sent, streamed from the CDN when the core asks (its own session, closed in close()).
        self.downloads = Downloads()
        #: Messages sent while the bot was away, read after each READY (:mod:`.catch_up`).
        self.catch_up = CatchUp(self)

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Log in (``GET /users/@me``), connect the gateway websocket, wait for READY.

        What stops start-up is one line naming the config file and key (``StartError``).
        """
        source = self.context.source
        try:
            import discord
        except ImportError:
            raise StartError(f"{source}: platforms.discord: discord needs discord.py: pip install hermes-discord") \
                from None
        self._ready.clear()
        await self.catch_up.load()
        try:
            client = await self.discord_client()
        except discord.LoginFailure:
            await self.close()
            raise StartError(f"{source}: platforms.discord.token: a token Discord accepts "
                             f"(GET /users/@me answered 401 Unauthorized)") from None
        except Exception as exc:
            await self.close()
            raise StartError(f"{source}: platforms.discord: Discord could not be reached "
                             f"({scrub(f'{type(exc).__name__}: {exc}')})") from None
        self._receiving = True
        self._connection = asyncio.get_running_loop().create_task(self._connect(client), name="discord-gateway")
        try:
            await asyncio.wait_for(self._ready.wait(), self.ready_timeout)
        except asyncio.TimeoutError:
            log.warning("discord: no READY from the gateway after %gs; still trying", self.ready_timeout)
        else:
            log.info("discord: receiving messages as %s", client.user)

    async def stop(self) -> None:
        """Close the gateway websocket: nothing more comes in. REST stays open for the replies still going out."""
        self._receiving = False
        await self.catch_up.stop()
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.cancel()
            await asyncio.gather(connection, return_exceptions=True)
        ws = getattr(self._discord, "ws", None)
        if ws is not None and ws.open:
            try:
                await ws.close(code=1000)
            except Exception as exc:
                log.warning("discord: closing the gateway connection failed: %s", scrub(str(exc)))

    async def close(self) -> None:
        """Close the gateway connection and the HTTP sessions; a later call would build a new discord.py client."""
        await self.stop()
        await self.downloads.close()
        client, self._discord, self._logged_in = self._discord, None, False
        if client is not None:
            try:
                await client.close()
            except Exception as exc:
                log.warning("discord: closing the connection failed: %s", scrub(str(exc)))

    async def discord_client(self) -> Any:
        """The logged-in ``discord.Client`` (``GET /users/@me``), built on first use."""
        async with self._lock:
            if self._discord is None:
                self._discord = self._build()
                self._logged_in = False
            if not self._logged_in:
                await self._discord.login(self.settings.token)
                self._logged_in = True
        return self._discord

    def _build(self) -> Any:
        discord = sdk()
        quiet_voice_warnings()
        self.watch = RestWatch()
        intents = discord.Intents.default()
        intents.message_content = True
        client = discord.Client(intents=intents, http_trace=self.watch.trace,
                                allowed_mentions=discord.AllowedMentions.none(),
                                guild_ready_timeout=self.guild_ready_timeout)
        point_at(client.http, self.settings.api_base_url, self.settings.gateway_url)
        client.event(self._make_on_message())
        client.event(self._make_on_raw_message_edit())
        client.event(self._make_on_ready())
        client.event(self._make_on_resumed())
        client.event(self._make_on_disconnect())
        client.event(self._make_on_interaction())
        return client

    async def _connect(self, client: Any) -> None:
        """discord.py's connection loop: heartbeats, reconnects and resumes are its own."""
        import discord

        try:
            await client.connect(reconnect=True)
        except asyncio.CancelledError:
            raise
        except discord.PrivilegedIntentsRequired:
            log.error("discord: stopped receiving messages: the gateway refused the intents (%s)", INTENTS_NOTE)
            self.context.report_disconnected(f"the gateway refused the intents ({INTENTS_NOTE}); stopped receiving")
        except discord.LoginFailure:
            log.error("discord: stopped receiving messages: the gateway rejected the token "
                      "(check platforms.discord.token)")
            self.context.report_disconnected("the gateway rejected the token (check platforms.discord.token); "
                                             "stopped receiving")
        except Exception as exc:
            log.error("discord: stopped receiving messages: %s", scrub(f"{type(exc).__name__}: {exc}"))
            self.context.report_disconnected(f"stopped receiving: {type(exc).__name__}: {exc}")

    # The gateway websocket's state, as discord.py's events tell it: READY and RESUMED mean connected; a
    # ``disconnect`` comes each time the socket closed or a connection attempt failed (discord.py then
    # resumes or retries with its backoff, and the next READY/RESUMED says it is back).

    def _make_on_ready(self) -> Callable[[], Awaitable[None]]:
        async def on_ready() -> None:  # each new session (a RESUME replays what it missed: on_resumed)
            self._ready.set()
            self.context.report_connected()
            if self._receiving:
                self.catch_up.start()
        return on_ready

    def _make_on_resumed(self) -> Callable[[], Awaitable[None]]:
        async def on_resumed() -> None:
            self.context.report_connected()
        return on_resumed

    def _make_on_disconnect(self) -> Callable[[], Awaitable[None]]:
        async def on_disconnect() -> None:
            if self._receiving:  # not the websocket our own stop() closes
                self.context.report_disconnected("the gateway websocket closed; discord.py is reconnecting")
        return on_disconnect

    def _make_on_message(self) -> Callable[[Any], Awaitable[None]]:
        async def on_message(message: Any) -> None:
            if not self._receiving or self._discord is None:
                return
            incoming = to_incoming(message, self._discord.user, self.downloads)
            if incoming is not None:
                self.catch_up.note(str(target_channel(incoming.chat_id, incoming.thread_id)), str(message.id),
                                   incoming.chat_kind or "guild")
                self.context.receive(incoming)
        return on_message

    def _make_on_raw_message_edit(self) -> Callable[[Any], Awaitable[None]]:
        async def on_raw_message_edit(payload: Any) -> None:
            """MESSAGE_UPDATE, cached or not: a person's edit goes to the core (which ignores unchanged text)."""
            if not self._receiving or self._discord is None:
                return
            incoming = edit_to_incoming(payload, self._discord.user, self.downloads)
            if incoming is not None:
                self.context.receive(incoming)
        return on_raw_message_edit

    # ---------------------------------------------------------------- status reactions (issue 24)

    async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
        """Add the bot's reaction ``emoji`` to a person's message (``PUT .../reactions/{emoji}/@me``).

        Discord keeps every reaction the bot adds (👀 stays beside 👍): one call per status, never two.
        """
        stream = Stream(platform=REACTING, chat_id=chat_id, thread_id=thread_id)
        await self.call(stream, "messages", "add reaction",
                        lambda channel: channel.get_partial_message(int(message_id)).add_reaction(emoji))

    def _make_on_interaction(self) -> Callable[[Any], Awaitable[None]]:
        async def on_interaction(interaction: Any) -> None:
            from .choices import on_interaction as take

            if self._receiving and self._discord is not None:
                await take(self.context, self._discord.http, interaction)
        return on_interaction

    # ---------------------------------------------------------------- approval buttons (issue 25)

    async def offer_choice(self, stream: Stream, choice: Any) -> MessageRef:
        """The question with an action row of buttons (:mod:`.choices`)."""
        from .choices import offer_choice

        return await offer_choice(self, stream, choice)

    async def close_choice(self, stream: Stream, message: MessageRef, text: str) -> None:
        """The question's message now reads ``text``, its buttons removed."""
        from .choices import close_choice

        await close_choice(self, stream, message, text)

    # ---------------------------------------------------------------- stream methods

    def supports_edit(self, stream: Stream) -> bool:
        return True

    async def on_stream_start(self, stream: Stream) -> None:
        await self.call(stream, "typing", "trigger typing", lambda channel: channel.typing())

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self._show(stream, message, text)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self._show(stream, message, text)

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """A tool's file as a message with the file attached, after the reply's text (:mod:`.media`)."""
        return await attachments.send(self, stream, media)

    async def _show(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        """Send ``text`` as a new message, or edit ``message`` to read ``text``; nobody is pinged."""
        text = formatting.render(text, stream.settings.cursor)  # tables laid out (the core measured this rendering)
        none = sdk().AllowedMentions.none()
        if message is None:
            reference = quote(stream)
            sent = await self.call(stream, "messages", "create message",
                                   lambda channel: channel.send(text, allowed_mentions=none, reference=reference))
            stream.state["quoted"] = True
            return MessageRef(stream.chat_id, str(sent.id), stream.thread_id)
        await self.call(stream, "messages", "edit message",
                        lambda channel: channel.get_partial_message(int(message.message_id))
                        .edit(content=text, allowed_mentions=none))
        return message

    async def call(self, stream: Stream, route: str, what: str, request: Callable[[Any], Awaitable[Any]], *,
                   timeout: float | None = None) -> Any:
        """One REST call into the stream's channel, refused up front while a 429's window lasts.

        ``timeout``: how long it may take (default ``call_timeout``; uploads take longer).
        """
        refused = stream.state.get("refused")
        if refused is not None:
            raise refused  # missing permissions: this reply stops; Discord is not asked again
        try:
            client = await self.discord_client()
        except DeliveryError:
            raise
        except Exception as exc:
            raise translate(exc, "log in") from None
        channel_id = target_channel(stream.chat_id, stream.thread_id)
        assert self.watch is not None
        wait, scope = self.watch.windows.wait_for(str(channel_id), route)
        if wait > 0:
            raise rate_limited(wait, f"discord {what}: channel {channel_id} limited for {wait:.3f}s more", scope)
        try:
            return await asyncio.wait_for(request(client.get_partial_messageable(channel_id)),
                                          self.call_timeout if timeout is None else timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error = translate(exc, what)
        if isinstance(error, PermanentFailure):
            log.warning("discord: this reply in channel %s stops: %s", channel_id, error)
            stream.state["refused"] = error
        raise error from None  # discord.py's own exception text could quote what we scrubbed


def quote(stream: Stream) -> Any:
    """In a server channel or thread, a reply's first message replies to the question."""
    if stream.chat_kind in (None, "dm", "private") or not stream.reply_to or stream.state.get("quoted"):
        return None
    try:
        message_id = int(stream.reply_to)
    except ValueError:
        return None
    return sdk().MessageReference(message_id=message_id, channel_id=target_channel(stream.chat_id, stream.thread_id),
                                  fail_if_not_exists=False)
