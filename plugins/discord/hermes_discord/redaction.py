"""Keep the bot token out of logs and error messages, with the core's :mod:`hermes_gateway._core.secrets`.

The token travels in every REST call's ``Authorization`` header and in the
gateway's IDENTIFY; discord.py logs request bodies and gateway payloads at
DEBUG, and an error text or a traceback could quote it. The core rewrites
every log record of the process without it; :func:`scrub` cleans text we
put into exceptions.
"""

from __future__ import annotations

from hermes_gateway._core.secrets import protect as _protect
from hermes_gateway._core.secrets import scrub

__all__ = ["MASK", "protect", "scrub"]

MASK = "<discord-token>"


def protect(token: str) -> None:
    """Register ``token`` (and its secret last part, which may be quoted alone) as a secret."""
    secret_part = token.rsplit(".", 1)[-1]
    _protect(token, secret_part if len(secret_part) >= 16 else None, mask=MASK)
