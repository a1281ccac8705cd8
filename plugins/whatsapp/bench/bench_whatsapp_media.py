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

from hermes_gateway import Media, Stream
from hermes_gateway.testing import PlatformRunner, builtin_tool
from hermes_whatsapp import PLATFORM, plugin
from hermes_whatsapp.emulator import GraphApiEmulator

TOKEN, PHONE_ID, SECRET, VERIFY = "EAAbenchbenchbench", "106540352242922", "benchsecret0123456789", "verify-bench"
USER = "4915112345678"


async def main(calls: int) -> None:
    png = builtin_tool("qr_code").function("hello").media[0].data
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qr.png"
        path.write_bytes(png)
        item = Media(path=str(path), caption="hello", size=len(png))
        async with GraphApiEmulator(TOKEN, PHONE_ID, SECRET) as meta:
            section = {"access_token": TOKEN, "phone_number_id": PHONE_ID, "app_secret": SECRET,
                       "verify_token": VERIFY, "api_base_url": meta.base_url}
            client = PlatformRunner(plugin, section, start=False).build()
            timings: dict[str, list[float]] = {"text message (baseline)": [], "qr.png: upload + image message": []}
            await client.on_stream_end(Stream(platform=PLATFORM, chat_id=USER), None, "warm-up")
            for _ in range(calls):
                started = time.perf_counter()
                await client.on_stream_end(Stream(platform=PLATFORM, chat_id=USER), None, "Here you go.")
                timings["text message (baseline)"].append(time.perf_counter() - started)
                started = time.perf_counter()
                await client.on_media(Stream(platform=PLATFORM, chat_id=USER), item)
                timings["qr.png: upload + image message"].append(time.perf_counter() - started)
            await client.close()
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
