"""Helpers of the dashboard's tests: a real gateway on the Telegram Bot API emulator, its state read as JSON.

A module with a unique name (not a conftest), imported by the dashboard's unit and browser tests.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.web.dashboard_state import snapshot
from hermes_gateway.testing.platforms import with_limits
from hermes_gateway import RateBudget

TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
API_KEY = "sk-dashboard-test-9f8e7d6c5b4a"
#: Telegram's wire behaviour without pacing worth waiting for.
FAST_LIMITS = {"budgets": {"default": RateBudget(rate=200, burst=20)}, "edit_interval": 0.0}


def telegram_config(base_url: str, *, tokens_per_second: float = 300, **sections: Any) -> dict[str, Any]:
    """A config.yaml mapping: the demo model, Telegram on the emulator, a secret in the model's api_key."""
    data: dict[str, Any] = {
        "model": {"demo": {"tokens_per_second": tokens_per_second}, "api_key": API_KEY},
        "streaming": {"telegram": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}},
        "platforms": {"telegram": {"enabled": True, "token": TOKEN, "base_url": base_url, "poll_timeout": 1}},
        "store": {"path": ":memory:"},
        "api_server": {"host": "127.0.0.1", "port": 0, "enabled": False},
    }
    if "web" not in sections:
        data["web"] = {"enabled": True}  # the console on this loopback listener, open to this machine
    for name, value in sections.items():
        data[name] = {**data.get(name, {}), **value} if isinstance(value, dict) else value
    return data


#: The console as ``hermes-gateway run`` loads it (a built-in plugin).
CONSOLE = ("hermes_gateway._core.web.plugin",)


def telegram_gateway(base_url: str, *, builtins: tuple[str, ...] = (), shutdown_grace: float = 0.5,
                     **sections: Any) -> Gateway:
    """A real gateway (the core's ``Gateway``) with the Telegram plugin on the emulator at ``base_url``."""
    import hermes_telegram

    plugins = make_plugins(builtins=("hermes_gateway._core.builtin.tools", *builtins), load_entry_points=False,
                           extra=[with_limits(hermes_telegram.plugin, FAST_LIMITS)])
    config = parse_config(telegram_config(base_url, **sections), source="(test config)", env={})
    return Gateway(config, plugins, shutdown_grace=shutdown_grace)


def platform_gateway(plugin: Any, name: str, section: dict[str, Any], *, limits: dict[str, Any] | None = None,
                     **sections: Any) -> Gateway:
    """A real gateway with one platform plugin (on its emulator, ``section`` being ``platforms.<name>``)."""
    plugins = make_plugins(builtins=("hermes_gateway._core.builtin.tools",), load_entry_points=False,
                           extra=[with_limits(plugin, limits or FAST_LIMITS)])
    data: dict[str, Any] = {
        "model": {"demo": {"tokens_per_second": 300}},
        "platforms": {name: {"enabled": True, **section}},
        "store": {"path": ":memory:"},
        "api_server": {"host": "127.0.0.1", "port": 0, "enabled": False},
        **sections,
    }
    return Gateway(parse_config(data, source="(test config)", env={}), plugins, shutdown_grace=0.5)


async def state_of(gateway: Gateway) -> dict[str, Any]:
    """The snapshot, through JSON as the browser gets it."""
    return json.loads(json.dumps(await snapshot(gateway.console_sources)))


def platform(state: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [p for p in state["platforms"] if p["name"] == name]
    return found


async def until_state(gateway: Gateway, name: str, state: str, timeout: float = 20.0) -> dict[str, Any]:
    """The platform's row of the snapshot once its state is ``state``: a client reports its connection from
    its own loop (a poll answered, a websocket said hello), shortly after start-up or a fault."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        row = platform(await state_of(gateway), name)
        if row["state"] == state:
            return row
        if loop.time() > deadline:
            raise AssertionError(f"{name} still not {state} after {timeout}s: {row!r}")
        await asyncio.sleep(0.02)
