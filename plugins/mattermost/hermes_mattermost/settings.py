"""The ``platforms.mattermost`` section of config.yaml, declared as :class:`MattermostSettings`.

The core parses the section into it (types, ``${ENV}``, unknown keys with a
did-you-mean, one line naming the file and the key) and masks the secrets
everywhere: ``token`` and ``actions_secret`` are :func:`~hermes_gateway.secret`
fields. What the types cannot say is checked in ``__post_init__`` and raised
as :class:`~hermes_gateway.SettingsError`, which never quotes a secret. The
core's own keys (``enabled``, ``allowed_chats``, ``allowed_users``,
``require_mention``, ``home_chat``) are not fields: the core reads them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_gateway import SettingsError, secret, setting

#: A Mattermost id (users, channels, posts, files): 26 characters of [a-z0-9]. Tokens have the same shape.
_TOKEN = re.compile(r"^[A-Za-z0-9]{20,64}$")


@dataclass(frozen=True)
class MattermostSettings:
    """What the plugin needs to reach one Mattermost bot account.

    ``url``: the server's base URL (``https://chat.example.org``; ``/api/v4``
    is added). ``token``: the bot's access token (System Console >
    Integrations > Bot Accounts). ``actions_url``: the URL at which the
    Mattermost server reaches this gateway's listener (``http://gateway:8080``);
    without it approval questions are typed commands, not buttons.
    ``actions_secret``: what signs the buttons' context (default: derived
    from the token). ``thread_replies``: in a channel, answer a top-level
    post in a thread under it (default) or in the channel itself.
    ``api_timeout``: seconds one REST call may take. ``reconnect_delay``:
    the first wait before the websocket reconnects (doubling to 30 s).
    ``catch_up``: after a reconnect or restart, fetch the posts of the
    channels the bot was active in that arrived while it was away.
    """

    url: str
    token: str = secret(hint='the bot\'s access token, e.g. token: "${MATTERMOST_TOKEN}"')
    actions_url: str | None = None
    actions_secret: str | None = secret(None)
    thread_replies: bool = True
    api_timeout: float = setting(30.0, minimum=0.05, maximum=600)
    reconnect_delay: float = setting(1.0, minimum=0.01, maximum=60)
    catch_up: bool = True

    def __post_init__(self) -> None:
        token = self.token.strip()
        if token.lower().startswith("bearer ") or not _TOKEN.match(token):
            raise SettingsError("token", "the bot's access token (letters and digits, without 'Bearer '); "
                                         "the value given is not (not shown: it is a secret)")
        self._set("token", token)
        url = self.url.strip().rstrip("/")
        if url.endswith("/api/v4"):
            url = url[: -len("/api/v4")]
        if not re.match(r"^https?://[^/\s]+", url) or "@" in url.split("/")[2]:
            raise SettingsError("url", "the server's http(s) URL, e.g. https://chat.example.org")
        self._set("url", url)
        if self.actions_url is not None:
            actions = self.actions_url.strip().rstrip("/")
            if not re.match(r"^https?://[^/\s]+", actions):
                raise SettingsError("actions_url", "the http(s) URL at which Mattermost reaches this gateway's "
                                                   "listener, e.g. http://gateway:8080")
            self._set("actions_url", actions)
        if self.actions_secret is not None and len(self.actions_secret.strip()) < 16:
            raise SettingsError("actions_secret", "at least 16 characters (not shown: it is a secret)")

    @property
    def api(self) -> str:
        """The REST API's base: ``{url}/api/v4``."""
        return self.url + "/api/v4"

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)  # a frozen dataclass normalising its own fields
