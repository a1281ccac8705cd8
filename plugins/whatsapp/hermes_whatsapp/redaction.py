"""Keep the access token, the app secret and the verify token out of logs and error messages.

The token travels only in the ``Authorization`` header and the secret only
feeds the HMAC, so neither should ever be printed; but a Graph API error
text, a proxy's error page or a webhook's query string (the verify token
arrives in one) can echo them. The core (:mod:`hermes_gateway._core.secrets`)
rewrites every log record of the process without them, and :func:`scrub`
does the same for the text of the exceptions we raise.
"""

from __future__ import annotations

from hermes_gateway._core.secrets import MIN_LENGTH as MIN_SECRET
from hermes_gateway._core.secrets import protect as _protect
from hermes_gateway._core.secrets import scrub

__all__ = ["MASK", "MIN_SECRET", "protect", "scrub"]

MASK = "<whatsapp-secret>"


def protect(*secrets: str) -> None:
    """Register ``secrets`` (shorter than ``MIN_SECRET`` are not masked: they would mask ordinary words)."""
    _protect(*secrets, mask=MASK)
