"""How long the plugin's own work takes, by hand: a webhook verified, parsed and answered; a send to Meta.

    .venv/bin/python plugins/whatsapp/bench/bench_whatsapp_calls.py [--calls 300]

Meta expects a webhook's 2xx within seconds and WhatsApp allows about one
message every 6 s per user; this shows how little of either the plugin
uses. Everything runs against the Graph API emulator on 127.0.0.1 (with a
do-nothing gateway, so the model is not measured). Medians in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from hermes_gateway import Stream
from hermes_gateway.testing import PlatformRunner
from hermes_whatsapp import PLATFORM, ROUTE, plugin
from hermes_whatsapp.emulator import GraphApiEmulator
from hermes_whatsapp.webhook import parse, verify_signature

TOKEN, PHONE_ID, SECRET, VERIFY = "EAAbenchbenchbench", "106540352242922", "benchsecret0123456789", "verify-bench"
USER = "4915112345678"


async def main(calls: int) -> None:
    async with GraphApiEmulator(TOKEN, PHONE_ID, SECRET) as meta:
        # the kit's runner takes every message and does nothing with it: only the webhook's own cost is left
        section = {"access_token": TOKEN, "phone_number_id": PHONE_ID, "app_secret": SECRET, "verify_token": VERIFY,
                   "api_base_url": meta.base_url}
        runner = PlatformRunner(plugin, section, start=False)
        await runner.__aenter__()
        client = runner.client
        url = f"{runner.url}{ROUTE}"
        stream = Stream(platform=PLATFORM, chat_id=USER)
        timings: dict[str, list[float]] = {"webhook POST (HTTP round trip)": [], "verify + parse only": [],
                                           "send (HTTP round trip)": []}
        await meta.deliver(url, meta.text_message(USER, "warm-up"))
        await client.on_stream_end(stream, None, "warm-up")
        for i in range(calls):
            payload = meta.text_message(USER, f"message {i}")
            body, headers = meta.signed(payload)
            started = time.perf_counter()
            verify_signature(SECRET, body, headers["X-Hub-Signature-256"])
            parse(body, PHONE_ID)
            timings["verify + parse only"].append(time.perf_counter() - started)
            started = time.perf_counter()
            await meta.deliver(url, payload)
            timings["webhook POST (HTTP round trip)"].append(time.perf_counter() - started)
            started = time.perf_counter()
            await client.on_stream_end(stream, None, f"reply {i}")
            timings["send (HTTP round trip)"].append(time.perf_counter() - started)
        await runner.__aexit__(None, None, None)
    for name, values in timings.items():
        print(f"{name:34s} median {statistics.median(values) * 1000:7.3f} ms   "
              f"p95 {sorted(values)[int(len(values) * 0.95)] * 1000:7.3f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    asyncio.run(main(parser.parse_args().calls))
