"""hermes-mattermost: the Mattermost platform for hermes-gateway (REST API v4 on aiohttp, and its websocket).

Install it next to hermes-gateway and enable it in config.yaml::

    platforms:
      mattermost:
        enabled: true
        url: https://chat.example.org
        token: "${MATTERMOST_TOKEN}"
        actions_url: http://gateway.internal:8080   # optional: approval buttons

The entry point (group ``hermes_gateway``) registers :data:`plugin`, which
declares the platform (:data:`~.plugin.PLATFORM`). Tests run it with
``hermes_gateway.testing`` against :class:`~hermes_mattermost.emulator.MattermostEmulator`.
"""

from .client import MattermostClient
from .plugin import BOT_BUDGET, BUDGETS, NAME, PLATFORM, MattermostPlugin
from .settings import MattermostSettings

#: The object the ``hermes_gateway`` entry point registers.
plugin = MattermostPlugin()

__all__ = ["BOT_BUDGET", "BUDGETS", "NAME", "PLATFORM", "MattermostClient", "MattermostPlugin",
           "MattermostSettings", "plugin"]
