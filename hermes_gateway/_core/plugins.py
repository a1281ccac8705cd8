"""The plugin manager: built-ins, entry points, and a registry of platforms.

A plugin that fails to import, implements a hook that does not exist, or
registers a platform without a stream hook that platform needs, is
reported by name in one line and skipped; the gateway starts with the
others.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import warnings
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Callable, Iterable, Protocol, TypeVar

import pluggy

from . import hookspecs, tools
from .platform import Platform

log = logging.getLogger(__name__)


class Named(Protocol):
    """What a ``register_<thing>`` hook registers: something with a name (the first plugin to take it keeps it)."""

    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)

ENTRY_POINT_GROUP = "hermes_gateway"

#: Which installed entry points load (as simonw/llm's ``LLM_LOAD_PLUGINS``): unset = every one,
#: ``"telegram,slack"`` = only those entry-point names, empty = none. Built-ins always load. Tests set it
#: so that whatever else is installed on the machine cannot change what they see.
LOAD_PLUGINS_ENV = "HERMES_LOAD_PLUGINS"

#: Built-in features are plugins too, registered exactly like third-party ones.
BUILTIN_PLUGINS: tuple[str, ...] = (
    "hermes_gateway._core.builtin.reference",
    "hermes_gateway._core.builtin.tools",
    "hermes_gateway._core.api_server.plugin",
    "hermes_gateway._core.web.plugin",
    "hermes_gateway._core.builtin.hooks_from_outside",
    "hermes_gateway._core.builtin.reminders",
)

#: The private hooks only the built-in features implement (their specs: :mod:`.feature_parts`, added by the gateway).
BUILTIN_FEATURE_HOOKS = ("register_feature_routes", "feature_startup", "feature_shutdown")

STREAM_HOOKS = ("supports_edit", "on_stream_start", "on_delta", "on_stream_end", "on_media")

#: Why each stream hook is needed, by what a platform plugin declares. A plugin
#: missing one would lose text silently (a tail never sent, a cursor left on screen).
REQUIRED_STREAM_HOOKS: dict[str, str] = {
    "on_stream_end": "every platform shows each message's final text with it",
    "on_delta": "a platform that can edit (supports_edit) or appends (append_only) shows previews with it",
    "on_media": "a platform that declares media=MediaLimits(...) sends attachments with it",
}


@dataclass(frozen=True)
class PluginProblem:
    """Why one plugin was skipped; shown by ``hermes-gateway plugins`` and logged at start."""

    plugin: str
    message: str

    def __str__(self) -> str:
        return f"plugin {self.plugin!r} skipped: {self.message}"


@dataclass
class RegisteredPlatform:
    """A platform and the plugin that serves it.

    ``account_of``: for an account (``platforms.support: {platform: telegram}``, see :mod:`.accounts`), the
    plugin's platform it is an instance of; ``platform`` is then that platform under the account's name.
    """

    platform: Platform
    plugin: Any
    plugin_name: str
    origin: str
    account_of: str | None = None

    @property
    def plugin_platform(self) -> str:
        """The name the plugin registered this platform under (the account's own for a plain entry)."""
        return self.account_of or self.platform.name


@dataclass
class Plugins:
    """The loaded plugin manager plus what it learned while loading."""

    pm: pluggy.PluginManager
    problems: list[PluginProblem] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)
    _platforms: dict[str, RegisteredPlatform] | None = None
    #: Set on the view :meth:`configured` returns: the plugins as loaded, and the config whose ``platforms:``
    #: entries (accounts, ``rate_limits``) shape what :meth:`platforms` answers.
    _loaded: "Plugins | None" = field(default=None, repr=False)
    _config: Any = field(default=None, repr=False)
    _instances_of: dict[str, RegisteredPlatform] | None = field(default=None, repr=False)

    def register(self, plugin: Any, name: str | None = None, origin: str = "direct") -> bool:
        """Register one plugin object/module; report and skip it if it breaks the contract."""
        name = name or _plugin_name(plugin)
        unknown = _unknown_hooks(plugin)
        if origin == "built-in" or getattr(plugin, "__name__", "").startswith("hermes_gateway._core."):
            unknown = [hook for hook in unknown if hook not in BUILTIN_FEATURE_HOOKS]  # the core's own modules
        if unknown:
            self._problem(name, f"implements unknown hook(s) {', '.join(unknown)}; "
                                f"known hooks: {', '.join(_spec_names())}")
            return False
        implemented = set(implemented_hooks(plugin))
        missing = missing_stream_hook(implemented)
        if missing and not _declares_clients(plugin):
            self._problem(name, f"registers a platform but does not implement {missing} "
                                f"({REQUIRED_STREAM_HOOKS[missing]})")
            return False
        try:
            self.pm.register(plugin, name=name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            self._problem(name, str(exc).splitlines()[0])
            return False
        self.origins[name] = origin
        _warn_hook_style(name, implemented)
        if origin != "built-in":
            from .plugin_host import FEATURE_HOOKS, warn_gateway_argument

            warn_gateway_argument(name, [(hook, impl.argnames) for hook in FEATURE_HOOKS
                                         for impl in getattr(self.pm.hook, hook).get_hookimpls()
                                         if impl.plugin is plugin])
        self._platforms = None
        if self._loaded is not None:
            self._loaded._platforms = None
        return True

    def configured(self, config: Any) -> "Plugins":
        """These plugins as ``config`` instantiates their platforms: an account per ``platforms.NAME:
        {platform: P}`` entry (see :mod:`.accounts`), ``rate_limits`` over the declared budgets.

        A view sharing the plugin manager: the plugins load once per process, while each gateway (and
        each test's config) gets its own platform instances.
        """
        loaded = self._loaded or self
        return Plugins(loaded.pm, loaded.problems, loaded.origins, _loaded=loaded, _config=config)

    def platforms(self) -> dict[str, RegisteredPlatform]:
        """Every registered platform by name (collected once, then cached); with a config (:meth:`configured`),
        its accounts too, and each platform as its ``platforms:`` entry configures it."""
        if self._loaded is not None:
            loaded = self._loaded.platforms()  # a plugin registered since (tests do) is seen: the cache is per dict
            if self._platforms is None or self._instances_of is not loaded:
                self._platforms, self._instances_of = _instances(loaded, self._config), loaded
            return self._platforms
        if self._platforms is None:
            found: dict[str, RegisteredPlatform] = {}
            for platform, impl in self.collect("register_platforms", Platform, "platform"):
                if platform.client is None and not _implements(impl.plugin, "on_stream_end"):
                    why = REQUIRED_STREAM_HOOKS["on_stream_end"]
                    self._problem(impl.plugin_name, f"platform {platform.name!r} has no client and the plugin does "
                                                    f"not implement on_stream_end ({why})")
                    continue
                hook_only = platform.client is None  # a client's methods are checked when it is built
                if hook_only and platform.append_only and not _implements(impl.plugin, "on_delta"):
                    why = REQUIRED_STREAM_HOOKS["on_delta"]
                    self._problem(impl.plugin_name, f"platform {platform.name!r} is append_only but the plugin "
                                                    f"does not implement on_delta ({why})")
                    continue
                if hook_only and platform.media is not None and not _implements(impl.plugin, "on_media"):
                    why = REQUIRED_STREAM_HOOKS["on_media"]
                    self._problem(impl.plugin_name, f"platform {platform.name!r} declares media but the plugin "
                                                    f"does not implement on_media ({why})")
                    continue
                found[platform.name] = RegisteredPlatform(platform, impl.plugin, impl.plugin_name,
                                                          self.origins.get(impl.plugin_name, "direct"))
            self._platforms = found
        return self._platforms

    def platform(self, name: str) -> RegisteredPlatform:
        platforms = self.platforms()
        if name not in platforms:
            known = ", ".join(sorted(platforms)) or "none"
            raise KeyError(f"unknown platform {name!r} (known: {known})")
        return platforms[name]

    def collect(self, hook_name: str, kind: type[T], what: str, config: Any = None) -> list[tuple[T, pluggy.HookImpl]]:
        """Call a ``register_<thing>(register[, config])`` hook plugin by plugin, in registration order.

        Each item must be a ``kind`` with a ``name``; the first plugin to
        register a name keeps it. A plugin whose hook raises, or registers
        something else, is reported and skipped: it must not stop the gateway.
        """
        owners: dict[str, str] = {}
        collected: list[tuple[T, pluggy.HookImpl]] = []
        for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
            found: list[T] = []
            try:
                offered = {"register": _collector(kind, found), "config": config}
                impl.function(**{name: offered[name] for name in impl.argnames if name in offered})
            except Exception as exc:
                self._problem(impl.plugin_name, f"{hook_name} failed: {exc}")
                continue
            for item in found:
                name = item.name
                if name in owners:
                    self._problem(impl.plugin_name, f"{what} {name!r} is already registered by {owners[name]!r}")
                    continue
                owners[name] = impl.plugin_name
                collected.append((item, impl))
        return collected

    def _problem(self, name: str, message: str) -> None:
        problem = PluginProblem(name, message)
        self.problems.append(problem)
        log.warning("%s", problem)


def _instances(loaded: dict[str, RegisteredPlatform], config: Any) -> dict[str, RegisteredPlatform]:
    """The loaded platforms as ``config``'s ``platforms:`` entries make them, accounts added after them."""
    from dataclasses import replace

    from .accounts import accounts, instance

    sections = getattr(config, "platforms", {}) or {}
    found: dict[str, RegisteredPlatform] = {}
    for name, registered in loaded.items():
        platform = instance(registered.platform, name, sections.get(name))
        found[name] = registered if platform is registered.platform else replace(registered, platform=platform)
    for name, plugin in accounts(config).items():
        base = loaded.get(plugin)
        if base is None or name in loaded:  # refused by check_names in one line (config_check.py)
            continue
        found[name] = replace(base, platform=instance(base.platform, name, sections.get(name)), account_of=plugin)
    return found


_installed: dict[frozenset[str] | None, Plugins] = {}


def installed_plugins() -> Plugins:
    """The built-ins and every installed plugin (``HERMES_LOAD_PLUGINS`` permitting), loaded once and shared.

    Every command, the gateway and a script's ``AIAgent()`` see the same
    plugin objects (a plugin configured at start-up is the one that sends),
    and entry points are imported once per selection. Tests that want their
    own set call :func:`make_plugins`.
    """
    selection = selected_entry_points()
    plugins = _installed.get(selection)
    if plugins is None:
        plugins = _installed[selection] = make_plugins()
    return plugins


def _installed_tools() -> list["tools.Tool"]:
    return tools.collect_tools(installed_plugins())


tools.provide_installed_tools(_installed_tools)  # AIAgent(tools=None) offers these, without importing this module


def selected_entry_points() -> frozenset[str] | None:
    """The entry-point names ``HERMES_LOAD_PLUGINS`` allows (None: unset, every installed one)."""
    value = os.environ.get(LOAD_PLUGINS_ENV)
    if value is None:
        return None
    return frozenset(name.strip() for name in value.split(",") if name.strip())


def make_plugins(*, builtins: Iterable[str] = BUILTIN_PLUGINS, load_entry_points: bool = True,
                 extra: Iterable[Any] = ()) -> Plugins:
    """Build a plugin manager with the built-ins, installed entry points and ``extra`` objects.

    ``load_entry_points`` loads those ``HERMES_LOAD_PLUGINS`` allows (see :data:`LOAD_PLUGINS_ENV`).
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    for module_name in builtins:
        module = _import(plugins, module_name, module_name)
        if module is not None:
            plugins.register(module, name=module_name, origin="built-in")
    if load_entry_points:
        selection = selected_entry_points()
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if selection is not None and ep.name not in selection:
                continue
            dist = ep.dist.name if ep.dist else "?"
            try:
                obj = ep.load()
            except Exception as exc:
                plugins._problem(ep.name, f"failed to import {ep.value} ({type(exc).__name__}: {exc})")
                continue
            plugins.register(obj, name=ep.name, origin=f"entry point of {dist}")
    for obj in extra:
        plugins.register(obj)
    return plugins


def _import(plugins: Plugins, label: str, module_name: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except Exception as exc:
        plugins._problem(label, f"failed to import {module_name} ({type(exc).__name__}: {exc})")
        return None


def _spec_names() -> list[str]:
    return sorted(n for n, f in vars(hookspecs).items()
                  if callable(f) and hasattr(f, f"{hookspecs.PROJECT}_spec"))


def implemented_hooks(plugin: Any) -> list[str]:
    """The hook names ``plugin`` implements (marked with ``hookimpl``), known or not."""
    marker = f"{hookspecs.PROJECT}_impl"
    names = []
    for attr in dir(plugin):
        if attr.startswith("_"):
            continue
        try:
            value = getattr(plugin, attr)
        except Exception:
            continue
        opts = getattr(value, marker, None)
        if isinstance(opts, dict):
            names.append(opts.get("specname") or attr)
    return names


def _warn_hook_style(name: str, implemented: set[str]) -> None:
    """A plugin with stream hooks as pluggy hooks still works, for this release, with a DeprecationWarning.

    The one way is a client (``Platform(client=...)``) whose methods are the
    stream hooks (checked against the specs when it is built, see
    :mod:`.client_contract`): a client is per account and per run, where a
    module's hooks are one per process.
    """
    hooked = sorted(implemented & set(STREAM_HOOKS))
    if hooked:
        warnings.warn(f"plugin {name} implements {', '.join(hooked)} as pluggy hooks: write them as methods of "
                      f"its platform's client (Platform(client=...), docs/plugins.md section 3); the hook style "
                      f"is removed in the next release", DeprecationWarning, stacklevel=3)


def _implements(plugin: Any, hook_name: str) -> bool:
    return hook_name in implemented_hooks(plugin)


def _unknown_hooks(plugin: Any) -> list[str]:
    known = set(_spec_names())
    return [name for name in implemented_hooks(plugin) if name not in known]


def _declares_clients(plugin: Any) -> bool:
    """Whether every platform the plugin registers brings its own client (its stream methods are checked later)."""
    hook = getattr(plugin, "register_platforms", None)
    if hook is None:
        return False
    found: list[Any] = []
    try:
        hook(found.append)
    except Exception:
        return False  # reported when the platforms are collected
    return bool(found) and all(getattr(p, "client", None) is not None for p in found)


def missing_stream_hook(implemented: set[str]) -> str | None:
    """The first stream hook a plugin registering platforms needs but lacks (None: complete)."""
    if "register_platforms" not in implemented:
        return None
    if "on_stream_end" not in implemented:
        return "on_stream_end"
    if "supports_edit" in implemented and "on_delta" not in implemented:
        return "on_delta"
    return None


def _plugin_name(plugin: Any) -> str:
    if inspect.ismodule(plugin):
        return plugin.__name__
    return getattr(plugin, "__name__", None) or type(plugin).__name__


def _collector(kind: type[T], found: list[T]) -> Callable[[T], None]:
    """The ``register`` one plugin's hook gets: each call checks the type and lands in that plugin's ``found``.

    A function of its own (not a closure in the loop over plugins): a hook that keeps ``register`` and calls it
    later still adds to its own list, never to the plugin collected after it.
    """
    def register(item: T) -> None:
        if not isinstance(item, kind):
            raise TypeError(f"register() takes a hermes_gateway.{kind.__name__}, got {type(item).__name__}")
        found.append(item)

    return register
