"""Take the console's screenshots for the README: ``.venv/bin/python docs/screenshots.py``.

Starts a gateway with the demo model on a free port (its store in a temp
folder), opens ``/ui`` in Debian's headless Chromium (Playwright's client),
has a short conversation — a Markdown reply, a photo sent from the browser
and described, a tool asked about with Approve/Deny buttons and approved (its
progress lines and its image), a second question still waiting — and saves
``docs/console-chat.png``. Run by hand after changing the
page; nothing is downloaded. Install Debian's ``fonts-noto-color-emoji`` first,
or the emoji (🔧, 📎, 🎤) come out as empty boxes.
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
    "describe",  # with a photo attached
    'tool: qr_code {"text": "https://example.org"}',  # approved with the button
    'tool: qr_code {"text": "https://example.org/again"}',  # left waiting: its buttons show
]


def photo(path: Path) -> Path:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (320, 200), (70, 130, 200))
    ImageDraw.Draw(image).ellipse((110, 40, 210, 140), fill=(250, 210, 60))
    image.save(path)
    return path


async def main() -> int:
    chromium = shutil.which("chromium")
    if chromium is None:
        print("no chromium on this machine (apt-get install chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as home:
        os.environ["HERMES_HOME"] = home
        config = parse_config({"api_server": {"port": 0}, "model": {"demo": {"tokens_per_second": 0}},
                               "store": {"path": str(Path(home) / "store.db")},
                               "tools": {"approval": {"require": ["qr_code"]}}}, env={})
        async with Gateway(config, make_plugins(load_entry_points=False)) as gateway, async_playwright() as p:
            browser = await p.chromium.launch(executable_path=chromium, headless=True,
                                              args=["--no-sandbox"] if os.geteuid() == 0 else [])
            page = await browser.new_page(viewport={"width": 1000, "height": 960}, device_scale_factor=1)
            await page.goto(f"{gateway.url}/ui")
            await page.wait_for_selector("body[data-ready='1']")
            for i, text in enumerate(MESSAGES, 1):
                if text == "describe":
                    await page.set_input_files("#file", str(photo(Path(home) / "sunny.png")))
                await page.fill("#text", text)
                await page.press("#text", "Enter")
                if text.startswith("tool:"):
                    await page.wait_for_selector(".msg.bot.choice button:has-text('Approve')")
                    if i == len(MESSAGES):
                        break
                    await page.click(".msg.bot.choice button:has-text('Approve')")
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
