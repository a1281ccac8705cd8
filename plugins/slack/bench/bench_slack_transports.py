"""Calls per reply and final latency, native streaming vs the edit transport, by hand.

    .venv/bin/python plugins/slack/bench/bench_slack_transports.py [--words 400] [--tps 40] [--replies 3]

A reply of ``--words`` words is fed to the real delivery core at ``--tps``
words a second and shown in a Slack thread on the emulator, once with
native streaming (chat.startStream/appendStream/stopStream) and once with
it refused (chat.postMessage + chat.update). The plugin keeps Slack's
limits (1 call/s per channel, ~50/min per workspace, an edit a second);
``--fast`` lifts them (an edit every 50 ms) to see the plugin's own overhead. Reported per reply: Web API calls, bytes
of text sent, and the final latency (from the model's last word until the
thread shows the whole reply).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from typing import Any

from hermes_gateway import RateBudget, StreamSettings
from hermes_gateway.testing import PlatformRunner
from hermes_slack import plugin
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, START_STREAM_PER_MINUTE, SlackEmulator


async def one_reply(api: SlackEmulator, delivery: Any, channel: str, thread: str, words: int,
                    tps: float, interval: float) -> tuple[int, int, float]:
    reply = " ".join(f"word{i}" + ("." if i % 12 == 11 else "") for i in range(words))
    settings = StreamSettings(enabled=True, edit_interval=interval, min_tokens=5)
    before = len(api.calls)
    session = delivery.session("slack", channel, settings=settings, thread_id=thread, chat_kind="im")
    session.start()
    for word in reply.split(" "):
        session.feed(word + " ")
        await asyncio.sleep(1 / tps)
    ended = time.perf_counter()
    report = await session.finish()
    latency = time.perf_counter() - ended
    assert report.delivered and " ".join(api.screen(channel, thread)).split() == reply.split(), report.error
    calls = api.calls[before:]
    sent = sum(len(json.dumps(c.params)) for c in calls)
    return len(calls), sent, latency


async def main(words: int, tps: float, replies: int, fast: bool) -> None:
    unpaced = {"budgets": {"default": RateBudget(rate=1e6, burst=10**6)}, "bot_budget": None, "edit_interval": 0.0}
    for transport in ("native", "edit"):
        async with SlackEmulator(start_stream_per_minute=None if fast else START_STREAM_PER_MINUTE) as api:
            settings = {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "api_base_url": api.base_url,
                        **({"start_streams_per_minute": 10**6} if fast else {})}
            if transport == "edit":
                api.start_stream_error = "missing_scope"
            async with PlatformRunner(plugin, settings=settings, limits=unpaced if fast else None,
                                      start=False) as slack:
                delivery = slack.delivery()
                results = []
                for n in range(replies):
                    channel = f"D{transport}{n}"
                    api.channel(channel, "im")
                    results.append(await one_reply(api, delivery, channel, f"1700000000.{n:06d}", words, tps,
                                                   interval=0.05 if fast else 1.0))
        calls = statistics.median(r[0] for r in results)
        sent = statistics.median(r[1] for r in results)
        latency = statistics.median(r[2] for r in results)
        print(f"{transport:7s} calls/reply {calls:5.0f}   request bytes/reply {sent:8.0f}   "
              f"final latency {latency * 1000:7.1f} ms   ({replies} replies of {words} words at {tps:g} words/s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--words", type=int, default=400)
    parser.add_argument("--tps", type=float, default=40.0)
    parser.add_argument("--replies", type=int, default=3)
    parser.add_argument("--fast", action="store_true", help="lift Slack's limits: the plugin's own overhead")
    args = parser.parse_args()
    asyncio.run(main(args.words, args.tps, args.replies, args.fast))
