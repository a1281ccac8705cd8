"""``platforms.NAME.rate_limits``: each value checked when the file is read, one line naming the key.

How the limits replace a platform's budgets, and the chat kinds a platform has: tests/test_accounts.py.
"""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError, RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.settings.rate_limits import apply_rate_limits, budget_kinds, unknown_kind


def config(platforms: dict):
    return parse_config({"platforms": platforms}, source="config.yaml", env={})


@pytest.mark.parametrize("limits, message", [
    ({"private": {"rate": float("nan")}}, "rate_limits.private.rate: calls per second, a number above 0"),
    ({"private": {"rate": float("inf")}}, "rate_limits.private.rate: calls per second"),
    ({"private": {"rate": 0}}, "rate_limits.private.rate: calls per second"),
    ({"private": {"rate": True}}, "rate_limits.private.rate: calls per second"),
    ({"private": {"burst": 2}}, "rate_limits.private.rate: calls per second, a number above 0 (required)"),
    ({"private": {"rate": 1, "burst": 0}}, "rate_limits.private.burst: calls at once, a whole number from 1"),
    ({"private": {"rate": 1, "burst": 1.5}}, "rate_limits.private.burst: calls at once"),
    ({"private": {"rate": 1, "brust": 2}}, "rate_limits.private.brust: rate or burst"),
    ({"private": 5}, "rate_limits.private: a mapping {rate: calls per second, burst: calls at once}"),
    ([1], "rate_limits: a mapping of chat kind to {rate, burst}"),
])
def test_a_bad_rate_limit_is_one_line_naming_the_key(limits, message):
    with pytest.raises(ConfigError) as raised:
        config({"reference": {"rate_limits": limits}})
    assert f"config.yaml: platforms.reference.{message}" in str(raised.value)


def test_the_kinds_a_platform_takes_are_its_own_plus_default_and_bot():
    budgets = {"private": RateBudget(rate=1), "group": RateBudget(rate=0.3, burst=3)}
    assert budget_kinds(budgets) == ["bot", "default", "group", "private"]
    assert unknown_kind({"private": {}, "channel": {}}, budgets) == "channel"
    merged, bot = apply_rate_limits({"group": {"rate": 2.0, "burst": 4}, "bot": {"rate": 30.0, "burst": 1}},
                                    budgets, None)
    assert merged == {"private": RateBudget(rate=1), "group": RateBudget(rate=2.0, burst=4)}
    assert bot == RateBudget(rate=30.0, burst=1)
