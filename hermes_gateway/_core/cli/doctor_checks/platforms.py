"""Each enabled platform's settings parse and, through its plugin's ``Platform.doctor``, its credentials work.

The core knows no platform's API: a plugin that declares ``doctor`` (the four
under plugins/ do: Telegram ``getMe``, Discord ``users/@me``, Slack
``auth.test``, WhatsApp the phone number) checks its own; a third-party
plugin takes part the same way, and one without it gets a line saying only
its settings were checked.
"""

from __future__ import annotations

import asyncio

from ...config import Config
from ...errors import ConfigError
from ...platform_clients import settings_for
from ...plugins import Plugins, RegisteredPlatform
from . import Line


class PlatformCheck:
    """A check (``await check(config, timeout)``) over every enabled platform, run concurrently."""

    def __init__(self, plugins: Plugins) -> None:
        self.plugins = plugins

    async def __call__(self, config: Config, timeout: float) -> list[Line]:
        registered = self.plugins.platforms()
        names = [n for n in config.platforms if n in registered and config.platform_enabled(n)]
        found = await asyncio.gather(*(self._one(config, name, registered[name], timeout) for name in names))
        return [line for lines in found for line in lines]

    async def _one(self, config: Config, name: str, registered: RegisteredPlatform, timeout: float) -> list[Line]:
        key = f"platforms.{name}"
        platform = registered.platform
        try:
            settings = settings_for(platform, config.platforms.get(name), source=config.source)
        except ConfigError as exc:
            return [Line(False, key, str(exc))]
        if platform.doctor is None:
            return [Line(True, key, f"settings parse (plugin {registered.plugin_name} has no doctor "
                                    "check of its credentials)")]
        try:
            async with asyncio.timeout(timeout):
                results = list(await platform.doctor(settings))
        except TimeoutError:
            return [Line(False, key, f"{name}'s API gave no answer within {timeout:g} s: is it reachable from here "
                                     "(proxy, firewall, base_url)?")]
        except Exception as exc:
            return [Line(False, key, f"the plugin's check failed: {type(exc).__name__}: {exc}")]
        if not results:
            return [Line(True, key, "checked")]
        return [Line(bool(ok), key, str(text)) for ok, text in results]
