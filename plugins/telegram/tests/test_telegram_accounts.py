"""Two Telegram bots in one gateway: ``support`` and ``sales``, each an account of the telegram plugin.

Each account is its own platform instance: its chats, conversations, budgets and 429 windows, its ``send``
target. Two Bot API emulators stand for the two bots (one token each, as Telegram has it).
"""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
import yaml

from hermes_gateway.testing import TestGateway
from hermes_telegram import plugin
from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import FAST_LIMITS, TOKEN, eventually

SALES_TOKEN = "987654321:BBHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"


def accounts_config(support: BotApiEmulator, sales: BotApiEmulator, **extra: object) -> dict:
    return {
        "model": {"demo": {"tokens_per_second": 300}},
        "platforms": {
            "support": {"platform": "telegram", "token": TOKEN, "base_url": support.base_url, "poll_timeout": 5},
            "sales": {"platform": "telegram", "token": SALES_TOKEN, "base_url": sales.base_url, "poll_timeout": 5},
        },
        **extra,
    }


async def recorded(gateway: TestGateway, platform: str, chat_id: str) -> list[dict]:
    """The chat's stored turn, once the store has it (it is written just after the reply shows)."""
    for _ in range(500):
        history = await gateway.history(platform, chat_id)
        if len(history) >= 2:
            return history
        await asyncio.sleep(0.01)
    return await gateway.history(platform, chat_id)


async def test_two_accounts_answer_each_in_their_own_chats_with_their_own_conversations():
    async with BotApiEmulator(TOKEN) as support, BotApiEmulator(SALES_TOKEN) as sales:
        async with TestGateway(accounts_config(support, sales), plugin, limits=FAST_LIMITS) as gateway:
            assert gateway.started_platforms == ["support", "sales"]
            await support.push_message(42, "echo: how do I reset my password?")
            await sales.push_message(42, "echo: what does the pro plan cost?")  # the same chat id, another bot
            await eventually(lambda: support.screen(42) == ["how do I reset my password?"]
                             and sales.screen(42) == ["what does the pro plan cost?"],
                             lambda: (support.screen(42), sales.screen(42)))
            support_history = await recorded(gateway, "support", "42")
            sales_history = await recorded(gateway, "sales", "42")
            assert [m["content"] for m in support_history] == ["echo: how do I reset my password?",
                                                               "how do I reset my password?"]
            assert [m["content"] for m in sales_history] == ["echo: what does the pro plan cost?",
                                                             "what does the pro plan cost?"]
            assert await gateway.history("telegram", "42") == []  # no instance under the plugin's own name
            assert gateway.client("support").context.platform == "support"


async def test_a_429_in_one_accounts_chat_does_not_hold_up_the_other_accounts_same_chat():
    """The budgets and 429 windows are the account's: chat 42 of ``support`` waits, chat 42 of ``sales`` not."""
    async with BotApiEmulator(TOKEN) as support, BotApiEmulator(SALES_TOKEN) as sales:
        async with TestGateway(accounts_config(support, sales), plugin, limits=FAST_LIMITS,
                               shutdown_grace=0.2) as gateway:
            support.inject_rate_limit(42, retry_after=60)
            await support.push_message(42, "echo: first in line")
            await eventually(lambda: support.chat(42).rate_limited, lambda: support.chat(42).calls)
            await sales.push_message(42, "echo: meanwhile on the sales bot")
            await eventually(lambda: sales.screen(42) == ["meanwhile on the sales bot"], lambda: sales.screen(42))
            assert support.screen(42) == [], "support's chat 42 is still waiting out its 429"
            assert gateway.started_platforms == ["support", "sales"]


async def test_send_with_an_account_reaches_that_accounts_bot(tmp_path):
    async with BotApiEmulator(TOKEN) as support, BotApiEmulator(SALES_TOKEN) as sales:
        path = tmp_path / "config.yaml"
        config = accounts_config(support, sales, store={"path": str(tmp_path / "store.db")})
        path.write_text(yaml.safe_dump(config))
        env = {**os.environ}
        env.pop("HERMES_CONFIG", None)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_gateway", "send", "--config", str(path), "--platform", "sales",
            "--chat", "777", "The new price list is out", env=env, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), 90)
        assert process.returncode == 0, err.decode()
        assert sales.screen(777) == ["The new price list is out"]
        assert support.chat(777).calls == [], "nothing went to the support bot"


