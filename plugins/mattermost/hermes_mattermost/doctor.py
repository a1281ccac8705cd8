"""``hermes-gateway doctor`` for Mattermost: the token works (``GET /users/me``) and the server's post size."""

from __future__ import annotations

from .api import Api
from .errors import MattermostError
from .settings import MattermostSettings


async def doctor(settings: MattermostSettings) -> list[tuple[bool, str]]:
    api = Api(settings)
    try:
        me = await api.call("GET", "/users/me", "users/me")
        lines = [(True, f"token accepted (@{me.get('username')}{' (a bot)' if me.get('is_bot') else ''})")]
        config = await api.call("GET", "/config/client", "config/client", params={"format": "old"})
        lines.append((True, f"the server takes posts of up to {config.get('MaxPostSize', '?')} runes"))
        if not settings.actions_url:
            lines.append((True, "no actions_url: approvals are asked as typed commands (/allow, /deny)"))
        return lines
    except MattermostError as exc:
        if exc.status == 401:
            return [(False, "token: the server refused it: create a bot token under Integrations > Bot Accounts")]
        return [(False, str(exc))]
    except Exception as exc:
        return [(False, f"cannot reach Mattermost at {settings.url} ({exc}): check platforms.mattermost.url")]
    finally:
        await api.close()
