"""Accounts: several ``platforms:`` entries served by one plugin, each its own platform instance.

An operator runs a support bot and a sales bot on Telegram from one gateway::

    platforms:
      support: {platform: telegram, token: "${SUPPORT_TOKEN}"}
      sales:   {platform: telegram, token: "${SALES_TOKEN}"}

Each entry is an *account*: the plugin's :class:`~.platform.Platform` under the entry's name, so everything
the core keys by platform name is the account's own: its client and settings, chat budgets and 429 windows,
conversations (``support:123``), metrics and dashboard rows, ``send``/``ask --platform support``, overrides
(``platform: support``), crash recovery. The plain form (``telegram: {token: ...}``) is the account named
after the platform, and keeps working unchanged.

Why instances rather than a second key everywhere: the core already keys all of this by the platform's name,
so renaming the platform per entry gives every part its own account without any part knowing accounts exist.
A plugin never has to care either: what its client hands the core as ``Incoming(platform="telegram")`` is
taken as the account's (:func:`as_account`), and its context's ``platform`` is the account's name.

Also here: ``rate_limits:`` (:mod:`.settings.rate_limits`) laid over the declared budgets, for an account or
a plain entry alike.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from .config import Config, did_you_mean
from .errors import ConfigError
from .platform import Platform
from .settings.rate_limits import apply_rate_limits, budget_kinds, unknown_kind


def plugin_platform(name: str, section: Mapping[str, Any] | None) -> str:
    """The plugin platform that serves the entry ``platforms.<name>``: its ``platform:`` key, else its name."""
    named = (section or {}).get("platform")
    return str(named) if named else name


def accounts(config: Config) -> dict[str, str]:
    """``{entry name: plugin platform}`` for every ``platforms:`` entry that is an account of another platform."""
    return {name: plugin for name, section in config.platforms.items()
            if (plugin := plugin_platform(name, section)) != name}


def instance(platform: Platform, name: str, section: Mapping[str, Any] | None) -> Platform:
    """``platform`` as the entry ``platforms.<name>`` configures it: renamed for an account, its budgets
    replaced by ``rate_limits``. The same object when the entry changes nothing."""
    changes: dict[str, Any] = {}
    if name != platform.name:
        changes["name"] = name
    limits = (section or {}).get("rate_limits")
    if limits and unknown_kind(limits, platform.budgets) is None:  # an unknown kind is check_names' error
        changes["budgets"], changes["bot_budget"] = apply_rate_limits(limits, platform.budgets, platform.bot_budget)
    return dataclasses.replace(platform, **changes) if changes else platform


def account_errors(config: Config, platforms: Mapping[str, Platform]) -> list[ConfigError]:
    """One line per account whose plugin platform is unknown, whose name is another platform's, or whose
    ``rate_limits`` name a chat kind the platform does not have. ``platforms``: the plugins' own."""
    errors: list[ConfigError] = []
    known = sorted(platforms)
    for name, section in config.platforms.items():
        plugin = plugin_platform(name, section)
        if plugin != name:
            if plugin not in platforms:
                errors.append(ConfigError(config.source, f"platforms.{name}.platform",
                                          f"the name of an installed platform{did_you_mean(plugin, known)}; "
                                          f"known: {', '.join(known) or 'none'}"))
                continue
            if name in platforms:
                errors.append(ConfigError(config.source, f"platforms.{name}",
                                          f"an account name that is not another platform's: {name} is the "
                                          f"{name} plugin's platform, so it cannot be an account of {plugin}; "
                                          f"name it e.g. {plugin}_{name}"))
                continue
        limits = (section or {}).get("rate_limits")
        base = platforms.get(plugin)
        if limits and base is not None:
            kind = unknown_kind(limits, base.budgets)
            if kind is not None:
                kinds = budget_kinds(base.budgets)
                errors.append(ConfigError(config.source, f"platforms.{name}.rate_limits.{kind}",
                                          f"a chat kind of {plugin}{did_you_mean(kind, kinds)}; "
                                          f"known: {', '.join(kinds)}"))
    return errors


def as_account(value: Any, account: str, plugin: str) -> Any:
    """``value`` (an ``Incoming``, a ``ChoiceAnswer``) with its ``platform`` the account's, when the plugin gave
    its platform's own name; anything else unchanged (a plugin serving several platforms names another)."""
    if account != plugin and getattr(value, "platform", None) == plugin and dataclasses.is_dataclass(value):
        return dataclasses.replace(value, platform=account)  # type: ignore[type-var]
    return value
