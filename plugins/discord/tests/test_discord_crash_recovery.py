"""A gateway killed mid-reply (SIGKILL), then started again, on the Discord emulator: the cut reply is finished.

The same promise as on Telegram (issue 26): within 5 s of the restart the
message shows no cursor and ends with the note, the history holds the
person's message, and the next message is answered.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import yaml

from discord_test_support import TOKEN, eventually
from hermes_gateway._core.recovery import CRASH_NOTE
from hermes_gateway._core.store import ConversationKey, SQLiteStore

CURSOR = " ▌"
WORDS = " ".join(f"word{i}" for i in range(80))


async def start(api, tmp_path: Path, after_crash: str = "note") -> asyncio.subprocess.Process:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 8}},
        "api_server": {"enabled": False},
        "streaming": {"discord": True, "min_tokens": 2},
        "store": {"path": str(tmp_path / "state.db")},
        "conversation": {"after_crash": after_crash},
        "platforms": {"discord": {"enabled": True, "token": "${DISCORD_TOKEN}", "api_base_url": api.api_base_url,
                                  "gateway_url": api.gateway_url}},
    }))
    env = {**os.environ, "DISCORD_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    banner = await asyncio.wait_for(process.stdout.readline(), 60)
    assert b"platforms: discord" in banner, banner
    return process


async def test_a_reply_cut_by_sigkill_ends_with_the_note_at_restart_on_discord(loose_api, tmp_path):
    api = loose_api
    dm = api.dm()
    process = await start(api, tmp_path)
    try:
        await api.wait_connected()
        await api.push_message(dm, "echo: " + WORDS)
        await eventually(lambda: any(t.endswith(CURSOR) and "word5" in t for t in api.screen(dm)),
                         lambda: api.screen(dm), timeout=30)
    finally:
        process.send_signal(signal.SIGKILL)
        await process.wait()
    cut = api.screen(dm)[-1]
    assert cut.endswith(CURSOR)
    process = await start(api, tmp_path)
    try:
        await eventually(lambda: api.screen(dm)[-1].endswith(CRASH_NOTE), lambda: api.screen(dm), timeout=5)
        assert api.screen(dm) == [f"{cut[: -len(CURSOR)].rstrip()}\n\n{CRASH_NOTE}"]
        await api.wait_connected()
        await api.push_message(dm, "echo: still there?")
        await eventually(lambda: api.screen(dm)[-1] == "still there?", lambda: api.screen(dm), timeout=20)
        assert len(api.screen(dm)) == 2
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 30)
    store = SQLiteStore(tmp_path / "state.db")
    try:
        texts = [m["content"] for m in await store.history(ConversationKey("discord", dm))]
    finally:
        await store.close()
    assert texts[0] == "echo: " + WORDS and texts[1].startswith("word0") and texts[2:] == ["echo: still there?",
                                                                                           "still there?"]
