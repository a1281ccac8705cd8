"""Helpers shared by the discord plugin's tests (a module with a unique name, not a conftest)."""

from __future__ import annotations

from typing import Any

from hermes_gateway.testing import eventually  # noqa: F401  (the tests import it from here)
from hermes_gateway import RateBudget, StreamSettings, make_plugins
from hermes_gateway._core.delivery import Delivery
from hermes_discord import DiscordPlugin

#: Shaped like a real bot token: base64 of the bot's user id, a timestamp part, an HMAC part.
TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhXk2a.q9Zr3Yb7Lw1Nc5Vt8Pd2Sf6Gh0Jk4Mn7Qr1Tu3Wx"
SECRET_PART = TOKEN.rsplit(".", 1)[1]
BOT_ID = "1234567890123456789"
FAST = {"default": RateBudget(rate=200, burst=20)}
SETTINGS = StreamSettings(enabled=True, edit_interval=0.02, min_tokens=2)
CURSOR = " ▌"


def plugin_for(api: Any, **kw: Any) -> DiscordPlugin:
    """A plugin with Discord's own limits, pointed at the emulator."""
    kw.setdefault("guild_ready_timeout", 0.1)
    return DiscordPlugin(TOKEN, api_base_url=api.api_base_url, gateway_url=api.gateway_url, **kw)


def fast_plugin(api: Any, **kw: Any) -> DiscordPlugin:
    """Discord's wire behaviour, no pacing worth waiting for (the emulator's buckets are made loose to match)."""
    kw.setdefault("budgets", FAST)
    kw.setdefault("edit_interval", 0.0)
    return plugin_for(api, **kw)


def delivery_for(plugin: DiscordPlugin) -> Delivery:
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    assert not plugins.problems, plugins.problems
    return Delivery(plugins)

