"""The ``platforms.email`` section of config.yaml, declared as :class:`EmailSettings`.

The core parses it (types, unknown keys, ``${ENV}``) and masks the
password everywhere; what the types cannot say — the two URLs' schemes and
ports, the address's shape — is checked here, each mistake one line
naming the key and what is expected (never the password).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hermes_gateway import SettingsError, secret, setting

#: scheme -> (default port, implicit TLS)
IMAP_SCHEMES = {"imaps": (993, True), "imap": (143, False)}
SMTP_SCHEMES = {"smtps": (465, True), "smtp": (587, False)}
ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$|^[^@\s<>]+@localhost$")


@dataclass(frozen=True)
class Endpoint:
    """A parsed ``imap_url``/``smtp_url``: where to connect and whether TLS starts at once."""

    host: str
    port: int
    tls: bool


def parse_endpoint(key: str, url: str, schemes: dict[str, tuple[int, bool]], example: str) -> Endpoint:
    """``imaps://host:993`` and kin -> :class:`Endpoint`; anything else one line naming ``key``."""
    expected = f"a URL like {example} (scheme {' or '.join(s + '://' for s in schemes)}, a host, an optional port)"
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise SettingsError(key, expected) from None
    if parts.scheme not in schemes or not parts.hostname or parts.username or parts.password \
            or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise SettingsError(key, expected)
    default_port, tls = schemes[parts.scheme]
    return Endpoint(parts.hostname, port or default_port, tls)


@dataclass(frozen=True, kw_only=True)
class EmailSettings:
    """One mailbox the bot reads (IMAP) and the server it answers through (SMTP)."""

    imap_url: str                      # imaps://host:993 or imap://host:143
    smtp_url: str                      # smtps://host:465, smtp://host:587 (STARTTLS when offered), smtp://host:25
    username: str                      # the login of both servers
    password: str = secret()
    address: str                       # the bot's address: From of every reply
    folder: str = "INBOX"              # the folder read
    allowed_senders: list[str] = field(default_factory=list)  # addresses or @domain; empty: anyone
    tls_verify: bool = True            # false only for a test server's self-signed certificate
    replies_per_sender_per_hour: int = setting(10, minimum=1, maximum=10_000)  # loop guard
    max_message_bytes: int = setting(25_000_000, minimum=10_000, maximum=200_000_000)  # a bigger mail: one line
    poll_interval: float = setting(60.0, minimum=1, maximum=3600)  # seconds, where the server has no IDLE
    idle_timeout: float = setting(1500.0, minimum=5, maximum=1740)  # IDLE re-issued (RFC 2177: under 29 min)
    timeout: float = setting(30.0, minimum=1, maximum=300)  # seconds one IMAP/SMTP command may take

    def __post_init__(self) -> None:
        self.imap  # noqa: B018 (each property raises the key's one-line error)
        self.smtp  # noqa: B018
        if not ADDRESS.match(self.address.strip()):
            raise SettingsError("address", 'the bot\'s email address, e.g. "bot@example.org"')
        object.__setattr__(self, "address", self.address.strip())
        if not self.username.strip():
            raise SettingsError("username", "the login of the IMAP and SMTP servers")
        if not self.password or any(c in self.password for c in "\r\n"):
            raise SettingsError("password", "the login's password, one line (not shown: it is a secret)")
        if not self.folder.strip() or any(c in self.folder for c in '\r\n"'):
            raise SettingsError("folder", 'a folder name, e.g. "INBOX"')
        senders = []
        for entry in self.allowed_senders:
            value = str(entry).strip().lower()
            if not (ADDRESS.match(value) or re.fullmatch(r"@[^@\s<>]+", value)):
                raise SettingsError("allowed_senders", 'a list of addresses ("ann@example.org") or domains '
                                                       '("@example.org")')
            senders.append(value)
        object.__setattr__(self, "allowed_senders", senders)

    @property
    def imap(self) -> Endpoint:
        return parse_endpoint("imap_url", self.imap_url, IMAP_SCHEMES, "imaps://mail.example.org:993")

    @property
    def smtp(self) -> Endpoint:
        return parse_endpoint("smtp_url", self.smtp_url, SMTP_SCHEMES, "smtps://mail.example.org:465")

    @property
    def domain(self) -> str:
        return self.address.rsplit("@", 1)[1]

    def allows(self, sender: str) -> bool:
        """Whether ``allowed_senders`` lets ``sender`` (a bare lower-case address) talk to the bot."""
        if not self.allowed_senders:
            return True
        return sender in self.allowed_senders or "@" + sender.rsplit("@", 1)[-1] in self.allowed_senders
