"""Run a platform plugin in a test exactly as the gateway runs it: :class:`PlatformRunner` and :class:`TestGateway`.

:class:`PlatformRunner` builds one platform's client the way the gateway
does — its ``platforms.<name>`` section parsed into the plugin's settings
type, a :class:`~hermes_gateway.PlatformContext`, the factory called —
without a model or a store: what the client receives is collected in
``runner.received``, its webhook routes are served on 127.0.0.1 (port 0),
and ``runner.delivery()`` streams replies through the real delivery core
into it. :class:`TestGateway` runs the whole gateway from a config mapping
(the demo model or any ``model:``, an in-memory store, port 0) with the
plugins you hand it and no others.

``limits`` replaces fields of the plugin's ``Platform`` for the test
(``{"budgets": {"default": RateBudget(200, 20)}, "edit_interval": 0}``):
the platform's wire behaviour, without pacing worth waiting for.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, Mapping

from aiohttp import web

from .._core.config import Config, parse_config
from .._core.delivery import Delivery
from .._core.gateway import Gateway
from .._core.hookspecs import hookimpl
from .._core.messages.incoming import Incoming
from .._core.platform import Platform
from .._core.platform_clients import make_client, settings_for
from .._core.platform_context import PlatformContext
from .._core.plugins import Plugins, RegisteredPlatform, implemented_hooks, make_plugins
from .local import serve_locally


def with_limits(plugin: Any, limits: Mapping[str, Any] | None) -> Any:
    """``plugin`` as a plugin whose platforms have ``limits`` replaced (the client and other hooks unchanged).

    A plugin that registers no platform is returned as it is.
    """
    if not limits or not callable(getattr(plugin, "register_platforms", None)):
        return plugin
    return _Limited(plugin, dict(limits))


class _Limited:
    """Registers the wrapped plugin's platforms with some fields replaced; carries every other hook over."""

    def __init__(self, plugin: Any, limits: dict[str, Any]) -> None:
        self._plugin = plugin
        self._limits = limits
        self.__name__ = getattr(plugin, "__name__", None) or type(plugin).__name__
        for name in implemented_hooks(plugin):  # pluggy finds hooks by attribute: copy them onto this object
            if name != "register_platforms":
                setattr(self, name, getattr(plugin, name))

    @hookimpl
    def register_platforms(self, register: Any) -> None:
        self._plugin.register_platforms(lambda p: register(dataclasses.replace(p, **self._limits)))


def plugins_for(*plugins: Any) -> Plugins:
    """A plugin manager with exactly these plugins (no built-ins, no installed entry points); problems raise."""
    loaded = make_plugins(builtins=(), load_entry_points=False, extra=plugins)
    if loaded.problems:
        raise AssertionError(f"the plugin does not load: {loaded.problems[0]}")
    return loaded


class PlatformRunner:
    """One platform's client, built from ``settings`` as the gateway builds it; ``async with`` starts and stops it.

    ``settings``: the ``platforms.<name>`` section as a mapping (what
    config.yaml would hold). ``start=False`` builds the client without
    starting it (no polling, no socket), as ``hermes-gateway ask`` does.
    ``received`` lists each :class:`~hermes_gateway.Incoming` the client
    handed to the core; ``accepting`` is what the client is told.
    """

    def __init__(self, plugin: Any, settings: Mapping[str, Any] | None = None, *, platform: str | None = None,
                 limits: Mapping[str, Any] | None = None, start: bool = True,
                 streaming_transport: str | None = None, conversations: set[tuple[str, str | None]] | None = None,
                 source: str = "(test)") -> None:
        self.plugins = plugins_for(with_limits(plugin, limits))
        names = list(self.plugins.platforms())
        self.name = platform or names[0]
        self.registered: RegisteredPlatform = self.plugins.platform(self.name)
        self.section = dict(settings or {})
        self.start_receiving = start
        self.streaming_transport = streaming_transport
        self.source = source
        #: ``(chat_id, thread_id)`` pairs :meth:`PlatformContext.has_conversation` answers True for.
        self.conversations = conversations if conversations is not None else set()
        self.received: list[Incoming] = []
        #: The button presses the client handed to ``context.choose`` (``ChoiceAnswer``), in order.
        self.choices: list[Any] = []
        self.accepting = True
        self.client: Any = None
        self.context: PlatformContext | None = None
        self.url: str | None = None  # where the client's routes are served, when it mounted any
        self._app = web.Application()
        self._server: Any = None
        self._started = False

    @property
    def platform(self) -> Platform:
        return self.registered.platform

    @property
    def started(self) -> bool:
        """Whether the client was started (``start=True``) and not yet stopped."""
        return self._started

    def build(self) -> Any:
        """Parse the settings and call the factory (routes mounted now); returns the client."""
        settings = settings_for(self.platform, self.section, source=self.source)
        self.context = PlatformContext(
            self.name, source=self.source, receive=self._receive, accepting=lambda: self.accepting,
            add_route=lambda method, path, handler: self._app.router.add_route(method, path, handler),
            has_conversation=self._has_conversation, streaming_transport=self.streaming_transport,
            choose=self._choose)
        self.client = make_client(self.registered, settings, self.context) if self.platform.client else None
        return self.client

    async def __aenter__(self) -> "PlatformRunner":
        self.build()
        if len(self._app.router.resources()) > 0:
            self._server = await serve_locally(self._app)
            host, port = self._server.addresses[0][:2]
            self.url = f"http://{host}:{port}"
        if self.start_receiving and self.client is not None:
            await self.client.start()
            self._started = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        client, self.client = self.client, None
        try:
            if client is not None and self._started:
                self._started = False
                await client.stop()
            if client is not None and callable(getattr(client, "close", None)):
                await client.close()
        finally:
            if self._server is not None:
                await self._server.cleanup()
                self._server = None

    def delivery(self, config: Config | Mapping[str, Any] | None = None) -> Delivery:
        """The real delivery core, sending through this client (one per call: fresh budgets).

        ``config``: what the core reads (``media``, ``streaming`` ...), as a config.yaml mapping.
        """
        if config is None:
            config = Config()
        elif not isinstance(config, Config):
            config = parse_config(dict(config), source="(test config)", env={})
        return Delivery(self.plugins, config, clients=lambda name: self.client if name == self.name else None)

    def _receive(self, incoming: Incoming) -> "asyncio.Future[Any]":
        self.received.append(incoming)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.set_result(None)
        return future

    async def _has_conversation(self, chat_id: str, thread_id: str | None) -> bool:
        return (str(chat_id), thread_id) in self.conversations

    async def _choose(self, answer: Any) -> str | None:
        self.choices.append(answer)
        return None


