"""How long one Bot API call takes through the plugin (PTB + HTTP to a local emulator), by hand.

    .venv/bin/python plugins/telegram/bench/bench_telegram_calls.py [--calls 300]

Telegram allows about one call a second per chat; this shows how little of
that second the plugin's own overhead uses. Medians, in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from hermes_gateway import RateBudget, Stream
from hermes_gateway.testing import PlatformRunner
from hermes_telegram import PLATFORM, plugin
from hermes_telegram.emulator import BotApiEmulator

TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"


async def main(calls: int) -> None:
    async with BotApiEmulator(TOKEN) as api:
        client = PlatformRunner(plugin, {"token": TOKEN, "base_url": api.base_url}, start=False,
                                limits={"budgets": {"default": RateBudget(rate=1e6, burst=10**6)}}).build()
        stream = Stream(platform=PLATFORM, chat_id="1")
        timings: dict[str, list[float]] = {"sendChatAction": [], "sendMessage": [], "editMessageText": [],
                                           "editMessageText (not modified)": []}
        ref = await client.on_delta(stream, None, "warm-up")
        for i in range(calls):
            t = time.perf_counter()
            await client.on_stream_start(stream)
            timings["sendChatAction"].append(time.perf_counter() - t)
            t = time.perf_counter()
            ref = await client.on_delta(stream, None, f"message {i}")
            timings["sendMessage"].append(time.perf_counter() - t)
            t = time.perf_counter()
            await client.on_delta(stream, ref, f"message {i} edited")
            timings["editMessageText"].append(time.perf_counter() - t)
            t = time.perf_counter()
            await client.on_stream_end(stream, ref, f"message {i} edited")
            timings["editMessageText (not modified)"].append(time.perf_counter() - t)
        await client.close()
    for name, values in timings.items():
        values.sort()
        print(f"{name:32s} median {statistics.median(values) * 1000:6.2f} ms   "
              f"p90 {values[int(len(values) * 0.9)] * 1000:6.2f} ms   ({len(values)} calls)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    asyncio.run(main(parser.parse_args().calls))
