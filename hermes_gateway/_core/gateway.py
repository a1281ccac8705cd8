"""The gateway's lifecycle: one aiohttp app, every plugin's routes and hooks, every enabled platform.

``async with Gateway(config, plugins) as gateway:`` starts, in order: the
routes of every plugin (``register_routes``) on one
``aiohttp.web.Application``, the ``startup`` hooks, the HTTP listener on
``api_server.host:port`` (only when some plugin mounted routes; it always serves
``/metrics``, see :mod:`.metrics`), and every
platform enabled under ``platforms:``. Stopping runs in reverse: platforms
stop receiving first, then the ``shutdown`` hooks (the API server ends its
open streams properly there, while the listener is still up), then the
listener closes.

A handler marked with :func:`~.http.disconnect.cancel_on_disconnect` is
cancelled the moment its client disconnects: that is how an abandoned API
stream cancels its agent turn and upstream request at once. Every other
handler (a platform's webhook) runs to completion even if the sender hangs
up early, so an incoming message is never lost half-processed.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .config import Config
from .errors import ConfigError, StartError
from .http.body_deadline import webhook_body_deadline
from .platform_status import PlatformStatuses
from .http.disconnect import finish_unless_cancellable
from .plugins import Plugins, installed_plugins
from .feature_parts import FeatureParts, add_feature_hookspecs
from . import telemetry

if TYPE_CHECKING:  # the heavy parts are imported when first used, not when the CLI starts
    from .agent import AIAgent
    from .approvals.answers import Approvals
    from .conversation import TurnParts
    from .coordination import Coordination
    from .http.workers import WorkerSlot
    from .delivery import Delivery, DeliveryReport
    from .messages.incoming import Incoming
    from .inbound.runtime import InboundRuntime
    from .mcp.servers import McpServers
    from .metrics import GatewayMetrics
    from .operator.turns import ProfileAgents
    from .outbound.scheduler import Scheduler
    from .plugin_host import PluginHost
    from .console_sources import ConsoleSources
    from .store import ConversationStore
    from .toolbox import ToolBox

log = logging.getLogger(__name__)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Gateway:
    """Starts and stops everything the config enables, on the running event loop."""

    def __init__(self, config: Config, plugins: Plugins | None = None, *, shutdown_grace: float | None = None,
                 serve: bool = True, worker: WorkerSlot | None = None) -> None:
        """``serve=False`` runs only the startup/shutdown hooks: no listener, no platform receiving.

        That is what a one-turn command (``ask``) needs: plugins configured by
        their ``startup`` hook, nothing listening or polling. ``worker``: this
        process is one of ``api_server.workers`` (:mod:`.http.workers`): it
        serves the socket the parent bound, and only worker 0 (or every
        worker, as replicas, with ``coordination.url``) runs the platforms.
        """
        self.config = config
        self.serve = serve
        self.worker = worker
        # the platforms as the config makes them: an instance per account (accounts.py), rate_limits applied
        self.plugins = (plugins if plugins is not None else installed_plugins()).configured(config)
        add_feature_hookspecs(self.plugins.pm)  # the built-in features' private hooks (feature_parts.py)
        self._features: FeatureParts | None = None
        self.shutdown_grace = config.conversation.shutdown_grace if shutdown_grace is None else shutdown_grace
        self.app: web.Application | None = None
        self.runner: web.AppRunner | None = None
        self.site: web.TCPSite | None = None
        self.started_platforms: list[str] = []
        #: Platforms whose client mounted routes on the listener (webhooks), found when the clients are built.
        self.webhook_platforms: list[str] = []
        #: The running client of each enabled platform that declares one (``Platform.client``), fresh per start.
        self.clients: dict[str, Any] = {}
        #: each platform's state for an operator (running, receive mode, last error, 429s): the web dashboard's
        self.platform_status = PlatformStatuses()
        self._started = False
        self._startup_ran = False
        self._tools: ToolBox | None = None
        self._agent: AIAgent | None = None
        self._delivery: Delivery | None = None
        self._store: ConversationStore | None = None
        self._coordination: Coordination | None = None
        self._inbound: InboundRuntime | None = None
        self._recovery: Any = None  # crash recovery (hermes_gateway._core.recovery.Recovery), while started
        self._metrics: GatewayMetrics | None = None
        self._mcp: McpServers | None = None
        self._scheduler: Scheduler | None = None
        self._host: PluginHost | None = None
        self._approvals: Approvals | None = None
        self._profile_agents: ProfileAgents | None = None
        self._turn_parts: TurnParts | None = None

    # -- lifecycle -------------------------------------------------------------------------------------------

    async def __aenter__(self) -> "Gateway":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Mount routes, run startup hooks, listen, start platforms. On failure, undo what started."""
        if self._started:
            return
        self._started = True
        if self._inbound is not None and not self._inbound.accepting:
            self._inbound = None  # a restarted gateway receives afresh
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise

    async def _start(self) -> None:
        telemetry.start(self, self.config.telemetry)  # traces (telemetry.otlp_endpoint); before the routes' spans
        hook = self.plugins.pm.hook
        app = web.Application(client_max_size=self.config.api_server.max_body_bytes,
                              middlewares=[webhook_body_deadline, finish_unless_cancellable])
        self.app = app
        await self.coordination.start()  # an unreachable Redis stops start-up here, in one line
        await self.mcp.start()  # each server in its own task; one that fails is retried, never fatal
        hook.register_routes(app=app, host=self.host, gateway=self)  # third parties' (``gateway``: deprecated)
        self._features = self._feature_parts(app)
        hook.register_feature_routes(app=app, parts=self._features)  # the built-in features, built from parts
        self._startup_ran = True
        await self._run_startup_hooks()
        self._build_clients(app)
        if not self.serve:
            await self._warm_up_clients()
            return
        if self.worker is not None:
            from .http.workers import check_platforms, mark_responses

            check_platforms(self.worker, list(self.clients), self.webhook_platforms)
            mark_responses(app, self.worker)
        if self.runs_platforms:
            await self.inbound.restore()
        from . import agent  # noqa: F401  (the openai SDK: imported now, not in the first reply, where seconds of
        # import would hold the event loop while the chat's lease waits to be renewed)
        if len(app.router.resources()) > 0:
            _mount_metrics(app, self)  # a listener always serves /metrics (the API server's, or this one)
            from .http.listener import hardened_site, runner_options  # idle timeouts, a connection cap

            self.runner = web.AppRunner(app, handler_cancellation=True, access_log=None,
                                        shutdown_timeout=self.shutdown_grace, **runner_options())
            await self.runner.setup()
            self.site = hardened_site(self.runner, self.config.api_server.host, self.config.api_server.port,
                                      sock=None if self.worker is None else self.worker.sock)
            await self.site.start()
        for name in self.enabled_platforms():
            self.inbound.access(name)  # a bad allowed_chats/allowed_users/require_mention stops start-up here
            client = self.clients.get(name)
            if client is not None:
                registered = self.plugins.platform(name)
                self.platform_status.starting(name)
                try:
                    await _maybe_await(client.start())
                except StartError as exc:
                    self.platform_status.start_failed(name, str(exc))
                    raise
                except Exception as exc:
                    self.platform_status.start_failed(name, f"start failed: {type(exc).__name__}: {exc}")
                    raise StartError(f"platform {name} (plugin {registered.plugin_name}) failed to start: "
                                     f"{type(exc).__name__}: {exc}") from exc
            self.started_platforms.append(name)
            self.platform_status.started(name)
            log.info("platform %s started", name)
        if not self.runs_platforms:
            return  # an HTTP-only worker: schedules and crash recovery run in worker 0
        self.scheduler.check(self.started_platforms)  # a schedule into a platform that is not running: one line
        self.scheduler.start()  # schedules and reminders (issue 24): only once the platforms send

        # replies a crash left: queued in their chats now that the platforms can be called
        from .recovery import Recovery

        self._recovery = Recovery(self.config, lambda: self.store, lambda: self.coordination,
                                  lambda record, done: self.inbound.recover(record, done=done))
        await self._recovery.start()

    async def _warm_up_clients(self) -> None:
        """One-shot commands (``ask``, ``send``) never start a client; its optional ``warm_up()`` readies it instead.

        A client's first call otherwise pays for importing its SDK and opening its connection after the
        delivery core charged the chat's budget for it, so it lands late at the platform and the next call,
        charged on time, lands too soon after it (a 429 on a strict 1/s chat). A failure here is logged: the
        sends that follow report it properly.
        """
        for name, client in self.clients.items():
            warm_up = getattr(client, "warm_up", None)
            if not callable(warm_up):
                continue
            try:
                await _maybe_await(warm_up())
            except Exception as exc:
                log.warning("platform %s: warming up failed (%s: %s); sending anyway", name, type(exc).__name__,
                            exc)

    def enabled_platforms(self) -> list[str]:
        """The registered platforms the config enables, in registration order (none in an HTTP-only worker)."""
        if not self.runs_platforms:
            return []
        return [name for name in self.plugins.platforms() if self.config.platform_enabled(name)]

    @property
    def runs_platforms(self) -> bool:
        """Whether this process runs the platforms, schedules and recovery (all but HTTP-only workers)."""
        return self.worker is None or self.worker.runs_platforms

    def _build_clients(self, app: web.Application) -> None:
        """One fresh client per enabled platform that declares a factory: settings parsed, context handed over.

        Built before the listener starts, since that is the only moment a
        client may mount its webhook routes; ``ask`` builds them too (and
        never starts them), so a plugin is set up the same way everywhere.
        """
        from .platform_clients import ClientHost, build_client

        self.webhook_platforms = []
        host = ClientHost(receive=self.receive, accepting=lambda: self.accepting, store=lambda: self.store,
                          approvals=lambda: self.approvals, metrics=lambda: self.metrics,
                          platform_status=self.platform_status, delivery=lambda: self.delivery)
        for name in self.enabled_platforms():
            registered = self.plugins.platform(name)
            if registered.platform.client is None:
                continue
            routes = len(app.router.routes())
            self.clients[name] = build_client(registered, self.config, host=host, app=app)
            if len(app.router.routes()) > routes:
                self.webhook_platforms.append(name)  # it receives on this listener (api_server.workers cares)

    async def _run_startup_hooks(self) -> None:
        """Each plugin's ``startup``, skipping plugins whose every platform is disabled.

        A plugin that raises is named in one line; the gateway refuses to
        start, since what failed is something the config turned on.
        """
        for impl in reversed(self.plugins.pm.hook.feature_startup.get_hookimpls()):  # the built-in features first
            try:
                await _maybe_await(impl.function(parts=self._features))
            except (StartError, ConfigError):
                raise
            except Exception as exc:
                raise StartError(f"plugin {impl.plugin_name} failed to start: {type(exc).__name__}: {exc}") from exc
        wanted = self._plugins_in_use()
        for impl in reversed(self.plugins.pm.hook.startup.get_hookimpls()):  # pluggy's own call order
            if impl.plugin_name not in wanted:
                continue
            try:
                await _maybe_await(impl.function(**self._feature_hook_args(impl.argnames)))
            except (StartError, ConfigError):
                raise  # already one line naming what is wrong
            except Exception as exc:
                raise StartError(f"plugin {impl.plugin_name} failed to start: {type(exc).__name__}: {exc}") from exc

    def _feature_hook_args(self, argnames: tuple[str, ...]) -> dict[str, Any]:
        """What a ``startup``/``shutdown`` implementation asks for: ``host``, or (deprecated) ``gateway``."""
        offered: dict[str, Any] = {"host": self.host, "gateway": self}
        return {name: offered[name] for name in argnames if name in offered}

    def _feature_parts(self, app: web.Application) -> FeatureParts:
        """What the built-in features (API server, web console, hooks from outside) are built from."""
        return FeatureParts(config=self.config, app=app, serve=self.serve, worker=self.worker,
                            shutdown_grace=self.shutdown_grace, accepting=lambda: self.accepting,
                            turn_parts=lambda: self.turn_parts, agent=lambda: self.agent, store=lambda: self.store,
                            metrics=lambda: self.metrics, console_sources=lambda: self.console_sources,
                            spawn=lambda *job: self.scheduler.spawn(*job), enabled_platforms=self.enabled_platforms)

    @property
    def host(self) -> "PluginHost":
        """The narrow, typed view of this gateway that feature plugins get (:mod:`.plugin_host`)."""
        if self._host is None:
            from .plugin_host import PluginHost

            self._host = PluginHost(config=self.config, receive=self.receive, accepting=lambda: self.accepting,
                                    url=lambda: self.url, shutdown_grace=self.shutdown_grace)
        return self._host

    def _plugins_in_use(self) -> set[str]:
        """Plugins that serve no platform (tools, the API server), plus those with an enabled platform."""
        serving: dict[str, bool] = {}
        for name, registered in self.plugins.platforms().items():
            enabled = self.config.platform_enabled(name) and self.runs_platforms
            serving[registered.plugin_name] = serving.get(registered.plugin_name, False) or enabled
        names = {impl.plugin_name for impl in self.plugins.pm.hook.startup.get_hookimpls()}
        names |= {impl.plugin_name for impl in self.plugins.pm.hook.shutdown.get_hookimpls()}
        return {name for name in names if serving.get(name, True)}

    async def stop(self) -> None:
        """Stop receiving, let replies finish (``shutdown_grace``), run shutdown hooks, close. Safe to call twice."""
        if not self._started:
            return
        self._started = False
        if self._scheduler is not None:  # no new occurrences; those being sent get the shutdown grace
            await self._scheduler.stop(self.shutdown_grace)
            self._scheduler = None
        recovery, self._recovery = self._recovery, None
        if recovery is not None:
            await recovery.stop()
        for name in reversed(self.started_platforms):  # first no new messages ...
            self.platform_status.stopped(name)
            client = self.clients.get(name)
            if client is None:
                continue
            try:
                await _maybe_await(client.stop())
            except Exception:
                log.exception("platform %s failed to stop cleanly", name)
        self.started_platforms.clear()
        if self._inbound is not None:  # kept, refusing messages, until the gateway starts again
            await self._inbound.stop(self.shutdown_grace)
        # the replies done, no tool call needs a server: they stop (bounded) while the rest closes
        mcp_stopping = asyncio.ensure_future(self._mcp.stop()) if self._mcp is not None else None
        if self._startup_ran:
            self._startup_ran = False
            for impl in reversed(self.plugins.pm.hook.feature_shutdown.get_hookimpls()):
                try:
                    await _maybe_await(impl.function(parts=self._features))
                except Exception:
                    log.exception("the shutdown hook of plugin %s failed", impl.plugin_name)
            wanted = self._plugins_in_use()
            for impl in reversed(self.plugins.pm.hook.shutdown.get_hookimpls()):
                if impl.plugin_name not in wanted:
                    continue
                try:
                    await _maybe_await(impl.function(**self._feature_hook_args(impl.argnames)))
                except Exception:
                    log.exception("the shutdown hook of plugin %s failed", impl.plugin_name)
        clients, self.clients = self.clients, {}
        for name, client in reversed(list(clients.items())):  # ... then, replies done, connections closed
            close = getattr(client, "close", None)
            if close is None:
                continue
            try:
                await _maybe_await(close())
            except Exception:
                log.exception("platform %s failed to close cleanly", name)
        if self.runner is not None:
            await self.runner.cleanup()
        self.runner = self.site = None
        if self._coordination is not None:  # kept (the delivery core holds it); connected again at start
            try:
                await self._coordination.close()
            except Exception:
                log.exception("closing the coordination failed")
        store, self._store = self._store, None
        if store is not None:
            try:
                await store.close()
            except Exception:
                log.exception("closing the conversation store failed")
        if mcp_stopping is not None:
            try:
                await mcp_stopping
            except Exception:
                log.exception("stopping the MCP servers failed")
        agent, self._agent = self._agent, None
        if agent is not None:
            try:
                await agent.aclose()  # the pooled upstream connections
            except Exception:
                log.exception("closing the agent's upstream connections failed")
        profile_agents, self._profile_agents = self._profile_agents, None
        if profile_agents is not None:
            await profile_agents.aclose()  # the agents of chats on another model or persona (issue 23)
        await telemetry.stop(self)  # the last spans sent, bounded (telemetry.STOP_BOUND)

    # -- what plugins and commands use ------------------------------------------------------------------------

    @property
    def url(self) -> str | None:
        """``http://host:port`` actually bound (the real port when the config says 0), or None."""
        if self.runner is None:
            return None
        for address in self.runner.addresses:
            host, port = address[0], address[1]
            host = f"[{host}]" if ":" in host else host
            return f"http://{host}:{port}"
        return None

    @property
    def tools(self) -> "ToolBox":
        """The tools plugins registered (collected once) and those of the MCP servers that are up now: a live list."""
        if self._tools is None:
            from .toolbox import ToolBox
            from .tools import collect_tools

            self._tools = ToolBox(collect_tools(self.plugins, self.config), [self.mcp])
        return self._tools

    @property
    def mcp(self) -> "McpServers":
        """The servers of ``mcp_servers`` (started with the gateway), a tool source of :attr:`tools`."""
        if self._mcp is None:
            from .mcp.servers import McpServers

            self._mcp = McpServers(self.config.mcp_servers)
        return self._mcp

    @property
    def agent(self) -> "AIAgent":
        """The gateway's shared ``AIAgent``.

        One agent serves every concurrent turn (each ``astream`` call is its
        own turn), so the upstream HTTP connections are pooled and reused
        instead of a new client and TCP connection per request.
        """
        if self._agent is None:
            from .agent import AIAgent

            self._agent = AIAgent.from_config(self.config, tools=self.tools)
        return self._agent

    @property
    def delivery(self) -> "Delivery":
        """The delivery core of this gateway: one rate budget per chat, shared by every reply."""
        if self._delivery is None:
            from .delivery import Delivery

            self._delivery = Delivery(self.plugins, self.config, coordination=self.coordination,
                                      observer=self.metrics, clients=self.clients_view)
        return self._delivery

    @delivery.setter
    def delivery(self, value: "Delivery") -> None:
        self._delivery = value

    @property
    def metrics(self) -> "GatewayMetrics":
        """This gateway's Prometheus registry and metric families (``/metrics``), one per gateway.

        A coordination backend counts a lease it takes over with ``gateway.metrics.lease_takeovers.inc()``.
        """
        if self._metrics is None:
            from .metrics import GatewayMetrics

            self._metrics = GatewayMetrics(dedupe_hits=self._dedupe_hits, lease_takeovers=self._lease_takeovers,
                                           status=self.platform_status)
        return self._metrics

    def _dedupe_hits(self) -> int:
        """Redeliveries caught here, plus those the shared dedupe caught (with ``coordination.url``)."""
        local = getattr(getattr(self._inbound, "seen", None), "hits", 0)
        return local + getattr(getattr(self, "_coordination", None), "dedupe_hits", 0)

    def _lease_takeovers(self) -> int:
        """Chat leases the coordination backend took over from a replica that died (0 alone)."""
        return getattr(getattr(self, "_coordination", None), "lease_takeovers", 0)

    @property
    def store(self) -> "ConversationStore":
        """Where every conversation lives (``store:`` in the config; SQLite by default), opened on first use."""
        if self._store is None:
            from .store import open_store

            self._store = open_store(self.config)
        return self._store

    @store.setter
    def store(self, value: "ConversationStore") -> None:
        self._store = value

    @property
    def coordination(self) -> "Coordination":
        """What this replica shares with the others (``coordination:``; alone by default), built on first use."""
        if self._coordination is None:
            from .coordination import open_coordination

            self._coordination = open_coordination(self.config)
        return self._coordination

    @coordination.setter
    def coordination(self, value: "Coordination") -> None:
        self._coordination = value

    @property
    def scheduler(self) -> "Scheduler":
        """Schedules and reminders (:mod:`.outbound.scheduler`); built on first use, fresh after a stop."""
        if self._scheduler is None:
            from .outbound.scheduler import Scheduler

            self._scheduler = Scheduler(self.turn_parts, lambda: self.inbound)
        return self._scheduler

    @scheduler.setter
    def scheduler(self, value: "Scheduler") -> None:
        self._scheduler = value

    @property
    def turn_parts(self) -> "TurnParts":
        """What a chat turn uses, each part typed (:class:`~.conversation.TurnParts`): handed to the inbound
        runtime, schedules and reminders, and hooks from outside, instead of this gateway."""
        if self._turn_parts is None:
            from .conversation import TurnParts

            self._turn_parts = TurnParts(
                config=self.config, store=lambda: self.store, delivery=lambda: self.delivery,
                coordination=lambda: self.coordination, agents=lambda: self.profile_agents,
                approvals=lambda: self.approvals, client=self.clients_view,
                wake_scheduler=lambda: self.scheduler.wake(), retries=lambda: self.inbound.retries)
        return self._turn_parts

    @property
    def console_sources(self) -> "ConsoleSources":
        """What the web console reads and acts on (:class:`~.web.sources.ConsoleSources`), instead of this gateway."""
        from .console_sources import ConsoleSources

        return ConsoleSources(config=self.config, plugins=self.plugins, platform_status=self.platform_status,
                              store=lambda: self.store, delivery=lambda: self.delivery,
                              coordination=lambda: self.coordination, inbound=lambda: self.inbound,
                              scheduler=lambda: self.scheduler, client=self.clients_view)

    @property
    def profile_agents(self) -> "ProfileAgents":
        """The agents of chats on another model or persona (issue 23), kept for this run."""
        if self._profile_agents is None:
            from .operator.turns import ProfileAgents

            self._profile_agents = ProfileAgents(self.config, lambda: self.agent, lambda: self.tools)
        return self._profile_agents

    @property
    def approvals(self) -> "Approvals":
        """Open approval questions and the answers to them, shared with the replicas (:mod:`.approvals`)."""
        if self._approvals is None:
            from .approvals.answers import Approvals

            self._approvals = Approvals(self.coordination, self.config.operator.access)
        return self._approvals

    @property
    def inbound(self) -> "InboundRuntime":
        """The inbound runtime: dedupe, access, commands, one reply at a time per chat, shutdown."""
        if self._inbound is None:
            from .inbound.runtime import InboundRuntime, collect_commands
            commands = collect_commands(self.plugins, self.config)
            self._inbound = InboundRuntime(self.turn_parts, self.plugins, commands, metrics=lambda: self.metrics,
                                           legacy_gateway=self)
        return self._inbound

    def clients_view(self, platform: str) -> Any:
        """The running client of ``platform`` (None before start, after stop, or for a hook-only platform)."""
        return self.clients.get(platform)

    @property
    def accepting(self) -> bool:
        """Whether messages are still taken. Once the gateway stops they are not: a webhook then answers
        503, so the platform delivers the message again (to another replica, or after the restart) instead
        of it being acknowledged and dropped."""
        return self._inbound is None or self._inbound.accepting

    def receive(self, incoming: "Incoming") -> "asyncio.Future[DeliveryReport | None]":
        """A platform received a message: take it and return at once (answer a webhook now).

        Returns a future of the reply's ``DeliveryReport`` (None when the
        message gets no reply of its own); nobody has to await it.
        """
        return self.inbound.receive(incoming)

    async def handle_incoming(self, platform: str, chat_id: str, text: str, **kw: Any) -> "DeliveryReport | None":
        """``receive`` and wait for the reply: for tests and simple pollers."""
        from .messages.incoming import Incoming

        fields: dict[str, Any] = {k: (str(v) if v is not None and k != "mentioned" else v) for k, v in kw.items()
                  if k in Incoming.__dataclass_fields__}
        if "reply_to" in kw and "message_id" not in fields and kw["reply_to"] is not None:
            fields["message_id"] = str(kw["reply_to"])
        if fields.get("chat_kind") is None:
            fields.pop("chat_kind", None)
        return await self.receive(Incoming(platform, str(chat_id), text, **fields))


def _mount_metrics(app: web.Application, gateway: Gateway) -> None:
    """Add ``GET /metrics`` unless a plugin (the API server) already serves it."""
    for resource in app.router.resources():
        if resource.canonical == "/metrics":
            return
    from .metrics import metrics_route

    app.router.add_get("/metrics", metrics_route(gateway.config.api_server, lambda: gateway.metrics))

