"""The platforms ``bench/scale.py --platform`` drives: each one's emulator with its flood rules, its chats, its record.

One class per platform, the same questions for each: which plugin and config the gateway child runs, how a
person writes in chat ``i``, what the emulator saw in that chat (calls, refusals, the screen), which kinds of call
carry a reply's text, and how the gateway child counts the calls as they leave (Telegram: PTB's
``BaseRequest.post``; the others speak aiohttp, so ``aiohttp.ClientSession._request`` for the emulator's URL).

The bot-wide budget each is checked against is the one its plugin declares (``Platform.bot_budget``), so the
gateway-side "over budget" count of ``scale.py`` means "past what the plugin promised its platform".
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
CURSOR = "▌"


@dataclass(frozen=True)
class Seen:
    """One call into a chat as the emulator recorded it."""

    at: float
    method: str
    ok: bool
    text: str | None        # the text it asked to show (None: no text, e.g. typing)
    refused: bool           # a 429 / rate-limit error


class Bench:
    """One platform's emulator and chats, as the parent process sees them."""

    name = ""
    #: the package whose ``plugin`` object the gateway child runs
    plugin_module = ""
    #: kinds of call (as the gateway child names them) that show a reply's text
    text_kinds: frozenset[str] = frozenset()
    #: kinds that create a message (two of them in one chat: the reply shown twice, or split)
    send_kinds: frozenset[str] = frozenset()
    #: calls the bot-wide budget does not cover (not into a chat)
    not_chat_kinds: frozenset[str] = frozenset()
    api_server = False

    def budgets(self) -> tuple[Any, Any]:
        """(per-chat default budget, bot-wide budget) as the plugin declares them."""
        platform = self.platform()
        return platform.budgets.get("private", platform.budgets["default"]), platform.bot_budget

    def platform(self) -> Any:
        """The ``Platform`` the plugin registers (its declared limits)."""
        registered: list[Any] = []
        load_plugin(self.name).register_platforms(register=registered.append)
        return registered[0]

    async def __aenter__(self) -> "Bench":
        raise NotImplementedError

    async def __aexit__(self, *exc: object) -> None:
        await self.api.__aexit__(*exc)

    api: Any

    def section(self) -> dict[str, Any]:
        raise NotImplementedError

    def key(self, i: int) -> str:
        """Chat ``i``'s id as the gateway knows it (``Stream.chat_id``)."""
        raise NotImplementedError

    async def push(self, i: int, text: str, gateway_url: str | None) -> None:
        raise NotImplementedError

    def screen(self, i: int) -> list[str]:
        raise NotImplementedError

    def calls(self, i: int) -> list[Seen]:
        raise NotImplementedError

    def violations(self, i: int) -> int:
        return 0

    def prepare(self, chats: int) -> None:
        """Create the chats before the gateway starts (where the emulator needs them to exist)."""


# ---------------------------------------------------------------------------------------------- Telegram

class TelegramBench(Bench):
    """Private chats; the per-chat flood rule on (1 call per 0.9 s of arrival: a 0.1 s transit allowance, as the
    replica tests count it, since the emulator shares a loaded process with the load generator)."""

    name = "telegram"
    plugin_module = "hermes_telegram"
    text_kinds = frozenset({"sendMessage", "editMessageText"})
    send_kinds = frozenset({"sendMessage"})
    not_chat_kinds = frozenset({"getUpdates", "getMe", "deleteWebhook", "setWebhook", "getWebhookInfo", "getFile"})

    async def __aenter__(self) -> "Bench":
        sys.path.insert(0, str(ROOT / "plugins" / "telegram" / "tests"))
        from hermes_gateway import RateBudget
        from hermes_telegram.emulator import BotApiEmulator
        from telegram_test_support import TOKEN
        self.token = TOKEN
        self.api = BotApiEmulator(TOKEN, rate_limit=RateBudget(rate=1 / 0.9, burst=1))
        await self.api.__aenter__()
        return self

    def section(self) -> dict[str, Any]:
        return {"token": self.token, "base_url": self.api.base_url, "poll_timeout": 5}

    def key(self, i: int) -> str:
        return str(10_000 + i)

    async def push(self, i: int, text: str, gateway_url: str | None) -> None:
        await self.api.push_message(10_000 + i, text)

    def screen(self, i: int) -> list[str]:
        return self.api.chat(10_000 + i).screen

    def calls(self, i: int) -> list[Seen]:
        return [Seen(c.at, c.method, c.outcome == "ok", c.params.get("text"), c.outcome == "rate_limited")
                for c in self.api.chat(10_000 + i).calls]

    def violations(self, i: int) -> int:
        return len(self.api.chat(10_000 + i).violations)


