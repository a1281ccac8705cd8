"""What a PostgreSQL ``store.url`` says, read without psycopg (which the SQLite default never imports)."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

URL_SCHEMES = ("postgresql", "postgres")


def is_postgres_url(url: str | None) -> bool:
    """Whether ``url`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return bool(url) and urlsplit(str(url)).scheme.lower() in URL_SCHEMES


def describe(url: str) -> str:
    """``host:port/dbname`` of a libpq URL, for messages: never the user's password.

    Parsed without psycopg (it may be missing); libpq's defaults fill the gaps
    (the local socket, port 5432, a database named like the user).
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "(an unreadable URL)"
    query = dict(parse_qsl(parts.query))
    host = host or query.get("host", "") or "localhost"
    port_text = str(port or query.get("port", "") or "5432")
    dbname = unquote(parts.path.lstrip("/")) or query.get("dbname", "") or parts.username or query.get("user", "") or "?"
    return f"{host}:{port_text}/{dbname}"


def url_passwords(url: str) -> tuple[str, ...]:
    """The passwords a libpq URL carries (``user:PASSWORD@``, ``?password=``), to keep out of every log line.

    Not the user name: it is no secret, and masking ``postgres`` everywhere would garble every message.
    """
    try:
        parts = urlsplit(url)
        found = [parts.password or ""]
    except ValueError:
        return ()
    found += [value for name, value in parse_qsl(parts.query) if name.lower() in ("password", "sslpassword")]
    return tuple(unquote(p) for p in found if p)
