"""A burst of Bot API calls keeps a bounded number of connections (httpcore's pool costs grow with them)."""

from __future__ import annotations

import asyncio

from telegram_test_support import fast_runner

from hermes_telegram.client import MAX_IN_FLIGHT
from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import TOKEN


async def test_two_hundred_calls_at_once_all_land_over_at_most_max_in_flight_connections():
    async with BotApiEmulator(TOKEN) as api:
        runner = fast_runner(api.base_url)
        bot = runner.client.bot
        try:
            await asyncio.gather(*(bot.send_message(chat_id=5000 + n, text=f"hello {n}") for n in range(200)))
            open_connections = len(api._runner.server.connections)  # type: ignore[union-attr]
        finally:
            await bot.shutdown()
            await runner.client.close()
        assert all(api.screen(5000 + n) == [f"hello {n}"] for n in range(200))
        # PTB's default pool (256 connections, all kept) opened one per call here
        assert 1 <= open_connections <= MAX_IN_FLIGHT