# ---------------------------------------------------------------------------------------------- Discord

class DiscordBench(Bench):
    """DM channels; Discord's rules on as the emulator has them by default: 5 calls per 5 s per channel (create
    and edit alike, typing its own bucket), 50 requests/s for the bot, 429 beyond either."""

    name = "discord"
    plugin_module = "hermes_discord"
    text_kinds = frozenset({"create", "edit"})
    send_kinds = frozenset({"create"})
    not_chat_kinds = frozenset({"other"})

    async def __aenter__(self) -> "Bench":
        sys.path.insert(0, str(ROOT / "plugins" / "discord" / "tests"))
        from discord_test_support import TOKEN
        from hermes_discord.emulator import DiscordEmulator
        self.token = TOKEN
        self.api = DiscordEmulator(TOKEN)
        await self.api.__aenter__()
        self.channels: list[str] = []
        return self

    def prepare(self, chats: int) -> None:
        self.channels = [self.api.dm() for _ in range(chats)]

    def section(self) -> dict[str, Any]:
        return {"token": self.token, "api_base_url": self.api.api_base_url, "gateway_url": self.api.gateway_url}

    def key(self, i: int) -> str:
        return self.channels[i]

    async def push(self, i: int, text: str, gateway_url: str | None) -> None:
        await self.api.push_message(self.channels[i], text)

    def screen(self, i: int) -> list[str]:
        return self.api.channel(self.channels[i]).screen

    def calls(self, i: int) -> list[Seen]:
        return [Seen(c.at, c.method, c.outcome == "ok", c.params.get("content"),
                     c.outcome in ("rate_limited", "global_rate_limited"))
                for c in self.api.channel(self.channels[i]).calls]

    def violations(self, i: int) -> int:
        return len(self.api.channel(self.channels[i]).violations)


# ---------------------------------------------------------------------------------------------- Slack

class SlackBench(Bench):
    """DMs (``im``) over Socket Mode; Slack's per-method, per-workspace limits on: ``chat.update`` 50 a minute
    (Tier 3, burst 5), ``chat.startStream`` 20 in any minute (the emulator's default), 429 + Retry-After beyond.
    (``chat.postMessage``'s ~1/s is per channel; the emulator counts per workspace, so it is left to the gateway's
    own per-chat check.)"""

    name = "slack"
    plugin_module = "hermes_slack"
    text_kinds = frozenset({"chat.postMessage", "chat.update", "chat.startStream", "chat.appendStream",
                            "chat.stopStream"})
    send_kinds = frozenset({"chat.postMessage", "chat.startStream"})
    not_chat_kinds = frozenset({"auth.test", "apps.connections.open", "other"})

    async def __aenter__(self) -> "Bench":
        from hermes_slack.emulator import SlackEmulator
        self.api = SlackEmulator()
        self.api.limit("chat.update", per_minute=50, burst=5)
        await self.api.__aenter__()
        self._by_channel: dict[str, list[Any]] = {}
        self._indexed = 0
        return self

    def section(self) -> dict[str, Any]:
        from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET
        return {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "signing_secret": SIGNING_SECRET,
                "api_base_url": self.api.base_url, "mode": "socket"}

    def key(self, i: int) -> str:
        return f"D{i:08d}"

    async def push(self, i: int, text: str, gateway_url: str | None) -> None:
        if i == 0:
            await self.api.wait_connected()
        await self.api.push_message(self.key(i), text, kind="im")

    def screen(self, i: int) -> list[str]:
        channel = self.api.channels.get(self.key(i))
        return [m.text for m in channel.messages if m.bot and m.state != "vanished"] if channel else []

    def calls(self, i: int) -> list[Seen]:
        calls = self.api.calls  # one list for the workspace: indexed by channel as it grows
        for call in calls[self._indexed:]:
            channel = call.params.get("channel") or call.params.get("channel_id")
            if channel:
                self._by_channel.setdefault(str(channel), []).append(call)
        self._indexed = len(calls)
        out = []
        for c in self._by_channel.get(self.key(i), []):
            answer = c.answer or {}
            refused = c.status == 429 or answer.get("error") in ("rate_limited", "ratelimited")
            text = c.params.get("text", c.params.get("markdown_text"))
            out.append(Seen(c.at, c.method, bool(answer.get("ok")), text, refused))
        return out


