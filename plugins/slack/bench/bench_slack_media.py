"""What an attachment costs next to a text message, by hand: the qr_code tool's PNG through ``on_media``.

    .venv/bin/python plugins/slack/bench/bench_slack_media.py [--calls 200]

``on_media`` is slack_sdk's ``files_upload_v2``: three requests
(``files.getUploadURLExternal``, the bytes to the upload URL,
``files.completeUploadExternal``); a text is one ``chat.postMessage``. Both run
against the Slack emulator on 127.0.0.1 in the same run, so the ratio is what
to read: medians in milliseconds, the text post as the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from hermes_gateway import Media, RateBudget, Stream
from hermes_gateway.testing import PlatformRunner, builtin_tool
from hermes_slack import plugin
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SlackEmulator

CHANNEL = "D0BENCH"
UNPACED = {"budgets": {"default": RateBudget(rate=1e6, burst=10**6)}, "bot_budget": None}


async def main(calls: int) -> None:
    png = builtin_tool("qr_code").function("hello").media[0].data
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qr.png"
        path.write_bytes(png)
        item = Media(path=str(path), caption="hello", size=len(png))
        async with SlackEmulator(echo=False) as api:
            api.channel(CHANNEL, "im")
            settings = {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "api_base_url": api.base_url}
            timings: dict[str, list[float]] = {"text message (baseline)": [], "qr.png: files_upload_v2": []}
            async with PlatformRunner(plugin, settings=settings, limits=UNPACED, start=False) as slack:
                client, platform = slack.client, slack.platform
                await client.on_stream_end(Stream(platform=platform, chat_id=CHANNEL), None, "warm-up")
                for _ in range(calls):
                    started = time.perf_counter()
                    await client.on_stream_end(Stream(platform=platform, chat_id=CHANNEL), None, "Here you go.")
                    timings["text message (baseline)"].append(time.perf_counter() - started)
                    started = time.perf_counter()
                    await client.on_media(Stream(platform=platform, chat_id=CHANNEL), item)
                    timings["qr.png: files_upload_v2"].append(time.perf_counter() - started)
            assert len(api.attachments(CHANNEL)) == calls
    base = statistics.median(timings["text message (baseline)"])
    print(f"{calls} of each, {len(png)} byte PNG, medians:")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"  {name:34s} {median * 1000:7.2f} ms  x{median / base:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    asyncio.run(main(parser.parse_args().calls))