async def test_a_reply_a_crash_cut_on_one_account_is_finished_on_that_account(tmp_path):
    """SIGKILL mid-reply on ``sales``; at restart the note goes to sales' chat, support's same chat sees nothing."""
    import signal

    from hermes_gateway.testing import stored_history
    from telegram_test_support import CURSOR

    words = " ".join(f"word{i}" for i in range(80))
    note = "— interrupted; please send your message again"
    async with BotApiEmulator(TOKEN) as support, BotApiEmulator(SALES_TOKEN) as sales:
        config = accounts_config(support, sales, store={"path": str(tmp_path / "state.db")},
                                 streaming={"enabled": True, "edit_interval": 0.3, "min_tokens": 2},
                                 conversation={"after_crash": "note"}, api_server={"enabled": False})
        config["model"] = {"demo": {"tokens_per_second": 8}}
        for account in config["platforms"].values():
            account["poll_timeout"] = 1
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        env = {**os.environ}
        env.pop("HERMES_CONFIG", None)

        async def start() -> asyncio.subprocess.Process:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
            banner = await asyncio.wait_for(process.stdout.readline(), 60)
            assert b"support" in banner and b"sales" in banner, banner
            return process

        process = await start()
        try:
            await sales.push_message(42, "echo: " + words)
            await eventually(lambda: any(t.endswith(CURSOR) and "word5" in t for t in sales.screen(42)),
                             lambda: sales.screen(42), timeout=30)
        finally:
            process.send_signal(signal.SIGKILL)
            await process.wait()
        process = await start()
        try:
            await eventually(lambda: sales.screen(42) and sales.screen(42)[-1].endswith(note),
                             lambda: sales.screen(42), timeout=10)
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 30)
        assert support.chat(42).calls == [], "the support bot was never called"
        texts = [m["content"] for m in await stored_history(tmp_path / "state.db", "sales", "42")]
        assert texts[0] == "echo: " + words and texts[1].startswith("word0 word1")


async def test_overrides_metrics_and_the_dashboard_know_each_account():
    """``overrides: match: {platform: sales}`` applies to the sales bot only; /metrics counts each account."""
    import aiohttp

    async with BotApiEmulator(TOKEN) as support, BotApiEmulator(SALES_TOKEN) as sales:
        config = accounts_config(support, sales, streaming={"enabled": True, "edit_interval": 0.05, "min_tokens": 2},
                                 overrides=[{"match": {"platform": "sales"}, "streaming": {"enabled": False}}])
        config["model"] = {"demo": {"tokens_per_second": 40}}
        words = " ".join(f"w{i}" for i in range(30))
        async with TestGateway(config, plugin, limits=FAST_LIMITS, api_server=True) as gateway:
            await support.push_message(7, f"echo: {words}")
            await sales.push_message(7, f"echo: {words}")
            await eventually(lambda: support.screen(7) == [words] and sales.screen(7) == [words],
                             lambda: (support.screen(7), sales.screen(7)))
            assert len(support.chat(7).messages[0].history) > 1, "support streams: previews, then the final text"
            assert sales.chat(7).messages[0].history == [words], "sales' override: no previews, one send"
            async with aiohttp.ClientSession() as http, http.get(f"{gateway.url}/metrics") as response:
                text = await response.text()
            assert response.status == 200
            assert 'platform="support"' in text and 'platform="sales"' in text and 'platform="telegram"' not in text


async def test_two_accounts_receiving_by_webhook_on_one_path_are_refused_in_one_line():
    from hermes_gateway import StartError

    async with BotApiEmulator(TOKEN) as support, BotApiEmulator(SALES_TOKEN) as sales:
        config = accounts_config(support, sales)
        for account in config["platforms"].values():
            account.update(mode="webhook", webhook_url="https://bot.example.com/webhooks/telegram",
                           webhook_secret="s3cret-value")
        with pytest.raises(StartError) as raised:
            async with TestGateway(config, plugin, limits=FAST_LIMITS):
                pass
        assert str(raised.value).startswith("platform sales: the route POST /webhooks/telegram is already mounted")
        assert "\n" not in str(raised.value)


async def test_ask_with_an_account_answers_in_that_accounts_chat(tmp_path):
    async with BotApiEmulator(TOKEN) as support, BotApiEmulator(SALES_TOKEN) as sales:
        path = tmp_path / "config.yaml"
        config = accounts_config(support, sales, store={"path": str(tmp_path / "store.db")})
        config["model"] = {"demo": {"tokens_per_second": 0}}
        path.write_text(yaml.safe_dump(config))
        env = {**os.environ}
        env.pop("HERMES_CONFIG", None)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_gateway", "ask", "--config", str(path), "--platform", "support",
            "--chat", "31", "echo: answered by the support bot", env=env, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), 90)
        assert process.returncode == 0, err.decode()
        assert support.screen(31) == ["answered by the support bot"]
        assert sales.chat(31).calls == []
