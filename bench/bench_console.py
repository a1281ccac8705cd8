"""The web console's page weight and time to first paint: ``.venv/bin/python bench/bench_console.py [RUNS]``.

Page weight: the bytes of the chat page's HTML, CSS and JS as the gateway
serves them, raw and gzipped (what a browser that sends
``Accept-Encoding: gzip`` receives), and the same for the sign-in page.

Time to first paint: Debian's headless Chromium (Playwright's client) opens
the page in a fresh context (cold cache) each run and reads
``performance.getEntriesByType('paint')``; medians of RUNS runs (default
15). Baseline, measured in the same go and interleaved with the pages: a
one-line HTML page served by a bare aiohttp app on the same machine, so the
difference is what the console itself costs. Run by hand; figures in
bench/README.md.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import aiohttp
from aiohttp import web
from playwright.async_api import async_playwright

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins

PAGES = {"chat (/ui)": ("/ui", ["index.html", "console.css", "console.js", "markdown.js", "chat.js"]),
         "sign-in (/ui/login)": ("/ui/login", ["login.html", "console.css", "login.js"]),
         "dashboard (/ui/dashboard)": ("/ui/dashboard", ["dashboard.html", "console.css", "dashboard.css",
                                                         "console.js", "dashboard.js"])}
STATIC = "/ui/static/"


async def weight(url: str, files: list[str]) -> tuple[int, int]:
    """Bytes of these files as served: identity, and gzip on the wire."""
    raw = gz = 0
    async with aiohttp.ClientSession(auto_decompress=False, cookie_jar=aiohttp.CookieJar(unsafe=True)) as s:
        for name in files:
            for encoding in ("identity", "gzip"):
                async with s.get(f"{url}{STATIC}{name}", headers={"Accept-Encoding": encoding}) as r:
                    assert r.status == 200, (name, r.status)
                    body = await r.read()
                if encoding == "gzip":
                    gz += len(body)
                else:
                    raw += len(body)
    return raw, gz


async def paint(browser, url: str) -> dict[str, float]:
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(url, wait_until="load")
    await page.wait_for_function("() => performance.getEntriesByType('paint').length >= 2")
    entries = await page.evaluate("() => performance.getEntriesByType('paint').map(e => [e.name, e.startTime])")
    await context.close()
    return dict(entries)


async def baseline_server() -> tuple[web.AppRunner, str]:
    async def hello(request: web.Request) -> web.Response:
        return web.Response(text="<!doctype html><title>b</title><p>baseline</p>", content_type="text/html")
    app = web.Application()
    app.router.add_get("/", hello)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/"


async def main(runs: int) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("no chromium on this machine (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as home:
        os.environ["HERMES_HOME"] = home
        config = parse_config({"api_server": {"port": 0}, "store": {"path": str(Path(home) / "s.db")}}, env={})
        async with Gateway(config, make_plugins(load_entry_points=False)) as gateway, async_playwright() as p:
            print("page weight (HTML + CSS + JS as served):")
            print("| page | files | bytes | gzip bytes |\n| --- | --- | ---: | ---: |")
            for label, (_, files) in PAGES.items():
                raw, gz = await weight(gateway.url, files)
                print(f"| {label} | {', '.join(files)} | {raw:,} | {gz:,} |")
            runner, base_url = await baseline_server()
            browser = await p.chromium.launch(executable_path=chromium, headless=True,
                                              args=["--no-sandbox"] if os.geteuid() == 0 else [])
            targets = {"baseline: one-line page (bare aiohttp)": base_url}
            targets.update({label: gateway.url + path for label, (path, _) in PAGES.items()})
            samples: dict[str, dict[str, list[float]]] = {t: {"first-paint": [], "first-contentful-paint": []}
                                                          for t in targets}
            for url in targets.values():  # one warm-up each (the browser's own start-up costs)
                await paint(browser, url)
            for _ in range(runs):  # interleaved: a load spike hits every target alike
                for name, url in targets.items():
                    for kind, at in (await paint(browser, url)).items():
                        if kind in samples[name]:
                            samples[name][kind].append(at)
            await browser.close()
            await runner.cleanup()
    print(f"\ntime to first paint, Chromium {chromium}, median of {runs} cold-cache loads (ms):")
    print("| page | first paint | first contentful paint | FCP minus baseline |\n| --- | ---: | ---: | ---: |")
    base = statistics.median(samples[next(iter(samples))]["first-contentful-paint"])
    for name, by_kind in samples.items():
        fp, fcp = statistics.median(by_kind["first-paint"]), statistics.median(by_kind["first-contentful-paint"])
        print(f"| {name} | {fp:.1f} | {fcp:.1f} | {fcp - base:+.1f} |")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 15))
