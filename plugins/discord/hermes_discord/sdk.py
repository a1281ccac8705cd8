"""discord.py, imported only when Discord is used: a gateway without it still starts, and says why.

Also keeps discord.py from warning at every start that voice is not
supported: a text bot never joins a voice channel.
"""

from __future__ import annotations

import logging
from typing import Any

from hermes_gateway import DeliveryError


def sdk() -> Any:
    """discord.py, or a DeliveryError that says how to install it."""
    try:
        import discord
    except ImportError:
        raise DeliveryError("discord needs discord.py: pip install hermes-discord", retryable=False) from None
    return discord


class _NoVoiceWarnings(logging.Filter):
    """Drops discord.py's "PyNaCl/davey is not installed, voice will NOT be supported": a text bot
    never joins a voice channel, and a warning at every start would only worry whoever reads the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "voice will NOT be supported" not in str(record.msg)


_VOICE_FILTER = _NoVoiceWarnings()


def quiet_voice_warnings() -> None:
    """Install the filter on discord.py's client logger (once; the filter holds no state)."""
    logger = logging.getLogger("discord.client")
    if _VOICE_FILTER not in logger.filters:
        logger.addFilter(_VOICE_FILTER)
