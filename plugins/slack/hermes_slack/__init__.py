"""hermes-slack: the Slack platform for hermes-gateway, on slack-bolt (async) and slack_sdk.

Install it next to hermes-gateway and enable it in config.yaml::

    platforms:
      slack:
        enabled: true
        bot_token: "${SLACK_BOT_TOKEN}"        # xoxb-…
        mode: socket                           # socket (default) | http
        app_token: "${SLACK_APP_TOKEN}"        # xapp-…, socket mode
        signing_secret: "${SLACK_SIGNING_SECRET}"   # http mode
        native_streaming: auto                 # auto | off

The entry point (group ``hermes_gateway``) registers :data:`plugin`, which
declares the platform (:data:`~.plugin.PLATFORM`): the core parses the
section into :class:`SlackSettings` and builds one :class:`SlackClient` per
gateway. Tests run it with ``hermes_gateway.testing.PlatformRunner`` and
:class:`~hermes_slack.emulator.SlackEmulator` as Slack.
"""

from .client import SlackClient
from .plugin import BOT_BUDGET, BUDGETS, MAX_MESSAGE_CHARS, NAME, PLATFORM, SlackPlugin
from .receiving import EVENTS_PATH
from .settings import SlackSettings

#: The object the ``hermes_gateway`` entry point registers.
plugin = SlackPlugin()

__all__ = ["BOT_BUDGET", "BUDGETS", "EVENTS_PATH", "MAX_MESSAGE_CHARS", "NAME", "PLATFORM", "SlackClient",
           "SlackPlugin", "SlackSettings", "plugin"]
