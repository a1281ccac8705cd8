"""A long reply into one Discord channel, through the core, discord.py and the emulator, by hand.

    .venv/bin/python plugins/discord/bench/bench_discord_reply.py [--chars 5000] [--tokens-per-second 40]

With the plugin's declared budgets (Discord's pacing) against the
emulator's real buckets (5 message calls per 5 s per channel, 50
requests/s per bot), it prints what a person in the channel lives through:
calls per reply, 429s, when the first words became visible and when the
final text was complete (seconds after the first token), and the
plugin's own time per REST call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from hermes_gateway import RateBudget, Stream, StreamSettings
from hermes_gateway.testing import PlatformRunner
from hermes_discord import DiscordPlugin
from hermes_discord.emulator import DiscordEmulator

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhXk2a.q9Zr3Yb7Lw1Nc5Vt8Pd2Sf6Gh0Jk4Mn7Qr1Tu3Wx"


def reply_of(chars: int) -> str:
    words, total, i = [], 0, 0
    while total < chars:
        word = f"word{i}" + ("." if i % 12 == 11 else "")
        words.append(word)
        total += len(word) + 1
        i += 1
    return " ".join(words)


def section(api: DiscordEmulator) -> dict[str, str]:
    return {"token": TOKEN, "api_base_url": api.api_base_url, "gateway_url": api.gateway_url}


async def one_reply(chars: int, tokens_per_second: float) -> None:
    async with DiscordEmulator(TOKEN) as api, PlatformRunner(DiscordPlugin(), settings=section(api),
                                                             start=False) as runner:
        delivery = runner.delivery()
        await runner.client.discord_client()  # log in first: a running gateway is logged in before anyone writes
        reply = reply_of(chars)
        tokens = reply.split(" ")
        session = delivery.session("discord", api.general, chat_kind="guild",
                                   settings=StreamSettings(enabled=True, edit_interval=1.25, min_tokens=5))
        started = time.monotonic()
        session.start()
        for token in tokens:
            session.feed(token + " ")
            await asyncio.sleep(1 / tokens_per_second)
        fed = time.monotonic() - started
        report = await session.finish()
        done = time.monotonic() - started
        channel = api.channel(api.general)
        visible = [c.at - started for c in channel.calls if c.method == "create" and c.outcome == "ok"]
        print(f"reply: {len(reply)} characters in {len(tokens)} tokens at {tokens_per_second:g}/s "
              f"(model done after {fed:.2f} s)")
        print(f"delivered: {report.delivered}; messages: {len(channel.screen)}; calls: {report.calls} "
              f"({sum(c.method == 'typing' for c in channel.calls)} typing, "
              f"{sum(c.method == 'create' for c in channel.calls)} create, "
              f"{sum(c.method == 'edit' for c in channel.calls)} edit)")
        print(f"429s: {len(channel.rate_limited)} from Discord, {report.rate_limited} seen by the core; "
              f"buckets emptied: {channel.emptied}; violations: {api.violations or 'none'}")
        print(f"first words visible: {visible[0]:.2f} s; final text complete: {done:.2f} s "
              f"({done - fed:.2f} s after the model finished)")


async def per_call(calls: int) -> None:
    """The plugin's own overhead per REST call (no pacing, loose buckets)."""
    unpaced = {"budgets": {"default": RateBudget(rate=1e6, burst=10**6)}, "bot_budget": None}
    async with DiscordEmulator(TOKEN, bucket_limit=10**9, global_limit=10**9) as api, \
            PlatformRunner(DiscordPlugin(), settings=section(api), limits=unpaced, start=False) as runner:
        plugin = runner.client
        stream = Stream(platform=runner.platform, chat_id=api.general)
        ref = await plugin.on_delta(stream, None, "warm-up")
        timings: dict[str, list[float]] = {"typing": [], "create": [], "edit": []}
        for i in range(calls):
            for name, call in (("typing", lambda: plugin.on_stream_start(stream)),
                               ("create", lambda i=i: plugin.on_delta(stream, None, f"message {i}")),
                               ("edit", lambda i=i: plugin.on_delta(stream, ref, f"edit {i}"))):
                t = time.perf_counter()
                await call()
                timings[name].append(time.perf_counter() - t)
    for name, values in timings.items():
        values.sort()
        print(f"{name:8s} median {statistics.median(values) * 1000:6.2f} ms   "
              f"p90 {values[int(len(values) * 0.9)] * 1000:6.2f} ms   ({len(values)} calls)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=5000)
    parser.add_argument("--tokens-per-second", type=float, default=40.0)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(one_reply(args.chars, args.tokens_per_second))
    asyncio.run(per_call(args.calls))
