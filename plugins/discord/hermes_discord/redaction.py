"""Keep the bot token out of logs and error messages: the part the core cannot know.

The token travels in every REST call's ``Authorization`` header and in the
gateway's IDENTIFY; discord.py logs request bodies and gateway payloads at
DEBUG, and an error text or a traceback could quote it. The core already
masks the whole token in every log record (``token`` is a secret field of
:class:`~.settings.DiscordSettings`); what only Discord's token format
tells is that its last part, the HMAC, is a secret on its own and may be
quoted alone. :func:`scrub` cleans text we put into exceptions.
"""

from __future__ import annotations

from hermes_gateway import protect_secret, scrub_secrets

__all__ = ["protect_token_parts", "scrub"]

#: Text put into an exception: every registered secret masked (the token, its last part, any other).
scrub = scrub_secrets


def protect_token_parts(token: str) -> None:
    """Register the token's secret last part (masked even when quoted without the rest)."""
    secret_part = token.rsplit(".", 1)[-1]
    if len(secret_part) >= 16:
        protect_secret(secret_part)
