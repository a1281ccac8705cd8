"""The Discord platform plugin: limits, stream hooks, and the inbound side.

:class:`DiscordPlugin` is an ordinary hermes-gateway plugin object. The
entry point registers one instance configured from ``platforms.discord``
at gateway start-up; tests build their own with a token and the URLs of
:class:`~hermes_discord.emulator.DiscordEmulator`.

Sending and receiving go through discord.py (its REST client and its
gateway websocket). Two things are the plugin's own: discord.py is kept
from sleeping on 429s (:mod:`.ratelimit`), and every message goes out with
``allowed_mentions`` none, so nothing the model writes pings anyone.
discord.py is imported lazily, so a gateway without it still starts (and
says why Discord is off).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any, Awaitable, Callable, Mapping

import hermes_gateway
from hermes_gateway import ConfigError, DeliveryError, Media, MessageRef, Platform, RateBudget, Stream

from . import media as attachments
from .errors import PermanentFailure, rate_limited, translate
from .ratelimit import RestWatch
from .receiving import ATTACHMENTS_ONLY_REPLY, NAME, target_channel, to_incoming
from .redaction import protect, scrub
from .settings import DiscordSettings, parse_settings

log = logging.getLogger(__name__)

#: Discord's content limit. Declared in UTF-16 units: never more than 2000 characters however
#: Discord counts them, at the cost of a little room in emoji-heavy text.
MAX_MESSAGE_UNITS = 2000
EDIT_INTERVAL = 1.25
#: Peers observe about 5 message calls per 5 s per channel. 1 + 0.75 x 5 < 5: at most 4 calls in any
#: 5 s, so a channel's bucket never empties (discord.py would then wait for its reset inside the call).
CHANNEL_BUDGET = RateBudget(rate=0.75, burst=1)
BUDGETS: Mapping[str, RateBudget] = {"default": CHANNEL_BUDGET}
#: Discord's global limit is 50 requests per second per bot: 10 + 40 x 1 = 50 in any second, at most.
BOT_BUDGET = RateBudget(rate=40.0, burst=10)
#: Seconds one REST call may take before it counts as failed (it may still have landed).
CALL_TIMEOUT = 15.0
#: Default + message_content: what the bot needs to read what people write.
INTENTS_NOTE = "enable the Message Content intent in the developer portal"


class DiscordPlugin:
    """Sends, edits and receives Discord messages for one bot."""

    def __init__(self, token: str | None = None, *, api_base_url: str | None = None, gateway_url: str | None = None,
                 budgets: Mapping[str, RateBudget] | None = None, bot_budget: RateBudget | None = BOT_BUDGET,
                 edit_interval: float = EDIT_INTERVAL, guild_ready_timeout: float = 2.0,
                 ready_timeout: float = 30.0, call_timeout: float = CALL_TIMEOUT,
                 upload_timeout: float = attachments.UPLOAD_TIMEOUT,
                 upload_limit: int = attachments.UPLOAD_LIMIT) -> None:
        """``token`` and the URLs as in config.yaml; ``budgets``/``edit_interval`` override Discord's
        limits (fast tests); ``guild_ready_timeout`` is discord.py's wait for servers before on_ready;
        ``call_timeout`` bounds one REST call (aiohttp's own default is five minutes), ``upload_timeout``
        one file upload; ``upload_limit`` is the largest file sent (10 MiB: servers without boosts)."""
        self.settings: DiscordSettings | None = None
        if token is not None:
            section: dict[str, Any] = {"token": token}
            if api_base_url is not None:
                section["api_base_url"] = api_base_url
            if gateway_url is not None:
                section["gateway_url"] = gateway_url
            self.configure(parse_settings(section, source="DiscordPlugin()"))
        self.platform = Platform(
            name=NAME, max_message_length=MAX_MESSAGE_UNITS, length_unit="utf16", edit_interval=edit_interval,
            budgets=dict(budgets or BUDGETS), bot_budget=bot_budget,
            description="Discord (discord.py)", start=self.start_receiving, stop=self.stop_receiving,
            media=attachments.limits(upload_limit),
        )
        self.guild_ready_timeout = guild_ready_timeout
        self.call_timeout = call_timeout
        self.upload_timeout = upload_timeout
        self.ready_timeout = ready_timeout
        self.watch: RestWatch | None = None
        self._client: Any = None
        self._logged_in = False
        self._lock: asyncio.Lock | None = None
        self._connection: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._gateway: Any = None          # the gateway messages are handed to, once receiving
        self.__name__ = "hermes_discord"

    def configure(self, settings: DiscordSettings) -> None:
        protect(settings.token)
        self.settings = settings

    # ---------------------------------------------------------------- the client

    def _build(self) -> Any:
        if self.settings is None:
            raise DeliveryError("discord is not configured: set platforms.discord.token and enabled: true",
                                retryable=False)
        discord = _sdk()
        import yarl
        from discord.gateway import DiscordWebSocket
        from discord.http import Route

        # discord.py's only knobs for where Discord is: class attributes, read when a request or a
        # connection is made (one Discord per process).
        Route.BASE = self.settings.api_base_url
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.settings.gateway_url)
        _quiet_voice_warnings()
        self.watch = RestWatch()
        intents = discord.Intents.default()
        intents.message_content = True
        client = discord.Client(intents=intents, http_trace=self.watch.trace,
                                allowed_mentions=discord.AllowedMentions.none(),
                                guild_ready_timeout=self.guild_ready_timeout)
        client.event(self._make_on_message())
        client.event(self._make_on_ready())
        return client

    async def client(self) -> Any:
        """The logged-in ``discord.Client`` (``GET /users/@me``), built on first use."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is None:
                self._client = self._build()
                self._logged_in = False
            if not self._logged_in:
                assert self.settings is not None
                await self._client.login(self.settings.token)
                self._logged_in = True
        return self._client

    async def close(self) -> None:
        """Close the gateway connection and the HTTP session; the next use builds a new client."""
        client, self._client, self._logged_in = self._client, None, False
        connection, self._connection = self._connection, None
        if client is not None:
            try:
                await client.close()
            except Exception as exc:
                log.warning("discord: closing the connection failed: %s", scrub(str(exc)))
        if connection is not None:
            connection.cancel()
            await asyncio.gather(connection, return_exceptions=True)

    # ---------------------------------------------------------------- lifecycle hooks

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Any) -> None:
        register(self.platform)

    @hermes_gateway.hookimpl
    async def startup(self, gateway: Any) -> None:
        """Read ``platforms.discord`` when it is enabled; a bad section stops start-up with one line."""
        section = gateway.config.platforms.get(NAME)
        if section is None or not gateway.config.platform_enabled(NAME):
            return
        settings = parse_settings(section, source=gateway.config.source)
        if settings != self.settings:
            await self.close()  # a client built for other settings must not be reused
        self.configure(settings)

    @hermes_gateway.hookimpl
    async def shutdown(self, gateway: Any) -> None:
        await self.close()

    async def start_receiving(self, gateway: Any) -> None:
        """Log in (``GET /users/@me``), connect the gateway websocket, wait for READY."""
        source = getattr(getattr(gateway, "config", None), "source", "(config)")
        if self.settings is None:
            raise ConfigError(source, "platforms.discord.token", "a bot token (the platform is enabled without one)")
        try:
            import discord
        except ImportError:
            raise ConfigError(source, "platforms.discord", "discord needs discord.py: pip install hermes-discord") \
                from None
        self._gateway = gateway
        self._ready = asyncio.Event()
        try:
            client = await self.client()
        except discord.LoginFailure:
            await self.close()
            raise ConfigError(source, "platforms.discord.token",
                              "a token Discord accepts (GET /users/@me answered 401 Unauthorized)") from None
        except Exception as exc:
            await self.close()
            raise ConfigError(source, "platforms.discord",
                              f"Discord could not be reached ({scrub(f'{type(exc).__name__}: {exc}')})") from None
        self._connection = asyncio.get_running_loop().create_task(self._connect(client), name="discord-gateway")
        try:
            await asyncio.wait_for(self._ready.wait(), self.ready_timeout)
        except asyncio.TimeoutError:
            log.warning("discord: no READY from the gateway after %gs; still trying", self.ready_timeout)
        else:
            log.info("discord: receiving messages as %s", client.user)

    async def _connect(self, client: Any) -> None:
        """discord.py's connection loop: heartbeats, reconnects and resumes are its own."""
        import discord

        try:
            await client.connect(reconnect=True)
        except asyncio.CancelledError:
            raise
        except discord.PrivilegedIntentsRequired:
            log.error("discord: stopped receiving messages: the gateway refused the intents (%s)", INTENTS_NOTE)
        except discord.LoginFailure:
            log.error("discord: stopped receiving messages: the gateway rejected the token "
                      "(check platforms.discord.token)")
        except Exception as exc:
            log.error("discord: stopped receiving messages: %s", scrub(f"{type(exc).__name__}: {exc}"))

    async def stop_receiving(self) -> None:
        await self.close()

    def _make_on_ready(self) -> Callable[[], Awaitable[None]]:
        async def on_ready() -> None:
            if self._ready is not None:
                self._ready.set()
        return on_ready

    def _make_on_message(self) -> Callable[[Any], Awaitable[None]]:
        async def on_message(message: Any) -> None:
            gateway = self._gateway
            if gateway is None or self._client is None:
                return
            incoming = to_incoming(message, self._client.user)
            if incoming is None:
                return
            if incoming.text:
                gateway.receive(incoming)
            elif message.attachments:  # files and no words: the core answers with the notice, like any message
                gateway.receive(replace(incoming, notice=ATTACHMENTS_ONLY_REPLY))
        return on_message

    # ---------------------------------------------------------------- stream hooks

    @hermes_gateway.hookimpl
    def supports_edit(self, stream: Stream) -> bool:
        return True

    @hermes_gateway.hookimpl
    async def on_stream_start(self, stream: Stream) -> None:
        await self._call(stream, "typing", "trigger typing", lambda channel: channel.typing())

    @hermes_gateway.hookimpl
    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self._show(stream, message, text)

    @hermes_gateway.hookimpl
    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self._show(stream, message, text)

    @hermes_gateway.hookimpl
    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """A tool's file as a message with the file attached, after the reply's text (:mod:`.media`)."""
        return await attachments.send(self, stream, media)

    async def _show(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        """Send ``text`` as a new message, or edit ``message`` to read ``text``; nobody is pinged."""
        none = _sdk().AllowedMentions.none()
        if message is None:
            reference = _quote(stream)
            sent = await self._call(stream, "messages", "create message",
                                    lambda channel: channel.send(text, allowed_mentions=none, reference=reference))
            stream.state["quoted"] = True
            return MessageRef(stream.chat_id, str(sent.id), stream.thread_id)
        await self._call(stream, "messages", "edit message",
                         lambda channel: channel.get_partial_message(int(message.message_id))
                         .edit(content=text, allowed_mentions=none))
        return message

    async def _call(self, stream: Stream, route: str, what: str, request: Callable[[Any], Awaitable[Any]], *,
                    timeout: float | None = None) -> Any:
        """One REST call into the stream's channel, refused up front while a 429's window lasts.

        ``timeout``: how long it may take (default ``call_timeout``; uploads take longer).
        """
        refused = stream.state.get("refused")
        if refused is not None:
            raise refused  # missing permissions: this reply stops; Discord is not asked again
        try:
            client = await self.client()
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


class _NoVoiceWarnings(logging.Filter):
    """Drops discord.py's "PyNaCl/davey is not installed, voice will NOT be supported": a text bot
    never joins a voice channel, and a warning at every start would only worry whoever reads the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "voice will NOT be supported" not in str(record.msg)


_VOICE_FILTER = _NoVoiceWarnings()


def _quiet_voice_warnings() -> None:
    logger = logging.getLogger("discord.client")
    if _VOICE_FILTER not in logger.filters:
        logger.addFilter(_VOICE_FILTER)


def _sdk() -> Any:
    """discord.py, or a DeliveryError that says how to install it."""
    try:
        import discord
    except ImportError:
        raise DeliveryError("discord needs discord.py: pip install hermes-discord", retryable=False) from None
    return discord


def _quote(stream: Stream) -> Any:
    """In a server channel or thread, a reply's first message replies to the question."""
    if stream.chat_kind in (None, "dm", "private") or not stream.reply_to or stream.state.get("quoted"):
        return None
    try:
        message_id = int(stream.reply_to)
    except ValueError:
        return None
    return _sdk().MessageReference(message_id=message_id, channel_id=target_channel(stream.chat_id, stream.thread_id),
                                    fail_if_not_exists=False)
