"""hermes-telegram: the Telegram platform for hermes-gateway.

Install it next to hermes-gateway and enable it in config.yaml::

    platforms:
      telegram: {enabled: true, token: "${TELEGRAM_TOKEN}"}

The entry point (group ``hermes_gateway``) registers :data:`plugin`, whose
one hook registers the platform; the gateway parses ``platforms.telegram``
into :class:`TelegramSettings` and builds one :class:`TelegramClient` per
run. Tests run it the same way (``hermes_gateway.testing.PlatformRunner``)
against :class:`~hermes_telegram.emulator.BotApiEmulator`.
"""

from .client import NAME, TelegramClient
from .plugin import BUDGETS, MAX_MESSAGE_UNITS, PLATFORM, TelegramPlugin
from .settings import TelegramSettings

#: The instance the ``hermes_gateway`` entry point registers.
plugin = TelegramPlugin()

__all__ = ["BUDGETS", "MAX_MESSAGE_UNITS", "NAME", "PLATFORM", "TelegramClient", "TelegramPlugin",
           "TelegramSettings", "plugin"]
