"""Keep the bot token out of logs and error messages: the part the core cannot know.

The Bot API puts the token in every URL (``/bot<token>/sendMessage``), so
httpx logs it at INFO on every request, python-telegram-bot logs it at
DEBUG when a ``Bot`` is built, and its ``InvalidToken`` error quotes it
(capitalised, so in lower case). The core masks every ``secret()`` field of
:class:`~.settings.TelegramSettings` (the token, the webhook secret) in
every log record of the process, whatever the case. What it cannot know is
that the token's half after the colon is a secret on its own (some errors
quote it alone): :func:`protect_token` registers that half. :func:`scrub`
is the core's scrubber, for text we put into exceptions.
"""

from __future__ import annotations

from hermes_gateway import protect_secret, scrub_secrets as scrub

__all__ = ["MASK", "protect_token", "scrub"]

#: What the core's scrubber shows in place of a secret.
MASK = "<secret>"


def protect_token(token: str) -> None:
    """Register a bot token's secret half (the whole token is a ``secret()`` field, registered by the core)."""
    _, _, secret_half = token.partition(":")
    protect_secret(token, secret_half or None)
