"""What an attachment costs next to a text message, by hand: the qr_code tool's PNG through ``on_media``.

    .venv/bin/python plugins/whatsapp/bench/bench_whatsapp_media.py [--calls 200]

``on_media`` makes two Graph API calls (the ``/media`` multipart upload, then
the image message); a text is one. Both run against the Graph API emulator on
127.0.0.1 in the same run, so the ratio is what to read: medians in
milliseconds, the text send as the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from hermes_gateway import Media, RateBudget, Stream
from hermes_gateway._core.builtin.tools import qr_code
from hermes_whatsapp import WhatsAppPlugin
from hermes_whatsapp.emulator import GraphApiEmulator

TOKEN, PHONE_ID, SECRET, VERIFY = "EAAbenchbenchbench", "106540352242922", "benchsecret0123456789", "verify-bench"
USER = "4915112345678"


async def main(calls: int) -> None:
    png = qr_code("hello").media[0].data
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qr.png"
        path.write_bytes(png)
        item = Media(path=str(path), caption="hello", size=len(png))
        async with GraphApiEmulator(TOKEN, PHONE_ID, SECRET) as meta:
            plugin = WhatsAppPlugin(access_token=TOKEN, phone_number_id=PHONE_ID, app_secret=SECRET,
                                    verify_token=VERIFY, api_base_url=meta.base_url,
                                    budgets={"default": RateBudget(rate=1e6, burst=10**6)})
            timings: dict[str, list[float]] = {"text message (baseline)": [], "qr.png: upload + image message": []}
            await plugin.on_stream_end(Stream(platform=plugin.platform, chat_id=USER), None, "warm-up")
            for _ in range(calls):
                started = time.perf_counter()
                await plugin.on_stream_end(Stream(platform=plugin.platform, chat_id=USER), None, "Here you go.")
                timings["text message (baseline)"].append(time.perf_counter() - started)
                started = time.perf_counter()
                await plugin.on_media(Stream(platform=plugin.platform, chat_id=USER), item)
                timings["qr.png: upload + image message"].append(time.perf_counter() - started)
            await plugin.close()
            assert len(meta.attachments(USER)) == calls
    base = statistics.median(timings["text message (baseline)"])
    print(f"{calls} of each, {len(png)} byte PNG, medians:")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"  {name:34s} {median * 1000:7.2f} ms  x{median / base:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    asyncio.run(main(parser.parse_args().calls))