# ---------------------------------------------------------------------------------------------- WhatsApp

class WhatsAppBench(Bench):
    """Users writing to one business number, by signed webhook to the gateway; Meta's pair rate limit on as the
    plugin declares it (1 message per 6 s to one user, burst 20: ``131056`` beyond). WhatsApp shows no edits: a
    reply is sent when it is whole (or in parts at paragraph breaks), no previews."""

    name = "whatsapp"
    plugin_module = "hermes_whatsapp"
    text_kinds = frozenset({"send"})
    send_kinds = frozenset({"send"})
    not_chat_kinds = frozenset({"other"})
    api_server = True

    async def __aenter__(self) -> "Bench":
        sys.path.insert(0, str(ROOT / "plugins" / "whatsapp" / "tests"))
        from hermes_gateway import RateBudget
        from hermes_whatsapp.emulator import GraphApiEmulator
        from whatsapp_test_support import APP_SECRET, PHONE_ID, TOKEN, section
        self._section = section
        self.api = GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET, pair_limit=RateBudget(rate=1 / 6, burst=20))
        await self.api.__aenter__()
        return self

    def section(self) -> dict[str, Any]:
        data = self._section(self.api)
        data.pop("enabled", None)
        return data

    def key(self, i: int) -> str:
        return str(491510_000_000 + i)

    async def push(self, i: int, text: str, gateway_url: str | None) -> None:
        from hermes_whatsapp import ROUTE
        status = await self.api.deliver(f"{gateway_url}{ROUTE}", self.api.text_message(self.key(i), text))
        if status != 200:
            raise SystemExit(f"the gateway answered the webhook {status}")

    def screen(self, i: int) -> list[str]:
        return self.api.screen(self.key(i))

    def calls(self, i: int) -> list[Seen]:
        out = []
        for c in self.api.user(self.key(i)).calls:
            body = c.body if isinstance(c.body, dict) else {}
            text = (body.get("text") or {}).get("body") if body.get("type") == "text" else None
            kind = c.outcome if c.outcome in ("typing", "read") else "send"
            out.append(Seen(c.at, kind, c.outcome in ("sent", "typing", "read"), text,
                            c.outcome.startswith(("131056", "130429"))))
        return out

    def violations(self, i: int) -> int:
        return len(self.api.user(self.key(i)).violations)


BENCHES: dict[str, type[Bench]] = {b.name: b for b in (TelegramBench, DiscordBench, SlackBench, WhatsAppBench)}


# ---------------------------------------------------------------------------------------------- the gateway child

def load_plugin(name: str) -> Any:
    import importlib
    return importlib.import_module(BENCHES[name].plugin_module).plugin


