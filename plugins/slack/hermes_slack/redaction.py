"""Keep Slack tokens and the signing secret out of logs and error messages, with :mod:`hermes_gateway._core.secrets`.

slack_sdk redacts the Authorization header in its own debug log, but error
texts, bolt's debug dumps of requests and our own messages could still
carry a token: the core rewrites every log record of the process without
any known secret (or anything shaped like a Slack token), and :func:`scrub`
does the same for text we put into exceptions.
"""

from __future__ import annotations

from hermes_gateway._core.secrets import protect as _protect
from hermes_gateway._core.secrets import protect_shape, scrub

__all__ = ["MASK", "TOKEN_SHAPE", "protect", "scrub"]

MASK = "<slack-secret>"
#: Anything shaped like a Slack token, known or not.
TOKEN_SHAPE = r"xox[abposr]-[0-9A-Za-z-]{8,}|xapp-[0-9A-Za-z-]{8,}"

protect_shape(TOKEN_SHAPE, MASK)


def protect(*secrets: str | None) -> None:
    """Register the bot token, the app token and the signing secret."""
    _protect(*secrets, mask=MASK)
