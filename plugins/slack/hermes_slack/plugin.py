"""The Slack platform plugin: limits, stream hooks, and receiving events through slack-bolt.

:class:`SlackPlugin` is an ordinary hermes-gateway plugin object. The entry
point registers one instance configured from ``platforms.slack`` at
start-up; tests build their own and point it at
:class:`~hermes_slack.emulator.SlackEmulator` through ``api_base_url``.

Receiving: one bolt ``AsyncApp`` with one listener for every event (so
every event, the bot's own echoes included, is acknowledged), either over
Socket Mode (``AsyncSocketModeHandler``, the default: no public URL) or on
``POST /webhooks/slack/events`` of the gateway's HTTP listener (``mode:
http``), where the signature is checked before anything is parsed. bolt
acknowledges before the listener runs; the listener only hands the core an
``Incoming`` (:mod:`.inbound`), and the core answers it.

Sending: :mod:`.outbound` (native streaming or post + update); a tool's
files: :mod:`.files` (``files_upload_v2`` into the thread). slack-bolt and
slack_sdk are imported lazily, so a gateway without them still starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from typing import Any, Mapping

import hermes_gateway
from hermes_gateway import ConfigError, DeliveryError, Incoming, Media, MessageRef, Platform, RateBudget, Stream

from . import files
from .errors import translate
from .inbound import EventReader
from .outbound import Outbound
from .redaction import protect, scrub
from .settings import SlackSettings, parse_settings
from .starts import START_STREAMS_PER_MINUTE, StartWindow

log = logging.getLogger(__name__)

NAME = "slack"
#: ``chat.update`` refuses more, and it is the repair path of an expired native stream: one limit for both.
MAX_MESSAGE_CHARS = 4000
EDIT_INTERVAL = 1.0
EVENTS_PATH = "/webhooks/slack/events"
#: About one message a second in a channel.
BUDGETS: Mapping[str, RateBudget] = {"default": RateBudget(rate=1.0, burst=1)}
#: ``chat.update`` is ~50/min per workspace, every channel together (Tier 3), so that is the bot's budget.
#: chat.startStream (~20/min per workspace) is kept within its limit by the plugin (.starts): a reply
#: that would be one start too many uses chat.postMessage + chat.update instead.
BOT_BUDGET = RateBudget(rate=50 / 60, burst=5)


class SlackPlugin:
    """Sends into and receives from one Slack app (one workspace)."""

    def __init__(self, bot_token: str | None = None, *, app_token: str | None = None,
                 signing_secret: str | None = None, mode: str = "socket", native_streaming: str = "auto",
                 api_base_url: str | None = None, budgets: Mapping[str, RateBudget] | None = None,
                 bot_budget: RateBudget | None = BOT_BUDGET, edit_interval: float = EDIT_INTERVAL,
                 start_streams_per_minute: int = START_STREAMS_PER_MINUTE, timeout: float | None = None) -> None:
        """Arguments as in config.yaml; ``budgets``/``bot_budget``/``edit_interval``/``start_streams_per_minute``
        override Slack's limits (fast tests and benchmarks against the emulator); ``timeout``: seconds one
        Web API call may take (default: aiohttp's five minutes, which a large upload may need)."""
        self.settings: SlackSettings | None = None
        self.timeout = timeout
        if bot_token is not None:
            section: dict[str, Any] = {"bot_token": bot_token, "mode": mode, "native_streaming": native_streaming}
            for key, value in (("app_token", app_token), ("signing_secret", signing_secret),
                               ("api_base_url", api_base_url)):
                if value is not None:
                    section[key] = value
            self.configure(parse_settings(section, source="SlackPlugin()"))
        self.platform = Platform(
            name=NAME, max_message_length=MAX_MESSAGE_CHARS, length_unit="chars", edit_interval=edit_interval,
            budgets=dict(budgets or BUDGETS), bot_budget=bot_budget,
            description="Slack (slack-bolt, Socket Mode or Events API; native AI streaming in threads)",
            start=self.start_receiving, stop=self.stop_receiving, append_only=True, media=files.LIMITS,
        )
        self.events = EventReader(NAME)
        self.outbound = Outbound(lambda: self.client, native=self._native_allowed,
                                 recipient=self.events.recipient, joined=self.events.joined,
                                 starts=StartWindow(start_streams_per_minute))
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._bolt: Any = None
        self._socket: Any = None
        self._connecting: asyncio.Task[Any] | None = None
        self._gateway: Any = None
        self.__name__ = "hermes_slack"

    def configure(self, settings: SlackSettings) -> None:
        protect(*settings.secrets)
        self.settings = settings

    def _native_allowed(self) -> bool:
        return self.settings is not None and self.settings.native_streaming == "auto"

    # ---------------------------------------------------------------- the Web API client

    @property
    def client(self) -> Any:
        """The ``AsyncWebClient`` (bot token, ``api_base_url``), built on first use in this event loop.

        It keeps one aiohttp session, so calls reuse their connection: without
        one, slack_sdk opens a new connection (and TLS handshake) for every
        call, which Slack's final edit of a reply would wait for.
        """
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is not loop:
            self._client = None  # built in an event loop that is gone: its session went with it
        if self._client is None:
            if self.settings is None:
                raise DeliveryError("slack is not configured: set platforms.slack.bot_token and enabled: true",
                                    retryable=False)
            try:
                web_client = files.web_client_class()   # slack_sdk's AsyncWebClient, noting upload steps
            except ImportError:
                raise DeliveryError("slack needs slack_sdk and slack-bolt: pip install hermes-slack",
                                    retryable=False) from None
            import aiohttp

            timeout = {"timeout": aiohttp.ClientTimeout(total=self.timeout)} if self.timeout else {}
            self._client = web_client(token=self.settings.bot_token, base_url=self.settings.api_base_url,
                                      session=aiohttp.ClientSession(**timeout),
                                      logger=logging.getLogger("slack_sdk.web.async_base_client"))
            self._client_loop = loop
        return self._client

    async def close(self) -> None:
        """Stop receiving and close the Web API connections."""
        await self.stop_receiving()
        client, self._client = self._client, None
        session = getattr(client, "session", None)
        if session is not None and not session.closed and self._client_loop is asyncio.get_running_loop():
            await session.close()

    # ---------------------------------------------------------------- lifecycle hooks

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Any) -> None:
        register(self.platform)

    @hermes_gateway.hookimpl
    def register_routes(self, app: Any) -> None:
        """``POST /webhooks/slack/events``, only when the config enables Slack in http mode."""
        from hermes_gateway._core.gateway import GATEWAY_KEY

        gateway = app.get(GATEWAY_KEY)
        if gateway is None or not gateway.config.platform_enabled(NAME):
            return
        section = gateway.config.platforms.get(NAME) or {}
        if not isinstance(section, Mapping) or section.get("mode") != "http":
            return
        from .webhook import EventsEndpoint

        app.router.add_post(EVENTS_PATH, EventsEndpoint(self).handle)

    @hermes_gateway.hookimpl
    async def startup(self, gateway: Any) -> None:
        """Read ``platforms.slack`` when it is enabled; a bad section stops start-up with one line."""
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
        """Check the bot token (``auth.test``), then connect Socket Mode or wait for HTTP events."""
        source = getattr(getattr(gateway, "config", None), "source", "(config)")
        if self.settings is None:
            raise ConfigError(source, "platforms.slack.bot_token", "a bot token (the platform is enabled without one)")
        try:
            client = self.client
        except DeliveryError as exc:
            raise ConfigError(source, "platforms.slack", str(exc)) from None
        await self._identify(client, source)
        self._gateway = gateway
        self._bolt = self._build_app()
        if self.settings.mode == "socket":
            await self._connect_socket(client, source)
        else:
            log.info("slack: receiving events at %s as <@%s>", EVENTS_PATH, self.events.bot_user_id)

    async def _connect_socket(self, client: Any, source: str) -> None:
        """Open Socket Mode. The app token is checked by one ``apps.connections.open`` whose URL the
        client then uses: slack_sdk itself would retry a rejected token forever."""
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
        from slack_sdk.errors import SlackApiError

        assert self.settings is not None
        url: str | None = None
        try:
            url = (await client.apps_connections_open(app_token=self.settings.app_token))["url"]
        except SlackApiError as exc:
            code = exc.response.get("error")
            if code in ("invalid_auth", "not_authed", "token_revoked", "not_allowed_token_type", "missing_scope"):
                raise ConfigError(source, "platforms.slack.app_token",
                                  "an app-level token (xapp-…, scope connections:write) that Slack accepts "
                                  f"(apps.connections.open answered {code})") from None
            log.warning("slack: apps.connections.open failed (%s); Socket Mode keeps trying", scrub(str(code)))
        except Exception as exc:  # the network may come back: the client keeps trying
            log.warning("slack: apps.connections.open failed (%s); Socket Mode keeps trying",
                        scrub(f"{type(exc).__name__}: {exc}"))
        handler = AsyncSocketModeHandler(self._bolt, self.settings.app_token, web_client=client)
        self._socket = handler
        if url is None:
            self._connecting = asyncio.get_running_loop().create_task(handler.connect_async(), name="slack-socket")
            return
        handler.client.wss_uri = url
        await handler.connect_async()
        log.info("slack: receiving events over Socket Mode as <@%s>", self.events.bot_user_id)

    async def _identify(self, client: Any, source: str) -> None:
        from slack_sdk.errors import SlackApiError

        try:
            me = await client.auth_test()
        except SlackApiError as exc:
            code = exc.response.get("error")
            if code in ("invalid_auth", "not_authed", "token_revoked", "account_inactive"):
                raise ConfigError(source, "platforms.slack.bot_token",
                                  f"a bot token Slack accepts (auth.test answered {code})") from None
            log.warning("slack: auth.test failed (%s); carrying on", scrub(str(code)))
            return
        except Exception as exc:
            log.warning("slack: auth.test failed (%s); carrying on", scrub(f"{type(exc).__name__}: {exc}"))
            return
        self.events.bot_user_id = me.get("user_id")
        self.events.bot_id = me.get("bot_id")
        self.events.team_id = me.get("team_id")

    def _build_app(self) -> Any:
        """The bolt app: one listener for every event type, so every event is acknowledged."""
        from slack_bolt.async_app import AsyncApp

        assert self.settings is not None
        _quiet_bolt_about_the_env_token()
        app = AsyncApp(client=self.client, signing_secret=self.settings.signing_secret or "",
                       request_verification_enabled=self.settings.mode == "http",
                       process_before_response=False, logger=logging.getLogger("slack_bolt.AsyncApp"))

        @app.event(re.compile(".*"))
        async def every_event(body: dict[str, Any]) -> None:
            await self.hand_over(body)

        return app

    async def hand_over(self, body: Mapping[str, Any]) -> None:
        """Give the core the message in ``body``, if it is one for the bot; it answers in its own time.

        A follow-up in a thread this process has not seen the bot reply in
        asks the conversation store first (once per thread): the bot may have
        replied there before a restart, and then the thread needs no mention.
        """
        incoming = self.events.to_incoming(body)
        gateway = self._gateway
        if incoming is None or gateway is None:
            return
        if self.events.to_look_up(incoming) and await self._replied_before(gateway, incoming):
            incoming = dataclasses.replace(incoming, mentioned=True)
        gateway.receive(incoming)

    async def _replied_before(self, gateway: Any, incoming: Incoming) -> bool:
        """Whether the store holds a conversation of this thread (the bot answered in it, in any run)."""
        from hermes_gateway._core.store import ConversationKey

        assert incoming.thread_id is not None
        try:
            found = await gateway.store.has_conversation(ConversationKey(NAME, incoming.chat_id, incoming.thread_id))
        except Exception as exc:  # not remembered: the store is asked again at the next message
            log.warning("slack: could not ask the conversation store about thread %s in %s (%s); "
                        "a message there needs a mention", incoming.thread_id, incoming.chat_id,
                        scrub(f"{type(exc).__name__}: {exc}"))
            return False
        self.events.looked_up(incoming.chat_id, incoming.thread_id, found)
        return bool(found)

    @property
    def bolt(self) -> Any:
        """The running bolt app (None when not receiving)."""
        return self._bolt

    async def stop_receiving(self) -> None:
        handler, self._socket = self._socket, None
        connecting, self._connecting = self._connecting, None
        if connecting is not None and not connecting.done():
            connecting.cancel()
            await asyncio.gather(connecting, return_exceptions=True)
        if handler is not None:
            try:
                await handler.close_async()
            except Exception as exc:
                log.warning("slack: closing Socket Mode failed: %s", scrub(f"{type(exc).__name__}: {exc}"))
        self._bolt = None
        self._gateway = None

    # ---------------------------------------------------------------- stream hooks

    @hermes_gateway.hookimpl
    def supports_edit(self, stream: Stream) -> bool:
        return True

    @hermes_gateway.hookimpl
    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        try:
            return await self.outbound.preview(stream, message, text)
        except DeliveryError:
            raise
        except Exception as exc:
            raise translate(exc, "preview") from None

    @hermes_gateway.hookimpl
    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        try:
            return await self.outbound.final(stream, message, text)
        except DeliveryError:
            raise
        except Exception as exc:
            raise translate(exc, "final") from None

    @hermes_gateway.hookimpl
    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """A tool's file, shared into the reply's thread with its caption as the comment (:mod:`.files`)."""
        ref = await files.upload(self.client, stream, media)
        self.events.joined(stream.chat_id, stream.thread_id)
        return ref


class _EnvTokenNotice(logging.Filter):
    """bolt reads ``SLACK_BOT_TOKEN`` from the environment on its own and, since the plugin hands it a
    client built from ``platforms.slack.bot_token``, warns that the token "will be unused" at every
    start. The config usually takes the token from that very variable: the warning says nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("As you gave `client` as well, `token` will be unused")


def _quiet_bolt_about_the_env_token() -> None:
    logger = logging.getLogger("slack_bolt.AsyncApp")
    if not any(isinstance(f, _EnvTokenNotice) for f in logger.filters):
        logger.addFilter(_EnvTokenNotice())
