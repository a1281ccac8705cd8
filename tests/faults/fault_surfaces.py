"""The four platform emulators as the fault matrix drives them: a person's chat, its screen, two platform faults.

Each surface starts its emulator on 127.0.0.1, gives the config section that
points the installed plugin at it, and knows how to make the platform answer
5xx to the next call into the chat, or take longer than the plugin waits.
"""

from __future__ import annotations

import asyncio
from typing import Any

TELEGRAM_TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
DISCORD_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhXk2a.q9Zr3Yb7Lw1Nc5Vt8Pd2Sf6Gh0Jk4Mn7Qr1Tu3Wx"
WA = {"access_token": "EAAGm0PX4ZCpsBAKZCZBq3w0ZCkWx8ZAXfrE7tG1nMeV0tQ", "phone_number_id": "106540352242922",
      "app_secret": "3f1c9a0be5d7f24e6a8b0c1d2e3f4a5b", "verify_token": "hermes-verify-7Q2x"}


class Surface:
    name = ""
    chat = ""

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    def section(self) -> dict[str, Any]: return {}
    async def ready(self, gateway: Any) -> None: ...
    async def say(self, gateway: Any, text: str) -> None: ...
    def screen(self) -> list[str]: return []
    def fail_next_5xx(self) -> None: ...


class Telegram(Surface):
    name, chat = "telegram", "4242"

    async def open(self) -> None:
        from hermes_telegram.emulator import BotApiEmulator

        self.api = await BotApiEmulator(TELEGRAM_TOKEN).__aenter__()

    async def close(self) -> None:
        await self.api.__aexit__(None, None, None)

    def section(self) -> dict[str, Any]:
        return {"enabled": True, "token": TELEGRAM_TOKEN, "base_url": self.api.base_url, "poll_timeout": 1}

    async def say(self, gateway: Any, text: str) -> None:
        await self.api.push_message(int(self.chat), text)

    def screen(self) -> list[str]:
        return self.api.screen(self.chat)

    def fail_next_5xx(self) -> None:
        self.api.fail_next(self.chat, 502, "Bad Gateway")


class Discord(Surface):
    name = "discord"

    async def open(self) -> None:
        from hermes_discord.emulator import DiscordEmulator

        self.api = await DiscordEmulator(DISCORD_TOKEN, bucket_limit=10_000, global_limit=100_000).__aenter__()
        self.chat = self.api.dm()

    async def close(self) -> None:
        await self.api.__aexit__(None, None, None)

    def section(self) -> dict[str, Any]:
        return {"enabled": True, "token": DISCORD_TOKEN, "api_base_url": self.api.api_base_url,
                "gateway_url": self.api.gateway_url}

    async def ready(self, gateway: Any) -> None:
        await self.api.wait_connected()

    async def say(self, gateway: Any, text: str) -> None:
        await self.api.push_message(self.chat, text)

    def screen(self) -> list[str]:
        return self.api.screen(self.chat)

    def fail_next_5xx(self) -> None:
        self.api.fail_next(self.chat, 500, 0, "500: Internal Server Error")


class Slack(Surface):
    name, chat = "slack", "D0FAULTS"

    async def open(self) -> None:
        from hermes_slack.emulator import SlackEmulator

        self.api = await SlackEmulator().__aenter__()

    async def close(self) -> None:
        await self.api.__aexit__(None, None, None)

    def section(self) -> dict[str, Any]:
        from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN

        return {"enabled": True, "bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "api_base_url": self.api.base_url}

    async def ready(self, gateway: Any) -> None:
        await self.api.wait_connected(timeout=30)

    async def say(self, gateway: Any, text: str) -> None:
        await self.api.push_message(self.chat, text, kind="im")

    def screen(self) -> list[str]:
        return self.api.screen(self.chat)

    def fail_next_5xx(self) -> None:
        for method in ("chat.update", "chat.postMessage", "chat.appendStream", "chat.stopStream", "chat.startStream"):
            self.api.fail_method(method, "internal_error", status=500)


class WhatsApp(Surface):
    name, chat = "whatsapp", "4915112345678"

    async def open(self) -> None:
        from hermes_whatsapp.emulator import GraphApiEmulator

        self.api = await GraphApiEmulator(WA["access_token"], WA["phone_number_id"], WA["app_secret"]).__aenter__()

    async def close(self) -> None:
        await self.api.__aexit__(None, None, None)

    def section(self) -> dict[str, Any]:
        return {"enabled": True, **WA, "api_base_url": self.api.base_url}

    async def say(self, gateway: Any, text: str) -> None:
        assert gateway.url is not None
        status = await self.api.deliver(gateway.url + "/webhooks/whatsapp", self.api.text_message(self.chat, text))
        assert status == 200, status

    def screen(self) -> list[str]:
        return self.api.screen(self.chat)

    def fail_next_5xx(self) -> None:
        self.api.fail_next(self.chat, 131000, status=500)


SURFACES = {cls.name: cls for cls in (Telegram, Discord, Slack, WhatsApp)}


async def settle(condition: Any, seconds: float = 20.0) -> bool:
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()
