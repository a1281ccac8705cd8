"""hermes-signal: Signal for hermes-gateway, through a signal-cli daemon's JSON-RPC interface.

Signal has no bot API: a bot is a registered (or linked) number run by
signal-cli. Start its daemon with HTTP on loopback and point the plugin at it::

    signal-cli -a +4915112345678 daemon --http 127.0.0.1:8080

    platforms:
      signal:
        enabled: true
        account: "+4915112345678"
        url: http://127.0.0.1:8080

The entry point (group ``hermes_gateway``) registers :data:`plugin`, which
declares the platform (:data:`~.plugin.PLATFORM`). Tests run it against
:class:`~hermes_signal.emulator.SignalDaemonEmulator`.
"""

from .client import SignalClient
from .plugin import BOT_BUDGET, BUDGETS, MAX_MESSAGE_BYTES, NAME, PLATFORM, SignalPlugin
from .settings import SignalSettings

#: The object the ``hermes_gateway`` entry point registers.
plugin = SignalPlugin()

__all__ = ["BOT_BUDGET", "BUDGETS", "MAX_MESSAGE_BYTES", "NAME", "PLATFORM", "SignalClient", "SignalPlugin",
           "SignalSettings", "plugin"]
