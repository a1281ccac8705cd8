"""hermes-teams: Microsoft Teams for hermes-gateway, on the Teams SDK 2.x (``microsoft-teams-api``/``-apps``).

    platforms:
      teams:
        enabled: true
        app_id: "${TEAMS_APP_ID}"
        app_password: "${TEAMS_APP_PASSWORD}"
        # tenant_id: …            single-tenant bots
        # path: /api/messages     the messaging endpoint on the gateway's listener

Tests run it with ``hermes_gateway.testing`` and
:class:`~hermes_teams.emulator.TeamsEmulator` as Teams.
"""

from hermes_gateway import protect_secret_shape

from .client import TeamsClient
from .plugin import BUDGETS, MAX_MESSAGE_LENGTH, NAME, PLATFORM, TeamsPlugin
from .settings import TeamsSettings

#: A JWT (a bearer token, inbound or outbound) never reaches a log line, configured or not.
protect_secret_shape(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")

#: The object the ``hermes_gateway`` entry point registers.
plugin = TeamsPlugin()

__all__ = ["BUDGETS", "MAX_MESSAGE_LENGTH", "NAME", "PLATFORM", "TeamsClient", "TeamsPlugin", "TeamsSettings",
           "plugin"]
