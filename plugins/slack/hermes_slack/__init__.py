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

The entry point (group ``hermes_gateway``) registers :data:`plugin`, one
:class:`SlackPlugin` configured from that section at start-up. Tests make
their own instances and point them at :class:`~hermes_slack.emulator.SlackEmulator`.
"""

from .plugin import BOT_BUDGET, BUDGETS, EVENTS_PATH, MAX_MESSAGE_CHARS, NAME, SlackPlugin
from .settings import SlackSettings, parse_settings

#: The instance the ``hermes_gateway`` entry point registers.
plugin = SlackPlugin()

__all__ = ["BOT_BUDGET", "BUDGETS", "EVENTS_PATH", "MAX_MESSAGE_CHARS", "NAME", "SlackPlugin", "SlackSettings",
           "parse_settings", "plugin"]
