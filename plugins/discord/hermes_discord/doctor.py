"""``hermes-gateway doctor`` for Discord: the bot token works (``GET /users/@me``).

The core calls :func:`doctor` (``Platform.doctor``) with the parsed settings
and prints each ``(ok, text)`` as one line, secrets masked.
"""

from __future__ import annotations

import aiohttp

from .settings import DiscordSettings


async def doctor(settings: DiscordSettings) -> list[tuple[bool, str]]:
    url = settings.api_base_url.rstrip("/") + "/users/@me"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            async with session.get(url, headers={"Authorization": f"Bot {settings.token}"}) as response:
                status = response.status
                body = await response.json(content_type=None) if status == 200 else None
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        return [(False, f"cannot reach Discord at {settings.api_base_url} ({type(exc).__name__}: {exc}): check the "
                        "network, a proxy, or platforms.discord.api_base_url")]
    if status == 401:
        return [(False, "token: Discord refused it (users/@me answered 401 Unauthorized): reset and copy it in the "
                        "developer portal (Bot > Reset Token) into platforms.discord.token")]
    if status != 200 or not isinstance(body, dict):
        return [(False, f"token: users/@me answered HTTP {status}: check platforms.discord.api_base_url")]
    return [(True, f"token accepted (users/@me: {body.get('username', '?')})")]
