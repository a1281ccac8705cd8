"""``hermes-gateway doctor`` for Slack: the bot token works (``auth.test``); in Socket Mode the app token too
(``apps.connections.open``, which only hands out a WebSocket URL and opens nothing).

The core calls :func:`doctor` (``Platform.doctor``) with the parsed settings
and prints each ``(ok, text)`` as one line, secrets masked.
"""

from __future__ import annotations

from typing import Any

from .settings import SlackSettings

_FIXES = {
    "invalid_auth": "Slack refused it (invalid_auth): copy it again from the app's page",
    "not_authed": "Slack saw no token (not_authed): set it",
    "token_revoked": "it was revoked (token_revoked): reinstall the app and copy the new token",
    "account_inactive": "its app or user was deactivated (account_inactive): reinstall the app",
}


async def doctor(settings: SlackSettings) -> list[tuple[bool, str]]:
    """The checks; the SDK is imported here, not with the plugin (the plugin loads without it, and says why)."""
    try:
        from slack_sdk.errors import SlackApiError
        from slack_sdk.web.async_client import AsyncWebClient
    except ImportError:
        return [(False, "slack needs slack_sdk and slack-bolt: pip install hermes-slack")]
    try:
        answer = await AsyncWebClient(token=settings.bot_token, base_url=settings.api_base_url).auth_test()
    except SlackApiError as exc:
        return [(False, f"bot_token: {_why(exc)} (OAuth & Permissions > Bot User OAuth Token, xoxb-...)")]
    except Exception as exc:  # aiohttp's connection errors, a timeout
        return [(False, f"cannot reach Slack at {settings.api_base_url} ({type(exc).__name__}: {exc}): check the "
                        "network, a proxy, or platforms.slack.api_base_url")]
    lines = [(True, f"bot_token accepted (auth.test: @{answer.get('user')} in {answer.get('team')})")]
    if settings.mode == "socket":
        try:
            await AsyncWebClient(token=settings.app_token, base_url=settings.api_base_url).apps_connections_open(
                app_token=settings.app_token or "")
        except SlackApiError as exc:
            lines.append((False, f"app_token: {_why(exc)} (Basic Information > App-Level Tokens, xapp-..., with "
                                 "connections:write)"))
        else:
            lines.append((True, "app_token accepted (Socket Mode can connect)"))
    return lines


def _why(exc: Any) -> str:
    """The fix for a ``SlackApiError``'s ``error`` code."""
    error = str(exc.response.get("error", "")) if exc.response is not None else ""
    return _FIXES.get(error, f"Slack answered {error or exc}")
