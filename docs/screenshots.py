"""Take the console's screenshots for the README: ``.venv/bin/python docs/screenshots.py``.

Starts a gateway with the demo model on a free port (its store in a temp
folder), opens ``/ui`` in Debian's headless Chromium (Playwright's client),
has a short conversation — a Markdown reply, a tool's image, HTML shown as
text — and saves ``docs/console-chat.png``. Run by hand after changing the
page; nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.async_api import async_playwright

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins

OUT = Path(__file__).parent / "console-chat.png"
MESSAGES = [
    "echo: The web console streams replies **word by word**, renders `Markdown` safely and keeps this "
    "conversation in the store (platform `web`).\n\n- `/new` starts over\n- **Stop** cuts a reply",
    'tool: qr_code {"text": "https://example.org"}',
    "echo: Model text such as <script>alert(1)</script> is shown as text, never run.",
]


async def main() -> int:
    chromium = shutil.which("chromium")
    if chromium is None:
        print("no chromium on this machine (apt-get install chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as home:
        os.environ["HERMES_HOME"] = home
        config = parse_config({"api_server": {"port": 0}, "model": {"demo": {"tokens_per_second": 0}},
                               "store": {"path": str(Path(home) / "store.db")}}, env={})
        async with Gateway(config, make_plugins(load_entry_points=False)) as gateway, async_playwright() as p:
            browser = await p.chromium.launch(executable_path=chromium, headless=True,
                                              args=["--no-sandbox"] if os.geteuid() == 0 else [])
            page = await browser.new_page(viewport={"width": 1000, "height": 960}, device_scale_factor=1)
            await page.goto(f"{gateway.url}/ui")
            await page.wait_for_selector("body[data-ready='1']")
            for i, text in enumerate(MESSAGES, 1):
                await page.fill("#text", text)
                await page.press("#text", "Enter")
                await page.wait_for_function(f"() => document.querySelectorAll('.msg.user').length === {i} && "
                                             f"!document.body.classList.contains('busy')")
                await page.wait_for_timeout(300)
            await page.wait_for_function("() => [...document.images].every(i => i.complete && i.naturalWidth)")
            await page.screenshot(path=str(OUT))
            await browser.close()
    print(f"saved {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
