"""``platforms.<name>.rate_limits``: the operator's word on a platform's rate budgets, over what the plugin declares.

A plugin declares the budgets its platform is known to allow (``Platform(budgets=..., bot_budget=...)``).
Some platforms' limits are not the platform's but the server's: a Matrix homeserver's are set by whoever runs
it, and often lifted for bots. So an operator may say, per chat kind::

    platforms:
      matrix:
        rate_limits:
          private: {rate: 5, burst: 10}   # calls per second on average, at once
          default: {rate: 2}
          bot: {rate: 50, burst: 50}      # across all chats of the bot (the Platform's bot_budget)

Each value is checked here, when the file is read (finite numbers, ``rate`` > 0, ``burst`` a whole number
from 1); which chat kinds exist is the platform's to say, so the kinds are checked once the plugins are loaded
(:func:`unknown_kind`), with a did-you-mean.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ..errors import ConfigError
from ..platform import RateBudget

#: The kind that sets the bot-wide budget (``Platform.bot_budget``) rather than a per-chat one.
BOT_KIND = "bot"
#: The kind every platform has: a chat whose kind has no budget of its own.
DEFAULT_KIND = "default"
#: Bounds that catch a typo (a rate of 1e9 calls a second is nobody's limit; a burst of 1e6 neither).
MAX_RATE = 10_000.0
MAX_BURST = 10_000


def parse_rate_limits(value: Any, *, source: str, key: str) -> dict[str, dict[str, float | int]]:
    """``{kind: {"rate": float, "burst": int}}`` from the YAML value at ``key``; one :class:`ConfigError` line
    for the first mistake (``key`` is ``platforms.<name>.rate_limits``)."""
    if not isinstance(value, dict):
        raise ConfigError(source, key, "a mapping of chat kind to {rate, burst}, e.g. private: {rate: 1, burst: 3}")
    limits: dict[str, dict[str, float | int]] = {}
    for kind, item in value.items():
        where = f"{key}.{kind}"
        if not isinstance(item, dict):
            raise ConfigError(source, where, "a mapping {rate: calls per second, burst: calls at once}")
        unknown = [k for k in item if k not in ("rate", "burst")]
        if unknown:
            raise ConfigError(source, f"{where}.{unknown[0]}", "rate or burst (the only keys of a budget)")
        if "rate" not in item:
            raise ConfigError(source, f"{where}.rate", "calls per second, a number above 0 (required)")
        rate = item["rate"]
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) \
                or not 0 < rate <= MAX_RATE:
            raise ConfigError(source, f"{where}.rate", f"calls per second, a number above 0 and at most "
                                                       f"{MAX_RATE:g}, got {rate!r}")
        burst = item.get("burst", 1)
        if isinstance(burst, bool) or not isinstance(burst, int) or not 1 <= burst <= MAX_BURST:
            raise ConfigError(source, f"{where}.burst", f"calls at once, a whole number from 1 to {MAX_BURST}, "
                                                        f"got {burst!r}")
        limits[str(kind)] = {"rate": float(rate), "burst": burst}
    return limits


def budget_kinds(budgets: Mapping[str, RateBudget]) -> list[str]:
    """The kinds ``rate_limits`` may name for a platform declaring ``budgets``: its own, ``default`` and ``bot``."""
    return sorted({*budgets, DEFAULT_KIND, BOT_KIND})


def unknown_kind(limits: Mapping[str, Any], budgets: Mapping[str, RateBudget]) -> str | None:
    """The first kind of ``limits`` the platform does not know (None: all known)."""
    kinds = budget_kinds(budgets)
    return next((kind for kind in limits if kind not in kinds), None)


def apply_rate_limits(limits: Mapping[str, Mapping[str, Any]], budgets: Mapping[str, RateBudget],
                      bot_budget: RateBudget | None) -> tuple[dict[str, RateBudget], RateBudget | None]:
    """The platform's budgets with the operator's ``limits`` laid over them (kinds not named keep theirs)."""
    merged = dict(budgets)
    for kind, item in limits.items():
        budget = RateBudget(rate=float(item["rate"]), burst=int(item.get("burst", 1)))
        if kind == BOT_KIND:
            bot_budget = budget
        else:
            merged[kind] = budget
    return merged, bot_budget
