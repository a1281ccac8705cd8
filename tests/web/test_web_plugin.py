"""``hermes-gateway run`` serves the console (the built-in plugin) and names its address at start."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys

import yaml

from hermes_gateway._core.plugins import BUILTIN_PLUGINS, make_plugins
from web_helpers import browser_session, csrf_of, open_feed

DEADLINE = 60.0


def test_the_console_is_a_built_in_plugin_with_its_own_platform():
    assert "hermes_gateway._core.web.plugin" in BUILTIN_PLUGINS
    registered = make_plugins(load_entry_points=False).platform("web")
    assert (registered.plugin_name, registered.origin) == ("hermes_gateway._core.web.plugin", "built-in")


async def test_run_prints_the_console_address_and_a_browser_there_chats(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"api_server": {"port": 0}, "store": {"path": str(tmp_path / "s.db")}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(tmp_path), HERMES_HOME=str(tmp_path / ".hermes"), HERMES_LOAD_PLUGINS="",
               PYTHONUNBUFFERED="1")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(config), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), DEADLINE)).decode()
        found = re.search(r"listening on (http://\S+) \(.*web console at (http://\S+/ui)\)", line)
        assert found, line
        url = found.group(1)
        assert found.group(2) == f"{url}/ui" and "platforms: web" in line
        async with browser_session() as browser:
            async with browser.get(found.group(2), headers={"Accept": "text/html"}) as page:
                assert page.status == 200 and "<title>hermes · chat</title>" in await page.text()
            csrf = await csrf_of(browser, url)
            feed = await open_feed(browser, url)
            async with browser.post(f"{url}/ui/api/chat/send", json={"text": "echo: from run"},
                                    headers={"X-CSRF-Token": csrf}) as r:
                assert r.status == 202
            await feed.until(lambda ev: any(e["type"] == "text" and e["final"] and e["text"] == "from run"
                                            for e in ev))
            feed.close()
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), DEADLINE) == 0
        assert "Traceback" not in (await proc.stderr.read()).decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
