"""A gateway killed mid-reply (SIGKILL), then started again: the cut reply loses its cursor by one more edit of
the same message (within Signal's 10) and ends with the core's note, once; the next message is answered."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import yaml

from hermes_signal.emulator import MAX_EDITS
from signal_test_support import ACCOUNT, ALICE, eventually

WORDS = " ".join(f"word{i}" for i in range(80))
CURSOR = " ▌"
CRASH_NOTE = "— interrupted; please send your message again"


def write_config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 8}},
        "api_server": {"enabled": False},
        "streaming": {"signal": {"enabled": True, "edit_interval": 0.3, "min_tokens": 2}},
        "store": {"path": str(tmp_path / "state.db")},
        "conversation": {"after_crash": "note"},
        "platforms": {"signal": {"enabled": True, "account": ACCOUNT, "url": url}},
    }))
    return path


async def start(path: Path, tmp_path: Path) -> asyncio.subprocess.Process:
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    banner = await asyncio.wait_for(process.stdout.readline(), 60)
    assert b"signal" in banner, banner
    return process


async def test_a_reply_cut_by_sigkill_is_finished_with_the_note_by_an_edit_at_restart(daemon, tmp_path):
    path = write_config(tmp_path, daemon.base_url)
    process = await start(path, tmp_path)
    try:
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls, timeout=60)
        daemon.push_message(ALICE, "echo: " + WORDS)
        await eventually(lambda: any(t.endswith(CURSOR) and "word5" in t for t in daemon.screen(ALICE)),
                         lambda: daemon.screen(ALICE), timeout=30)
    finally:
        process.send_signal(signal.SIGKILL)
        await process.wait()
    (cut,) = daemon.screen(ALICE)
    assert cut.endswith(CURSOR)                       # what a crash leaves
    process = await start(path, tmp_path)
    try:
        await eventually(lambda: daemon.screen(ALICE)[-1].endswith(CRASH_NOTE), lambda: daemon.screen(ALICE),
                         timeout=30)
        (repaired,) = daemon.screen(ALICE)
        assert repaired == f"{cut[:-len(CURSOR)].rstrip()}\n\n{CRASH_NOTE}"
        daemon.push_message(ALICE, "echo: still there?")
        await eventually(lambda: daemon.screen(ALICE)[-1:] == ["still there?"], lambda: daemon.screen(ALICE))
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 30)
    assert daemon.bot_messages(ALICE)[0].edits <= MAX_EDITS and daemon.violations == []
    assert len(daemon.screen(ALICE)) == 2