class TestGateway:
    """The whole gateway, from a config mapping, with exactly the plugins given; ``async with`` runs it.

    The config defaults to the demo model, an in-memory store and the
    listener on 127.0.0.1 port 0 (``url`` is where it listens, when
    something mounted a route); the built-in tools are loaded, the API
    server only with ``api_server=True``. ``limits`` as for :class:`PlatformRunner`, applied to every
    plugin given.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, config: Mapping[str, Any], *plugins: Any, limits: Mapping[str, Any] | None = None,
                 shutdown_grace: float | None = None, env: Mapping[str, str] | None = None,
                 api_server: bool = False) -> None:
        data = dict(config)
        data.setdefault("store", {"path": ":memory:"})
        api = dict(data.get("api_server") or {})
        api.setdefault("port", 0)
        api.setdefault("host", "127.0.0.1")
        if not api_server:
            api.setdefault("enabled", False)
        data["api_server"] = api
        self.config = parse_config(data, source="(test config)", env=dict(env or {}))
        # the demo model's `tool: qr_code {...}` works
        builtins: tuple[str, ...] = ("hermes_gateway._core.builtin.tools", "hermes_gateway._core.builtin.reminders",
                                     "hermes_gateway._core.builtin.hooks_from_outside")  # mounts only with `hooks:`
        if api_server:
            builtins += ("hermes_gateway._core.api_server.plugin",)
        loaded = make_plugins(builtins=builtins, load_entry_points=False,
                              extra=[with_limits(p, limits) for p in plugins])
        if loaded.problems:
            raise AssertionError(f"a plugin does not load: {loaded.problems[0]}")
        self._gateway = Gateway(self.config, loaded, shutdown_grace=shutdown_grace)
        self._last_clients: dict[str, Any] = {}

    async def __aenter__(self) -> "TestGateway":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        try:
            await self._gateway.start()
        finally:
            self._last_clients = dict(self._gateway.clients)

    async def stop(self) -> None:
        await self._gateway.stop()

    @property
    def url(self) -> str | None:
        """``http://127.0.0.1:PORT`` of the listener (None when nothing mounted a route)."""
        return self._gateway.url

    @property
    def started_platforms(self) -> list[str]:
        return list(self._gateway.started_platforms)

    @property
    def accepting(self) -> bool:
        """Whether messages are taken; set it False to see what a platform does while the gateway stops."""
        return self._gateway.accepting

    @accepting.setter
    def accepting(self, value: bool) -> None:
        self._gateway.inbound.accepting = value

    def client(self, platform: str) -> Any:
        """The client of ``platform`` in this run (after a stop: the one that ran; None before the first start)."""
        return self._gateway.clients.get(platform) or self._last_clients.get(platform)

    def receive(self, incoming: Incoming) -> "asyncio.Future[Any]":
        """A message arrives as if the platform had received it; the future completes with the reply."""
        return self._gateway.receive(incoming)

    async def history(self, platform: str, chat_id: str, thread_id: str | None = None) -> list[dict[str, Any]]:
        """The stored conversation of a chat, oldest first, as ``{"role", "content"}`` mappings."""
        from .._core.store import ConversationKey

        return await self._gateway.store.history(ConversationKey(platform, str(chat_id), thread_id))
