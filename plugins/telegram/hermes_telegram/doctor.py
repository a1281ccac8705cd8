"""``hermes-gateway doctor`` for Telegram: the token works (``getMe``), the webhook is https and set as configured.

The core calls :func:`doctor` (``Platform.doctor``) with the parsed
settings and prints each ``(ok, text)`` as one line, secrets masked; a
failing text says what to fix.
"""

from __future__ import annotations

from typing import Any

from .settings import TelegramSettings


async def doctor(settings: TelegramSettings) -> list[tuple[bool, str]]:
    from telegram import Bot
    from telegram import error as tg

    bot = Bot(settings.token, base_url=settings.base_url, base_file_url=settings.file_url)
    try:
        await bot.initialize()  # getMe
    except tg.InvalidToken:
        return [(False, "token: Telegram refused it (getMe answered 401 Unauthorized): copy the token again from "
                        "@BotFather (/mybots > API Token) into platforms.telegram.token")]
    except tg.TelegramError as exc:
        return [(False, f"cannot reach the Bot API at {settings.base_url} ({type(exc).__name__}: {exc}): "
                        "check the network, a proxy, or platforms.telegram.base_url")]
    try:
        lines = [(True, f"token accepted (getMe: @{bot.username})")]
        if settings.webhook:
            lines += await _webhook(bot, settings)
        return lines
    finally:
        await bot.shutdown()


async def _webhook(bot: Any, settings: TelegramSettings) -> list[tuple[bool, str]]:
    url = settings.webhook_url or ""
    if not url.startswith("https://"):
        return [(False, f"webhook_url {url} is not https: Telegram posts only to https URLs (put the gateway "
                        "behind a TLS proxy, docs/deploy.md)")]
    info = await bot.get_webhook_info()
    if info.url == url:
        error = f"; Telegram's last delivery error: {info.last_error_message}" if info.last_error_message else ""
        return [(not error, f"webhook set to {url}{error or ''}" + (" (is the proxy forwarding to "
                                                                   "/webhooks/telegram?)" if error else ""))]
    if not info.url:
        return [(True, f"webhook not set yet: `hermes-gateway run` sets it to {url} at start")]
    return [(False, f"Telegram posts to {info.url}, not webhook_url {url}: another deployment uses this token, "
                    "or run has not started since webhook_url changed")]
