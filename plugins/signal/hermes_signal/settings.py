"""The ``platforms.signal`` section of config.yaml, declared as :class:`SignalSettings`.

The core parses the section into it (types, unknown keys, ``${ENV}``) and
masks the one secret everywhere; what the types cannot say (the number's
form, the URL's) is checked in ``__post_init__``, one line naming the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_gateway import SettingsError, secret, setting

DEFAULT_URL = "http://127.0.0.1:8080"


@dataclass(frozen=True, kw_only=True)
class SignalSettings:
    """What the plugin needs to reach one ``signal-cli -a NUMBER daemon --http`` and speak as that number."""

    account: str                                  # the bot's own number, +E.164 (signal-cli's -a)
    url: str = DEFAULT_URL                        # the daemon's --http address
    #: A bearer token for a proxy in front of the daemon (signal-cli itself has no authentication).
    token: str | None = secret(None)
    #: Stream replies by editing the first message (Signal's edits, at most 10 per message); false: one send.
    edits: bool = True
    timeout: float = setting(30.0, minimum=1, maximum=300)   # seconds one JSON-RPC call may take

    def __post_init__(self) -> None:
        account = str(self.account).strip()
        if not re.fullmatch(r"\+[1-9]\d{5,14}", account):
            raise SettingsError("account", 'the bot\'s registered number in international form, e.g. '
                                           'account: "+4915112345678" (the -a of signal-cli daemon)')
        object.__setattr__(self, "account", account)
        if not re.match(r"^https?://[^/\s]+/?$", self.url):
            raise SettingsError("url", f"the daemon's http address, e.g. url: {DEFAULT_URL} (signal-cli daemon "
                                       "--http 127.0.0.1:8080), without a path")
        object.__setattr__(self, "url", self.url.rstrip("/"))
        if self.token is not None and (not self.token.strip() or any(c.isspace() for c in self.token)):
            raise SettingsError("token", "one word, no spaces (not shown: it is a secret)")
