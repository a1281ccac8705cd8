"""hermes-matrix: the Matrix platform for hermes-gateway, on mautrix.

Install it next to hermes-gateway and enable it in config.yaml::

    platforms:
      matrix:
        enabled: true
        homeserver: "https://matrix.example.org"
        user_id: "@hermes:example.org"
        access_token: "${MATRIX_ACCESS_TOKEN}"     # or password: "${MATRIX_PASSWORD}"

The entry point (group ``hermes_gateway``) registers :data:`plugin`, which
declares the platform (:data:`~.plugin.PLATFORM`): the core parses the
section into :class:`MatrixSettings` and builds one :class:`MatrixClient`
per gateway. The tests run it against a real Synapse homeserver.
"""

from .client import MatrixClient
from .plugin import BOT_BUDGET, BUDGETS, NAME, PLATFORM, MatrixPlugin
from .settings import MatrixSettings

#: The object the ``hermes_gateway`` entry point registers.
plugin = MatrixPlugin()

__all__ = ["BOT_BUDGET", "BUDGETS", "NAME", "PLATFORM", "MatrixClient", "MatrixPlugin", "MatrixSettings", "plugin"]
