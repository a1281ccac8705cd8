"""hermes-discord: the Discord platform for hermes-gateway.

Install it next to hermes-gateway and enable it in config.yaml::

    platforms:
      discord: {enabled: true, token: "${DISCORD_TOKEN}"}

The entry point (group ``hermes_gateway``) registers :data:`plugin`, one
:class:`DiscordPlugin` configured from that section at start-up. Tests
make their own instances and point them at :class:`~hermes_discord.emulator.DiscordEmulator`.
"""

from .plugin import BOT_BUDGET, BUDGETS, MAX_MESSAGE_UNITS, DiscordPlugin
from .receiving import NAME
from .settings import DiscordSettings, parse_settings

#: The instance the ``hermes_gateway`` entry point registers.
plugin = DiscordPlugin()

__all__ = ["BOT_BUDGET", "BUDGETS", "MAX_MESSAGE_UNITS", "NAME", "DiscordPlugin", "DiscordSettings",
           "parse_settings", "plugin"]
