"""Helpers shared by the discord plugin's tests (a module with a unique name, not a conftest).

The plugin is built and run only the ways the gateway runs it, through the
kit: :func:`runner_for` (one client, built from a ``platforms.discord``
section, replies streamed by the real delivery core) and
:func:`gateway_for` (the whole gateway from a config mapping).
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import RateBudget, StreamSettings
from hermes_gateway.testing import PlatformRunner, TestGateway, eventually  # noqa: F401  (the tests import it here)
from hermes_discord import DiscordPlugin

#: Shaped like a real bot token: base64 of the bot's user id, a timestamp part, an HMAC part.
TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhXk2a.q9Zr3Yb7Lw1Nc5Vt8Pd2Sf6Gh0Jk4Mn7Qr1Tu3Wx"
SECRET_PART = TOKEN.rsplit(".", 1)[1]
BOT_ID = "1234567890123456789"
FAST = {"default": RateBudget(rate=200, burst=20)}
#: Discord's wire behaviour, no pacing worth waiting for (the emulator's buckets are made loose to match).
FAST_LIMITS = {"budgets": FAST, "edit_interval": 0.0}
SETTINGS = StreamSettings(enabled=True, edit_interval=0.02, min_tokens=2)
CURSOR = " ▌"
#: What a secret reads as in a log line or an error (the core's mask).
MASK = "<secret>"
#: A section pointing nowhere (port 9, discard: nothing listens), for what needs no Discord.
OFFLINE = {"token": TOKEN, "api_base_url": "http://127.0.0.1:9/api/v10", "gateway_url": "ws://127.0.0.1:9/ws"}


def section(api: Any, **keys: Any) -> dict[str, Any]:
    """``platforms.discord`` pointing at the emulator ``api``, plus ``keys``."""
    return {"token": TOKEN, "api_base_url": api.api_base_url, "gateway_url": api.gateway_url, **keys}


def plugin_for_tests(**kw: Any) -> DiscordPlugin:
    """The plugin with Discord's limits and a short wait for servers before READY."""
    kw.setdefault("guild_ready_timeout", 0.1)
    return DiscordPlugin(**kw)


def runner_for(api: Any, *, fast: bool = True, start: bool = False, settings: dict[str, Any] | None = None,
               **kw: Any) -> PlatformRunner:
    """A client pointed at the emulator, built as the gateway builds it (``async with`` it).

    ``fast``: no pacing (the emulator's buckets must be loose); otherwise Discord's own budgets.
    ``start``: connect the gateway websocket too (what it receives lands in ``runner.received``);
    without, it only sends (logged in on the first call), as ``hermes-gateway ask`` runs it.
    """
    return PlatformRunner(plugin_for_tests(**kw), settings=settings if settings is not None else section(api),
                          limits=FAST_LIMITS if fast else None, start=start)


def gateway_config(api: Any, *, tokens_per_second: float = 300, **discord: Any) -> dict[str, Any]:
    """A gateway answering on the emulator with the demo model, streaming on."""
    return {
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"discord": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}},
        "platforms": {"discord": {"enabled": True, **section(api), **discord}},
    }


def gateway_for(api: Any, *, fast: bool = True, plugin: Any = None, config: dict[str, Any] | None = None,
                **discord: Any) -> TestGateway:
    """The whole gateway with this plugin on the emulator (``async with`` it; ``.client("discord")`` is its client)."""
    return TestGateway(config or gateway_config(api, **discord), plugin or plugin_for_tests(),
                       limits=FAST_LIMITS if fast else None, shutdown_grace=0.5)
