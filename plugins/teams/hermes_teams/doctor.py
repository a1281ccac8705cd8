"""``hermes-gateway doctor`` for Teams: the token service accepts the bot's credentials, and the signing keys load.

The core calls :func:`doctor` with the parsed settings and prints each
``(ok, text)`` as one line, secrets masked.
"""

from __future__ import annotations

import aiohttp

from hermes_gateway import DeliveryError, RateLimited

from .auth import InboundAuth, Unauthorized
from .settings import TeamsSettings
from .token import BotToken


async def doctor(settings: TeamsSettings) -> list[tuple[bool, str]]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as session:
        async def shared() -> aiohttp.ClientSession:
            return session

        lines: list[tuple[bool, str]] = []
        try:
            await BotToken(settings.token_url, settings.app_id, settings.app_password, settings.scope, shared).get()
        except (DeliveryError, RateLimited) as exc:
            lines.append((False, f"app_id/app_password: {exc}"))
        else:
            lines.append((True, f"the token service accepts app {settings.app_id}"))
        auth = InboundAuth(settings.app_id, settings.openid_metadata_url, settings.issuer, shared)
        try:
            await auth._keys_for("")
        except Unauthorized:
            lines.append((False, f"cannot load the Bot Framework's signing keys from {settings.openid_metadata_url}: "
                                 "inbound activities would all be refused (check the network or openid_metadata_url)"))
        else:
            lines.append((True, f"signing keys loaded; messaging endpoint: POST {settings.path}"))
        return lines
