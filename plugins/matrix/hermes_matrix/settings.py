"""The ``platforms.matrix`` section of config.yaml, declared as :class:`MatrixSettings`.

The core parses the section into it (types, ``${ENV}``, unknown keys with a
did-you-mean, one line naming the file and the key) and masks the two
secrets, ``access_token`` and ``password``, everywhere. What the types cannot
say is checked in ``__post_init__``: the homeserver's URL, the shape of the
user id, and that exactly one way to log in is given. Each check raises
:class:`~hermes_gateway.SettingsError`, which never quotes a secret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_gateway import SettingsError, secret, setting

#: ``@localpart:server.name`` (the server name may carry a port).
USER_ID = re.compile(r"^@[^:\s]+:[^\s]+$")


@dataclass(frozen=True)
class MatrixSettings:
    """What the plugin needs to reach one Matrix account on one homeserver.

    ``homeserver``: the client-server API's base URL (``https://matrix.example.org``).
    ``user_id``: the bot's full id (``@bot:example.org``). Log in with
    ``access_token`` (a token of an existing device) or ``password`` (the
    plugin logs in as device ``device_id`` at start, so restarts reuse one
    device). ``sync_timeout``: seconds a long-poll ``/sync`` waits for news.
    ``timeline_limit``: events per room in one sync; more since the last
    position are fetched with ``/messages`` (nothing is skipped).
    ``request_timeout``: seconds any other call may take.
    """

    homeserver: str = setting(hint='the homeserver\'s URL, e.g. homeserver: "https://matrix.example.org"')
    user_id: str = setting(hint='the bot\'s Matrix id, e.g. user_id: "@hermes:example.org"')
    access_token: str | None = secret(None)
    password: str | None = secret(None)
    device_id: str = "HERMESGATEWAY"
    sync_timeout: float = setting(30.0, minimum=0, maximum=300)
    timeline_limit: int = setting(50, minimum=1, maximum=1000)
    request_timeout: float = setting(60.0, minimum=0.1, maximum=3600)

    def __post_init__(self) -> None:
        homeserver = self.homeserver.strip().rstrip("/")
        if not re.match(r"^https?://[^/\s]+", homeserver):
            raise SettingsError("homeserver", 'an http(s) URL of the homeserver, e.g. "https://matrix.example.org"')
        object.__setattr__(self, "homeserver", homeserver)
        user_id = self.user_id.strip()
        if not USER_ID.match(user_id):
            raise SettingsError("user_id", f'a full Matrix id such as "@hermes:example.org", got {user_id!r}')
        object.__setattr__(self, "user_id", user_id)
        token = (self.access_token or "").strip() or None
        password = self.password or None
        if (token is None) == (password is None):
            raise SettingsError("access_token", "either access_token or password (one of them, not both; "
                                                "not shown: they are secrets)")
        if token is not None and re.search(r"\s", token):
            raise SettingsError("access_token", "one word (not shown: it is a secret)")
        object.__setattr__(self, "access_token", token)
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", self.device_id):
            raise SettingsError("device_id", "letters, digits, '_', '.' or '-' (at most 64)")

    @property
    def server_name(self) -> str:
        """The part of ``user_id`` after the first colon (``example.org``)."""
        return self.user_id.split(":", 1)[1]
