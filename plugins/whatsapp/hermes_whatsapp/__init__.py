"""hermes-whatsapp: the WhatsApp (Cloud API) platform for hermes-gateway.

Install it next to hermes-gateway and enable it in config.yaml::

    platforms:
      whatsapp:
        enabled: true
        access_token: "${WHATSAPP_TOKEN}"
        phone_number_id: "1234567890"
        app_secret: "${WHATSAPP_APP_SECRET}"
        verify_token: "${WHATSAPP_VERIFY_TOKEN}"

The entry point (group ``hermes_gateway``) registers :data:`plugin`, one
:class:`WhatsAppPlugin` configured from that section at start-up. Tests
make their own instances and point them at
:class:`~hermes_whatsapp.emulator.GraphApiEmulator`.
"""

from .plugin import BOT_BUDGET, BUDGETS, MAX_MESSAGE_CHARS, NAME, ROUTE, WhatsAppPlugin
from .settings import WhatsAppSettings, parse_settings

#: The instance the ``hermes_gateway`` entry point registers.
plugin = WhatsAppPlugin()

__all__ = ["BOT_BUDGET", "BUDGETS", "MAX_MESSAGE_CHARS", "NAME", "ROUTE", "WhatsAppPlugin", "WhatsAppSettings",
           "parse_settings", "plugin"]
