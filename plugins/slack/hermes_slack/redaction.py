"""Mask anything shaped like a Slack token, known or not: what the core's scrubber cannot know by itself.

The core registers the values of ``bot_token``, ``app_token`` and
``signing_secret`` (secret fields of :class:`~.settings.SlackSettings`)
with its log scrubber when it parses the settings. A Slack token that is not
in the config (another app's, one quoted back in an SDK error, bolt's debug
dump of a request) is only recognisable by its shape, registered here once
when the plugin is imported. :func:`scrub` is the core's public scrubber,
for text the plugin puts into exceptions.
"""

from __future__ import annotations

from hermes_gateway import protect_secret_shape
from hermes_gateway import scrub_secrets as scrub

__all__ = ["TOKEN_SHAPE", "scrub"]

#: Anything shaped like a Slack token, known or not.
TOKEN_SHAPE = r"xox[abposr]-[0-9A-Za-z-]{8,}|xapp-[0-9A-Za-z-]{8,}"

protect_secret_shape(TOKEN_SHAPE)
