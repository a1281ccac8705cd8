"""Helpers shared by the telegram plugin's tests (a module with a unique name, not a conftest)."""

from __future__ import annotations

from typing import Any

from hermes_gateway.testing import eventually  # noqa: F401  (the tests import it from here)
from hermes_gateway import RateBudget, StreamSettings, make_plugins
from hermes_gateway._core.delivery import Delivery
from hermes_telegram import TelegramPlugin

TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
SECRET_HALF = TOKEN.split(":", 1)[1]
FAST = {"default": RateBudget(rate=200, burst=20)}
SETTINGS = StreamSettings(enabled=True, edit_interval=0.02, min_tokens=2)
CURSOR = " ▌"


def fast_plugin(base_url: str, **kw: Any) -> TelegramPlugin:
    """A plugin with Telegram's wire behaviour but no pacing worth waiting for."""
    kw.setdefault("budgets", FAST)
    kw.setdefault("edit_interval", 0.0)
    return TelegramPlugin(TOKEN, base_url=base_url, **kw)


def delivery_for(plugin: TelegramPlugin) -> Delivery:
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    assert not plugins.problems, plugins.problems
    return Delivery(plugins)