def count_calls(name: str, api_base: str, calls: list[Any]) -> None:
    """Record every call the gateway makes to the platform as it leaves: (monotonic, kind, chat id, preview?)."""
    if name == "telegram":
        # The plugin's aiohttp transport (every call but getUpdates and uploads) is counted below, where the
        # request leaves (a reply's text calls no longer pass PTB's ``BaseRequest.post``); getUpdates' httpx
        # transport (no ``_slots``) is counted at ``BaseRequest.post``.
        import telegram.request
        post = telegram.request.BaseRequest.post

        async def counted_post(self: Any, url: str, request_data: Any = None, *args: Any, **kwargs: Any) -> Any:
            if not hasattr(self, "_slots"):
                params = request_data.parameters if request_data is not None else {}
                calls.append((time.monotonic(), url.rsplit("/", 1)[-1], str(params.get("chat_id", "")),
                              CURSOR in str(params.get("text", ""))))
            return await post(self, url, request_data, *args, **kwargs)

        telegram.request.BaseRequest.post = counted_post  # type: ignore[method-assign]
    import aiohttp
    classify = CLASSIFY[name]
    request = aiohttp.ClientSession._request

    async def counted(self: Any, method: str, str_or_url: Any, *args: Any, **kwargs: Any) -> Any:
        url = str(str_or_url)
        if url.startswith(api_base):
            kind, chat, text = classify(method, url[len(api_base):], kwargs)
            calls.append((time.monotonic(), kind, chat, CURSOR in text))
        return await request(self, method, str_or_url, *args, **kwargs)

    aiohttp.ClientSession._request = counted  # type: ignore[method-assign]


def _body(kwargs: dict[str, Any]) -> dict[str, Any]:
    for key in ("json", "data", "params"):
        value = kwargs.get(key)
        if isinstance(value, dict) and value:
            return value
        if isinstance(value, (str, bytes)):
            try:
                loaded = json.loads(value)
            except ValueError:
                continue
            if isinstance(loaded, dict):
                return loaded
    return {}


def _telegram(method: str, path: str, kwargs: dict[str, Any]) -> tuple[str, str, str]:
    """A JSON body (a reply's text calls) or a form body (the other calls through PTB)."""
    body = _body(kwargs)
    if not body:
        from urllib.parse import parse_qs
        data = kwargs.get("data")
        body = {k: v[0] for k, v in parse_qs(data.decode() if isinstance(data, bytes) else str(data or "")).items()}
    return path.rsplit("/", 1)[-1], str(body.get("chat_id", "")), str(body.get("text", ""))


def _discord(method: str, path: str, kwargs: dict[str, Any]) -> tuple[str, str, str]:
    parts = path.strip("/").split("/")
    if len(parts) < 3 or parts[0] != "channels":
        return "other", "", ""
    chat = parts[1]
    if parts[2] == "typing":
        return "typing", chat, ""
    if "reactions" in parts:
        return "react", chat, ""
    text = str(_body(kwargs).get("content", ""))
    return ("create" if method == "POST" else "edit"), chat, text


def _slack(method: str, path: str, kwargs: dict[str, Any]) -> tuple[str, str, str]:
    body = _body(kwargs)
    chat = str(body.get("channel") or body.get("channel_id") or "")
    text = str(body.get("text") or body.get("markdown_text") or body.get("chunks") or "")
    kind = path.strip("/")
    return (kind if chat else ("other" if kind not in BENCHES["slack"].not_chat_kinds else kind)), chat, text


def _whatsapp(method: str, path: str, kwargs: dict[str, Any]) -> tuple[str, str, str]:
    if not path.endswith("/messages"):
        return "other", "", ""
    body = _body(kwargs)
    if body.get("status") == "read":
        return "typing", "", ""
    text = (body.get("text") or {}).get("body", "") if isinstance(body.get("text"), dict) else ""
    return "send", str(body.get("to", "")), str(text)


CLASSIFY: dict[str, Callable[[str, str, dict[str, Any]], tuple[str, str, str]]] = {
    "telegram": _telegram, "discord": _discord, "slack": _slack, "whatsapp": _whatsapp}
