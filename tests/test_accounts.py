"""Accounts (``platforms.NAME: {platform: P}``) and ``rate_limits``: how the config shapes the platforms.

The gateway end to end with two Telegram bots is in plugins/telegram/tests/test_telegram_accounts.py.
"""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError, RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.config_check import check_names
from hermes_gateway._core.plugins import make_plugins


def config(platforms: dict, **extra: object):
    return parse_config({"platforms": platforms, **extra}, source="config.yaml", env={})


def errors(platforms: dict, **extra: object) -> list[str]:
    plugins = make_plugins(load_entry_points=False)
    return [str(e) for e in check_names(config(platforms, **extra), plugins.configured(config(platforms)))]


def test_an_account_is_the_plugins_platform_under_its_own_name():
    cfg = config({"support": {"platform": "reference"}, "sales": {"platform": "reference", "enabled": False}})
    plugins = make_plugins(load_entry_points=False).configured(cfg)
    platforms = plugins.platforms()
    assert {"reference", "support", "sales"} <= set(platforms)
    support = platforms["support"]
    assert support.platform.name == "support" and support.account_of == "reference"
    assert support.plugin is platforms["reference"].plugin and support.plugin_platform == "reference"
    assert support.platform.budgets == platforms["reference"].platform.budgets
    assert platforms["reference"].account_of is None and platforms["reference"].plugin_platform == "reference"
    assert errors({"support": {"platform": "reference"}}) == []


def test_the_plain_form_is_unchanged_and_the_loaded_plugins_know_no_accounts():
    loaded = make_plugins(load_entry_points=False)
    cfg = config({"reference": {"enabled": True}, "support": {"platform": "reference"}})
    view = loaded.configured(cfg)
    assert view.platforms()["reference"].platform is loaded.platforms()["reference"].platform
    assert "support" not in loaded.platforms()  # the view is the config's; the shared plugins are untouched
    assert view.configured(cfg).platforms().keys() == view.platforms().keys()  # configuring a view again: same


def test_an_unknown_plugin_platform_is_named_with_a_did_you_mean():
    assert errors({"support": {"platform": "refrence", "token": "x"}}) == [
        "config.yaml: platforms.support.platform: the name of an installed platform (did you mean reference?); "
        "known: reference, web"]


def test_an_account_named_like_another_platform_is_refused_in_one_line():
    assert errors({"web": {"platform": "reference"}}) == [
        "config.yaml: platforms.web: an account name that is not another platform's: web is the web plugin's "
        "platform, so it cannot be an account of reference; name it e.g. reference_web"]


def test_an_account_name_must_be_a_word_and_platform_a_name():
    with pytest.raises(ConfigError, match=r"platforms\.support\.platform: the name of an installed platform, "
                                          r"e\.g\. telegram, got 3"):
        config({"support": {"platform": 3}})
    with pytest.raises(ConfigError, match=r"platforms\.sup port: an account name of letters, digits"):
        config({"sup port": {"platform": "reference"}})


def test_streaming_and_overrides_may_name_an_account():
    assert errors({"support": {"platform": "reference"}}, streaming={"support": {"enabled": True}}) == []
    cfg = config({"support": {"platform": "reference"}}, streaming={"support": {"enabled": True}})
    assert cfg.streaming_for("support").enabled and not cfg.streaming_for("reference").enabled


# -- rate_limits ------------------------------------------------------------------------------------------------


def test_rate_limits_replace_the_declared_budgets_by_chat_kind():
    cfg = config({"reference": {"rate_limits": {"default": {"rate": 5, "burst": 10}, "bot": {"rate": 30}}},
                  "support": {"platform": "reference", "rate_limits": {"group": {"rate": 2}}}})
    platforms = make_plugins(load_entry_points=False).configured(cfg).platforms()
    reference, support = platforms["reference"].platform, platforms["support"].platform
    assert reference.budget_for("private") == RateBudget(rate=5, burst=10)  # default covers private here
    assert reference.budget_for("group") == RateBudget(rate=20 / 60, burst=3)  # a kind not named keeps its own
    assert reference.bot_budget == RateBudget(rate=30, burst=1)
    assert support.budget_for("group") == RateBudget(rate=2, burst=1)
    assert support.budget_for("private") == RateBudget(rate=1, burst=1) and support.bot_budget is None


def test_a_rate_limit_for_a_chat_kind_the_platform_does_not_have_gets_a_did_you_mean():
    assert errors({"reference": {"rate_limits": {"gruop": {"rate": 1}}}}) == [
        "config.yaml: platforms.reference.rate_limits.gruop: a chat kind of reference (did you mean group?); "
        "known: bot, default, group"]


def test_the_dashboard_and_the_delivery_core_see_each_account_as_its_own_platform():
    from hermes_gateway._core.gateway import Gateway
    from hermes_gateway._core.web.dashboard_state import platforms as dashboard_rows

    cfg = config({"support": {"platform": "reference", "rate_limits": {"default": {"rate": 7}}},
                  "sales": {"platform": "reference"}})
    gateway = Gateway(cfg, make_plugins(load_entry_points=False))
    assert [p for p in gateway.enabled_platforms() if p != "web"] == ["support", "sales"]
    rows = {row["name"]: row for row in dashboard_rows(gateway, 0.0)}
    assert rows["support"]["enabled"] and rows["sales"]["enabled"] and not rows["reference"]["enabled"]
    hooks = gateway.delivery.hooks("support")
    assert hooks.platform.name == "support" and hooks.platform.budget_for("private").rate == 7
    assert gateway.delivery.hooks("sales").platform.budget_for("private").rate == 1


@pytest.mark.parametrize("command", [["run"], ["config"]])
def test_run_and_config_say_each_account_mistake_in_one_line_and_stop(tmp_path, command):
    import os
    import subprocess
    import sys

    path = tmp_path / "config.yaml"
    path.write_text("platforms:\n  support: {platform: refrence}\n  web: {platform: reference}\n")
    env = {**os.environ, "HERMES_LOAD_PLUGINS": "", "HERMES_HOME": str(tmp_path / "home")}
    result = subprocess.run([sys.executable, "-m", "hermes_gateway", *command, "--config", str(path)],
                            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"hermes-gateway: config error: {path}: platforms.support.platform: the name of an installed platform "
        f"(did you mean reference?); known: reference, web",
        f"hermes-gateway: config error: {path}: platforms.web: an account name that is not another platform's: "
        f"web is the web plugin's platform, so it cannot be an account of reference; name it e.g. reference_web"]
