"""hermes-telegram: the Telegram platform for hermes-gateway.

Install it next to hermes-gateway and enable it in config.yaml::

    platforms:
      telegram: {enabled: true, token: "${TELEGRAM_TOKEN}"}

The entry point (group ``hermes_gateway``) registers :data:`plugin`, one
:class:`TelegramPlugin` configured from that section at start-up. Tests
make their own instances and point them at :class:`BotApiEmulator`.
"""

from .plugin import BUDGETS, MAX_MESSAGE_UNITS, NAME, TelegramPlugin
from .settings import TelegramSettings, parse_settings

#: The instance the ``hermes_gateway`` entry point registers.
plugin = TelegramPlugin()

__all__ = ["BUDGETS", "MAX_MESSAGE_UNITS", "NAME", "TelegramPlugin", "TelegramSettings", "parse_settings", "plugin"]
