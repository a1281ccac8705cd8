"""Take the dashboard's screenshot for the README: ``.venv/bin/python docs/dashboard_screenshot.py``.

Starts the Telegram Bot API emulator (the telegram plugin's) and a gateway
polling it with the demo model and the console on a free loopback port
(store in a temp folder). Two people write: one gets a slow reply (so a
reply is in flight), one is unknown and waits for pairing. Then Debian's
headless Chromium (Playwright's client) opens ``/ui/dashboard`` and saves
``docs/console-dashboard.png``. Run by hand after changing the page;
nothing is downloaded.
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

OUT = Path(__file__).parent / "console-dashboard.png"
TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"  # the emulator's bot (no real token)


async def main() -> int:
    chromium = shutil.which("chromium")
    if chromium is None:
        print("no chromium on this machine (apt-get install chromium)", file=sys.stderr)
        return 1
    import hermes_telegram
    from hermes_telegram.emulator import BotApiEmulator

    with tempfile.TemporaryDirectory() as home:
        os.environ["HERMES_HOME"] = home
        async with BotApiEmulator(TOKEN) as api:
            config = parse_config({
                "api_server": {"port": 0, "host": "127.0.0.1", "enabled": False}, "web": {"enabled": True},
                "model": {"demo": {"tokens_per_second": 4}},
                "platforms": {"telegram": {"enabled": True, "token": TOKEN, "base_url": api.base_url,
                                           "poll_timeout": 1}},
                "access": {"unknown_users": "pair", "admins": ["telegram:1001"]},
                "schedules": [{"name": "morning-digest", "platform": "telegram", "chat": "1001",
                               "cron": "0 8 * * 1-5", "timezone": "Europe/Berlin",
                               "prompt": "Summarise the news"}],
                "store": {"path": str(Path(home) / "store.db")},
            }, env={})
            plugins = make_plugins(builtins=("hermes_gateway._core.web.plugin", "hermes_gateway._core.builtin.tools"),
                                   load_entry_points=False, extra=[hermes_telegram.plugin])
            async with Gateway(config, plugins, shutdown_grace=0.5) as gateway, async_playwright() as p:
                await api.push_message(1001, "echo: hello there, how are you?")
                await asyncio.sleep(3)
                await api.push_message(1001, "echo: " + " ".join(["a long answer that is still streaming"] * 20))
                await api.push_message(2002, "hi, can I use this bot?", user_id=2002, first_name="Grace")
                browser = await p.chromium.launch(executable_path=chromium, headless=True,
                                                  args=["--no-sandbox"] if os.geteuid() == 0 else [])
                page = await browser.new_page(viewport={"width": 1200, "height": 1000}, device_scale_factor=1)
                await page.goto(f"{gateway.url}/ui/dashboard")
                await page.wait_for_selector("#in-flight tbody tr")
                await page.wait_for_selector("#pairing li")
                await page.wait_for_timeout(2500)
                await page.screenshot(path=str(OUT), full_page=True)
                await browser.close()
    print(f"saved {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
