"""A gateway killed mid-reply (SIGKILL), then started again: the cut reply is finished, once (issue 26).

A real ``hermes-gateway run`` on the Telegram emulator, the built-in demo
model streaming slowly, so the kill lands while the reply shows a cursor.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import yaml

from hermes_gateway.testing import stored_history
from telegram_test_support import CURSOR, TOKEN, eventually

WORDS = " ".join(f"word{i}" for i in range(80))

#: The line a reply a crash cut ends with (conversation.after_crash: note), as the person sees it.
CRASH_NOTE = "— interrupted; please send your message again"


def write_config(tmp_path: Path, base_url: str, after_crash: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 8}},
        "api_server": {"enabled": False},
        "streaming": {"telegram": True, "edit_interval": 0.3, "min_tokens": 2},
        "store": {"path": str(tmp_path / "state.db")},
        "conversation": {"after_crash": after_crash},
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", "base_url": base_url,
                                   "poll_timeout": 1}},
    }))
    return path


async def start(path: Path) -> asyncio.subprocess.Process:
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    banner = await asyncio.wait_for(process.stdout.readline(), 60)
    assert b"platforms: telegram" in banner, banner
    return process


async def stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.kill()
        await process.wait()


async def kill_mid_reply(api, path: Path) -> None:
    """Start, ask for a long echo, SIGKILL once a few words show with the cursor."""
    process = await start(path)
    try:
        await api.push_message(42, "echo: " + WORDS)
        await eventually(lambda: any(t.endswith(CURSOR) and "word5" in t for t in api.screen(42)),
                         lambda: api.screen(42), timeout=30)
    finally:
        process.send_signal(signal.SIGKILL)
        await process.wait()
    assert api.screen(42)[-1].endswith(CURSOR)  # what a crash leaves: the cut reply keeps its cursor


async def history(tmp_path: Path) -> list[dict]:
    return await stored_history(tmp_path / "state.db", "telegram", "42")


async def test_a_reply_cut_by_sigkill_loses_its_cursor_and_ends_with_the_note_at_restart(api, tmp_path):
    path = write_config(tmp_path, api.base_url, "note")
    await kill_mid_reply(api, path)
    cut = api.screen(42)[-1][: -len(CURSOR)]
    process = await start(path)
    try:
        # within 5 s of the restarted gateway's start
        await eventually(lambda: api.screen(42) and api.screen(42)[-1].endswith(CRASH_NOTE),
                         lambda: api.screen(42), timeout=5)
        screen = api.screen(42)
        assert len(screen) == 1 and CURSOR.strip() not in screen[0], screen
        assert screen[0].startswith(cut.rstrip()) and screen[0] == f"{cut.rstrip()}\n\n{CRASH_NOTE}"
        # the person can go on: the next message is answered, and the history kept the cut one
        await api.push_message(42, "echo: still there?")
        await eventually(lambda: api.screen(42)[-1] == "still there?", lambda: api.screen(42), timeout=20)
        await asyncio.sleep(0.5)  # nothing else arrives (no second note, no second answer)
        assert len(api.screen(42)) == 2 and sum(CRASH_NOTE in t for t in api.screen(42)) == 1
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 30)
    texts = [m["content"] for m in await history(tmp_path)]
    assert texts[0] == "echo: " + WORDS and texts[1].startswith("word0 word1") and CURSOR.strip() not in texts[1]
    assert texts[2:] == ["echo: still there?", "still there?"]


async def test_with_retry_the_cut_message_is_answered_again_once(api, tmp_path):
    path = write_config(tmp_path, api.base_url, "retry")
    await kill_mid_reply(api, path)
    process = await start(path)
    try:
        await eventually(lambda: all(CURSOR.strip() not in t for t in api.screen(42)), lambda: api.screen(42),
                         timeout=5)
        await eventually(lambda: api.screen(42)[-1] == WORDS, lambda: api.screen(42), timeout=40)
        await asyncio.sleep(1.0)
        screen = api.screen(42)
        assert len(screen) == 2 and screen.count(WORDS) == 1, screen  # the cut one, then the full answer once
        assert WORDS.startswith(screen[0]) and CRASH_NOTE not in screen[0]
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 30)
    texts = [m["content"] for m in await history(tmp_path)]
    assert texts == ["echo: " + WORDS, WORDS]


async def test_a_message_waiting_behind_the_cut_reply_is_not_lost_to_sigkill(api, tmp_path):
    """A second message that came while the first reply was written waits its turn. SIGKILL then lost it: its
    update was confirmed to Telegram (never sent again) and its id saved (a redelivery dropped), but nothing else
    of it was kept, and nobody told the person. It is kept while it waits, so the restart tells them."""
    path = write_config(tmp_path, api.base_url, "note")
    process = await start(path)
    try:
        await api.push_message(42, "echo: " + WORDS)
        await eventually(lambda: any(t.endswith(CURSOR) and "word5" in t for t in api.screen(42)),
                         lambda: api.screen(42), timeout=30)
        await api.push_message(42, "echo: and this one?")
        await eventually(lambda: api.pending_updates == 0, lambda: api.pending_updates, timeout=10)  # taken
        await asyncio.sleep(0.5)  # (its record is written within milliseconds of its arrival)
    finally:
        process.send_signal(signal.SIGKILL)
        await process.wait()
    assert len(api.screen(42)) == 1 and api.screen(42)[0].endswith(CURSOR)  # the queued one was never started
    cut = api.screen(42)[0][: -len(CURSOR)].rstrip()
    process = await start(path)
    try:
        await eventually(lambda: api.screen(42) == [f"{cut}\n\n{CRASH_NOTE}", CRASH_NOTE], lambda: api.screen(42),
                         timeout=10)
        await asyncio.sleep(0.5)  # nothing else arrives
        assert len(api.screen(42)) == 2
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 30)
    users = [m["content"] for m in await history(tmp_path) if m["role"] == "user"]
    assert users == ["echo: " + WORDS, "echo: and this one?"]
