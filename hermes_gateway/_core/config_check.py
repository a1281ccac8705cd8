"""Checks of the configuration that need the loaded plugins: which names exist, which floors apply.

``config.yaml`` is parsed before any plugin is loaded, so ``platforms.telgram``
cannot be refused there: only the plugins know that ``telegram`` is a platform.
Every command calls :func:`check_names` once its plugins are loaded, and a
typo becomes one line with the closest known name instead of a setting that
is silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .accounts import account_errors, accounts
from .config import Config, did_you_mean
from .errors import ConfigError
from .platform import Platform

#: Names under ``streaming:`` that are not platforms: the terminal chat and the API server.
STREAMING_ONLY_NAMES = ("cli", "api_server")
#: Keys of ``streaming:`` itself (the master switch and the defaults).
STREAMING_KEYS = ("enabled", "edit_interval", "min_tokens", "cursor")


class ConfigErrors(ConfigError):
    """Several independent mistakes; each is printed as its own line (``str()`` is the first)."""

    def __init__(self, errors: list[ConfigError]) -> None:
        first = errors[0]
        super().__init__(first.source, first.key, first.expected)
        self.all = list(errors)


def _platforms(plugins: Any) -> Mapping[str, Platform]:
    """``{name: Platform}`` from a :class:`~hermes_gateway._core.plugins.Plugins` or a plain mapping."""
    registered = plugins.platforms() if hasattr(plugins, "platforms") else plugins
    return {name: getattr(reg, "platform", reg) for name, reg in registered.items()}


def _loaded_platforms(plugins: Any) -> Mapping[str, Platform]:
    """The plugins' own platforms (no accounts), also from a view :meth:`Plugins.configured` made."""
    return _platforms(getattr(plugins, "_loaded", None) or plugins)


def check_names(config: Config, plugins: Any) -> list[ConfigError]:
    """Every name under ``platforms:`` and ``streaming:`` that no loaded plugin knows, one error each; every
    account (``platforms.NAME.platform``) naming an unknown platform or taking another platform's name."""
    loaded = _loaded_platforms(plugins)
    platforms = sorted({*loaded, *accounts(config)})
    broken = len(getattr(plugins, "problems", ()) or ())
    hint = (f"; {broken} plugin{'s' if broken != 1 else ''} failed to load, see `hermes-gateway plugins`"
            if broken else "")
    errors: list[ConfigError] = account_errors(config, loaded)
    for name in config.platforms:
        if name not in platforms:
            errors.append(ConfigError(config.source, f"platforms.{name}",
                                      f"the name of an installed platform{did_you_mean(name, platforms)}; "
                                      f"known: {', '.join(platforms) or 'none'}{hint}"))
    streaming_names = sorted({*platforms, *STREAMING_ONLY_NAMES})
    for name in config.streaming.overrides:
        if name not in streaming_names:
            errors.append(ConfigError(config.source, f"streaming.{name}",
                                      f"a platform name or one of {', '.join(STREAMING_KEYS)}"
                                      f"{did_you_mean(name, [*STREAMING_KEYS, *streaming_names])}; "
                                      f"known platforms: {', '.join(streaming_names)}{hint}"))
    return errors


def raise_for_names(config: Config, plugins: Any) -> None:
    """:func:`check_names`, raised: what ``run``, ``ask`` and ``chat`` do before anything else."""
    errors = check_names(config, plugins)
    if errors:
        raise ConfigErrors(errors)


@dataclass(frozen=True)
class Interval:
    """The edit interval a platform really gets, and why it differs from the configured one."""

    configured: float
    effective: float
    origin: str  # where ``configured`` came from (file key, or default)
    floor: float

    @property
    def raised(self) -> bool:
        return self.effective > self.configured


def edit_interval(config: Config, platform: Platform) -> Interval:
    """``max(configured, the platform's floor)``, as the delivery core applies it."""
    settings, origin = config.explain_streaming(platform.name)
    return Interval(settings.edit_interval, max(settings.edit_interval, platform.edit_interval),
                    origin["edit_interval"], platform.edit_interval)


def floor_warnings(config: Config, plugins: Any, names: list[str] | None = None) -> list[str]:
    """A line for each platform (of ``names``, default all) whose configured edit_interval its floor raises.

    Only a value the user wrote counts: a default below a floor is nobody's mistake.
    """
    platforms = _platforms(plugins)
    lines = []
    for name in sorted(platforms if names is None else names):
        platform = platforms.get(name)
        if platform is None:
            continue
        interval = edit_interval(config, platform)
        if interval.raised and interval.origin != "default":
            lines.append(f"{interval.origin.rsplit('(', 1)[-1].rstrip(')')} {interval.configured:g}s is below "
                         f"{name}'s floor: edits into {name} are {interval.effective:g}s apart")
    return lines
