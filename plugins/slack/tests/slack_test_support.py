"""Helpers shared by the slack plugin's tests (a module with a unique name, not a conftest)."""

from __future__ import annotations

from typing import Any

from hermes_gateway.testing import eventually  # noqa: F401  (the tests import it from here)
from hermes_gateway import RateBudget, StreamSettings, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.delivery import Delivery
from hermes_gateway._core.gateway import Gateway
from hermes_slack import SlackPlugin
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET

FAST = {"default": RateBudget(rate=200, burst=20)}
FAST_BOT = RateBudget(rate=400, burst=40)
SETTINGS = StreamSettings(enabled=True, edit_interval=0.02, min_tokens=2)
CURSOR = " ▌"
SECRETS = (BOT_TOKEN, APP_TOKEN, SIGNING_SECRET)


def fast_plugin(api: Any, **kw: Any) -> SlackPlugin:
    """A plugin with Slack's wire behaviour but no pacing worth waiting for."""
    kw.setdefault("budgets", FAST)
    kw.setdefault("bot_budget", FAST_BOT)
    kw.setdefault("edit_interval", 0.0)
    kw.setdefault("app_token", APP_TOKEN)
    kw.setdefault("signing_secret", SIGNING_SECRET)
    return SlackPlugin(BOT_TOKEN, api_base_url=api.base_url, **kw)


def delivery_for(plugin: SlackPlugin) -> Delivery:
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    assert not plugins.problems, plugins.problems
    return Delivery(plugins)


def config(api: Any, *, tokens_per_second: float = 300, mode: str = "socket", port: int = 0, **slack: Any) -> Any:
    section = {"enabled": True, "bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "signing_secret": SIGNING_SECRET,
               "mode": mode, "api_base_url": api.base_url, **slack}
    return parse_config({
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"slack": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}},
        "api_server": {"host": "127.0.0.1", "port": port},
        "platforms": {"slack": section},
    }, env={})


def fast_gateway(api: Any, plugin: SlackPlugin | None = None, **cfg: Any) -> tuple[Gateway, SlackPlugin]:
    plugin = plugin or fast_plugin(api)
    plugins = make_plugins(builtins=("hermes_gateway._core.builtin.tools",), load_entry_points=False, extra=[plugin])
    return Gateway(config(api, **cfg), plugins, shutdown_grace=0.5), plugin

