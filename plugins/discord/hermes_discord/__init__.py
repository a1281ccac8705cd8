"""hermes-discord: the Discord platform for hermes-gateway.

Install it next to hermes-gateway and enable it in config.yaml::

    platforms:
      discord: {enabled: true, token: "${DISCORD_TOKEN}"}

The entry point (group ``hermes_gateway``) registers :data:`plugin`, whose
one hook declares the ``discord`` platform: Discord's limits, the
settings (:class:`DiscordSettings`, parsed by the core) and the factory of
:class:`DiscordClient`, built fresh for every gateway. Tests run it through
``hermes_gateway.testing`` against :class:`~hermes_discord.emulator.DiscordEmulator`.
"""

from .client import DiscordClient, Tuning
from .plugin import BOT_BUDGET, BUDGETS, MAX_MESSAGE_UNITS, DiscordPlugin
from .receiving import NAME
from .settings import DiscordSettings

#: The instance the ``hermes_gateway`` entry point registers.
plugin = DiscordPlugin()

__all__ = ["BOT_BUDGET", "BUDGETS", "MAX_MESSAGE_UNITS", "NAME", "DiscordClient", "DiscordPlugin",
           "DiscordSettings", "Tuning", "plugin"]
