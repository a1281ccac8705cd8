"""Receiving events for one Slack client: who the bot is, the bolt app, and Socket Mode.

One bolt ``AsyncApp`` with one listener for every event (so every event,
the bot's own echoes included, is acknowledged), reached either over Socket
Mode (``AsyncSocketModeHandler``, the default: no public URL) or through
``POST /webhooks/slack/events`` on the gateway's listener (``mode: http``,
:mod:`.webhook`). bolt acknowledges before the listener runs; the listener
only hands the core an ``Incoming`` (:mod:`.inbound`), and the core answers
it in its own time. slack-bolt and slack_sdk are imported here lazily, so a
gateway without them still starts when Slack is disabled.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from typing import Any, Callable, Mapping

from hermes_gateway import ConfigError, Incoming, PlatformContext

from .authorization import BotAuthorization
from .catch_up import CatchUp
from .connection import SocketWatch
from .inbound import EventReader
from .inbound_files import needs_lookup
from .redaction import scrub
from .settings import SlackSettings

log = logging.getLogger(__name__)

EVENTS_PATH = "/webhooks/slack/events"
#: What Slack answers when a token is not (or no longer) good: start-up stops, naming the key.
BOT_TOKEN_REFUSED = ("invalid_auth", "not_authed", "token_revoked", "account_inactive")
APP_TOKEN_REFUSED = ("invalid_auth", "not_authed", "token_revoked", "not_allowed_token_type", "missing_scope")


class Receiver:
    """Events in, ``Incoming`` out, for one client; started by the client's ``start()``, stopped by its ``stop()``."""

    def __init__(self, settings: SlackSettings, context: PlatformContext, events: EventReader,
                 web: Callable[[], Any]) -> None:
        """``web()`` is the client's ``AsyncWebClient`` (built on first use)."""
        self.settings = settings
        self.context = context
        self.events = events
        self._web = web
        self._bolt: Any = None
        self._socket: Any = None
        self._connecting: asyncio.Task[Any] | None = None
        self._watch: SocketWatch | None = None
        #: bolt's ``authorize``: the start-up's ``auth.test`` answer for every event (:mod:`.authorization`).
        self.authorization = BotAuthorization(web, self._learn_who_we_are)
        #: Messages sent while the bot was away, read at start and after a reconnect (:mod:`.catch_up`).
        self.catch_up = CatchUp(context, web, lambda body: self.hand_over(body, fetched=True))

    @property
    def bolt(self) -> Any:
        """The running bolt app (None when not receiving)."""
        return self._bolt

    async def start(self) -> None:
        """Check the bot token (``auth.test``), then connect Socket Mode or wait for HTTP events."""
        web = self._web()
        await self._identify(web)
        await self.catch_up.load()
        self._bolt = self._build_app(web)
        if self.settings.mode == "socket":
            await self._connect_socket(web)
        else:
            self.catch_up.start()  # Slack's own retries end ~5 minutes after a message: older ones are fetched
            log.info("slack: receiving events at %s as <@%s>", EVENTS_PATH, self.events.bot_user_id)
            if self.events.bot_user_id is not None:
                self.context.report_connected()  # auth.test answered: Slack knows the bot; events come by HTTP

    async def stop(self) -> None:
        """Close Socket Mode; events that still arrive are not handed on."""
        handler, self._socket = self._socket, None
        connecting, self._connecting = self._connecting, None
        watch, self._watch = self._watch, None
        self._bolt = None
        await self.catch_up.stop()
        if watch is not None:
            await watch.stop()
        if connecting is not None and not connecting.done():
            connecting.cancel()
            await asyncio.gather(connecting, return_exceptions=True)
        if handler is not None:
            try:
                await handler.close_async()
            except Exception as exc:
                log.warning("slack: closing Socket Mode failed: %s", scrub(f"{type(exc).__name__}: {exc}"))

    # ---------------------------------------------------------------- start-up

    async def _identify(self, web: Any) -> None:
        from slack_sdk.errors import SlackApiError

        try:
            me = await web.auth_test()
        except SlackApiError as exc:
            code = exc.response.get("error")
            if code in BOT_TOKEN_REFUSED:
                raise ConfigError(self.context.source, "platforms.slack.bot_token",
                                  f"a bot token Slack accepts (auth.test answered {code})") from None
            log.warning("slack: auth.test failed (%s); carrying on", scrub(str(code)))
            self.context.report_disconnected(f"auth.test failed: {code}")
            return
        except Exception as exc:
            log.warning("slack: auth.test failed (%s); carrying on", scrub(f"{type(exc).__name__}: {exc}"))
            self.context.report_disconnected(f"auth.test failed: {type(exc).__name__}: {exc}")
            return
        self.authorization.know(me)
        self._learn_who_we_are(me)

    def _learn_who_we_are(self, me: Any) -> None:
        """``auth.test`` answered: the bot's own ids (its own posts are not for it, a mention names it)."""
        self.events.bot_user_id = me.get("user_id")
        self.events.bot_id = me.get("bot_id")
        self.events.team_id = me.get("team_id")

    async def _connect_socket(self, web: Any) -> None:
        """Open Socket Mode. The app token is checked by one ``apps.connections.open`` whose URL the
        client then uses: slack_sdk itself would retry a rejected token forever."""
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
        from slack_sdk.errors import SlackApiError

        url: str | None = None
        problem = ""
        try:
            url = (await web.apps_connections_open(app_token=self.settings.app_token))["url"]
        except SlackApiError as exc:
            code = exc.response.get("error")
            if code in APP_TOKEN_REFUSED:
                raise ConfigError(self.context.source, "platforms.slack.app_token",
                                  "an app-level token (xapp-…, scope connections:write) that Slack accepts "
                                  f"(apps.connections.open answered {code})") from None
            log.warning("slack: apps.connections.open failed (%s); Socket Mode keeps trying", scrub(str(code)))
            problem = str(code)
        except Exception as exc:  # the network may come back: the client keeps trying
            log.warning("slack: apps.connections.open failed (%s); Socket Mode keeps trying",
                        scrub(f"{type(exc).__name__}: {exc}"))
            problem = f"{type(exc).__name__}: {exc}"
        handler = AsyncSocketModeHandler(self._bolt, self.settings.app_token, web_client=web)
        self._socket = handler
        if url is None:
            self.context.report_disconnected(f"apps.connections.open failed ({problem}); Socket Mode keeps trying")
            self._connecting = asyncio.get_running_loop().create_task(handler.connect_async(), name="slack-socket")
            self._watch_socket(handler, up=False)
            return
        handler.client.wss_uri = url
        await handler.connect_async()
        log.info("slack: receiving events over Socket Mode as <@%s>", self.events.bot_user_id)
        self.context.report_connected()
        self.catch_up.start()
        self._watch_socket(handler, up=True)

    def _watch_socket(self, handler: Any, *, up: bool) -> None:
        """Report each drop and return of the Socket Mode connection from now on (:mod:`.connection`)."""
        self._watch = SocketWatch(handler.client, self.context, up=up, on_back=self.catch_up.start)
        self._watch.start()

    def _build_app(self, web: Any) -> Any:
        """The bolt app: one listener for every event type, so every event is acknowledged."""
        from slack_bolt.async_app import AsyncApp

        _quiet_bolt_about_the_env_token()
        app = AsyncApp(client=web, authorize=self.authorization.for_bolt(),
                       signing_secret=self.settings.signing_secret or "",
                       request_verification_enabled=self.settings.mode == "http",
                       process_before_response=False, logger=logging.getLogger("slack_bolt.AsyncApp"))

        @app.event(re.compile(".*"))
        async def every_event(body: dict[str, Any]) -> None:
            await self.hand_over(body)

        from .choices import register as register_buttons

        register_buttons(app, self.context, self._web)  # approval buttons (issue 25)
        return app

    # ---------------------------------------------------------------- events

    async def hand_over(self, body: Mapping[str, Any], *, fetched: bool = False) -> None:
        """Give the core the message in ``body``, if it is one for the bot; it answers in its own time.

        A follow-up in a thread this process has not seen the bot reply in
        asks the core first (once per thread) whether it keeps a
        conversation there: the bot may have replied before a restart, and
        then the thread needs no mention. ``fetched``: read from history by the catch-up, not an event.
        """
        if self._bolt is None:
            return
        if self.settings.mode == "http" and not fetched:
            self.context.report_connected()  # a signed event came in: Slack reaches the gateway
        incoming = self.events.to_incoming(await self._with_file_details(body))
        if incoming is None or self._bolt is None:
            return
        self.catch_up.note(body.get("event"))
        if self.events.to_look_up(incoming) and await self._replied_before(incoming):
            incoming = dataclasses.replace(incoming, mentioned=True)
        self.context.receive(incoming)

    async def _with_file_details(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """``body`` with each held-back Slack Connect file (``file_access: check_file_info``) replaced by
        what ``files.info`` says of it: its name, type, size and URL (metadata only; nothing is downloaded).
        A file ``files.info`` will not describe stays held back, and is left out of the attachments."""
        event = body.get("event") or {}
        files = event.get("files") if isinstance(event, Mapping) else None
        if not isinstance(files, list) or not any(isinstance(f, Mapping) and needs_lookup(f) for f in files):
            return body
        detailed = []
        for file in files:
            if isinstance(file, Mapping) and needs_lookup(file):
                try:
                    file = (await self._web().files_info(file=file["id"]))["file"]
                except Exception as exc:
                    log.warning("slack: files.info for a shared file failed (%s); it is left out",
                                scrub(f"{type(exc).__name__}: {exc}"))
            detailed.append(file)
        return {**body, "event": {**event, "files": detailed}}

    async def _replied_before(self, incoming: Incoming) -> bool:
        """Whether the core keeps a conversation of this thread (the bot answered in it, in any run)."""
        assert incoming.thread_id is not None
        try:
            found = await self.context.has_conversation(incoming.chat_id, incoming.thread_id)
        except Exception as exc:  # not remembered: asked again at the next message
            log.warning("slack: could not ask the conversation store about thread %s in %s (%s); "
                        "a message there needs a mention", incoming.thread_id, incoming.chat_id,
                        scrub(f"{type(exc).__name__}: {exc}"))
            return False
        self.events.looked_up(incoming.chat_id, incoming.thread_id, found)
        return bool(found)


class _EnvTokenNotice(logging.Filter):
    """bolt reads ``SLACK_BOT_TOKEN`` from the environment on its own and, since the plugin hands it a
    client built from ``platforms.slack.bot_token`` and an ``authorize`` of its own (:mod:`.authorization`),
    warns at every start that the token "will be unused" or "ignored". The config usually takes the token
    from that very variable, and the client uses it: the warnings say nothing."""

    NOTICES = ("As you gave `client` as well, `token` will be unused",
               "As `installation_store` or `authorize` has been used, `token`")

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.NOTICES)


def _quiet_bolt_about_the_env_token() -> None:
    logger = logging.getLogger("slack_bolt.AsyncApp")
    if not any(isinstance(f, _EnvTokenNotice) for f in logger.filters):
        logger.addFilter(_EnvTokenNotice())
