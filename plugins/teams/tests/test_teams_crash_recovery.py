"""A gateway killed mid-reply (SIGKILL) in a personal chat, then started again: the stream it left open is
finished, once, with the core's note (``conversation.after_crash: note``), and the next message is answered.

A real ``hermes-gateway run`` on the emulator, the demo model streaming slowly, so the kill lands while the
reply is a stream in progress (Teams would end it only at its two-minute cap).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import yaml

from hermes_teams.emulator import APP_PASSWORD, TeamsEmulator
from teams_test_support import eventually

WORDS = " ".join(f"word{i}" for i in range(80))
CRASH_NOTE = "— interrupted; please send your message again"
CHAT = "a:crash"


def write_config(tmp_path: Path, api: TeamsEmulator) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 8}},
        "api_server": {"enabled": False, "host": "127.0.0.1", "port": 0},
        "streaming": {"teams": True, "min_tokens": 2},
        "store": {"path": str(tmp_path / "state.db")},
        "conversation": {"after_crash": "note"},
        "platforms": {"teams": {"enabled": True, **api.settings()}},
    }))
    return path


async def start(api: TeamsEmulator, path: Path) -> asyncio.subprocess.Process:
    env = {**os.environ, "HERMES_LOAD_PLUGINS": "teams", "HERMES_HOME": str(path.parent / "home")}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    banner = await asyncio.wait_for(process.stdout.readline(), 60)
    listening = re.search(rb"listening on (http://127\.0\.0\.1:\d+)", banner)
    assert listening, banner
    api.bot_url = listening.group(1).decode() + "/api/messages"
    return process


async def test_a_stream_cut_by_sigkill_is_finished_with_the_note_at_restart(tmp_path):
    async with TeamsEmulator() as api:
        path = write_config(tmp_path, api)
        process = await start(api, path)
        try:
            await api.send(CHAT, "echo: " + WORDS)
            await eventually(lambda: bool(api.still_streaming()) and "word3" in api.screen(CHAT)[-1],
                             lambda: api.screen(CHAT), timeout=30)
        finally:
            process.send_signal(signal.SIGKILL)
            await process.wait()
        cut = api.screen(CHAT)[-1]
        process = await start(api, path)
        try:
            await eventually(lambda: not api.still_streaming() and api.screen(CHAT)[-1].endswith(CRASH_NOTE),
                             lambda: (api.screen(CHAT), api.violations), timeout=30)
            assert api.screen(CHAT) == [f"{cut.rstrip()}\n\n{CRASH_NOTE}"]
            await api.send(CHAT, "echo: still there?")
            await eventually(lambda: api.screen(CHAT)[-1] == "still there?", lambda: api.screen(CHAT), timeout=30)
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 30)
        assert len(api.screen(CHAT)) == 2 and api.violations == []
        assert APP_PASSWORD not in str(api.violations)
