"""hermes-whatsapp: the WhatsApp (Cloud API) platform for hermes-gateway.

Install it next to hermes-gateway and enable it in config.yaml::

    platforms:
      whatsapp:
        enabled: true
        access_token: "${WHATSAPP_TOKEN}"
        phone_number_id: "1234567890"
        app_secret: "${WHATSAPP_APP_SECRET}"
        verify_token: "${WHATSAPP_VERIFY_TOKEN}"

The entry point (group ``hermes_gateway``) registers :data:`plugin`, which
declares the platform (:data:`PLATFORM`); the gateway builds one
:class:`WhatsAppClient` from that section each time it starts. Tests build
theirs with :class:`hermes_gateway.testing.PlatformRunner`, pointed at
:class:`~hermes_whatsapp.emulator.GraphApiEmulator`.
"""

from .plugin import BOT_BUDGET, BUDGETS, MAX_MESSAGE_CHARS, NAME, PLATFORM, ROUTE, WhatsAppClient, WhatsAppPlugin
from .settings import WhatsAppSettings

#: The object the ``hermes_gateway`` entry point registers.
plugin = WhatsAppPlugin()

__all__ = ["BOT_BUDGET", "BUDGETS", "MAX_MESSAGE_CHARS", "NAME", "PLATFORM", "ROUTE", "WhatsAppClient",
           "WhatsAppPlugin", "WhatsAppSettings", "plugin"]
