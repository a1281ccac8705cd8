"""``hermes-gateway send --platform telegram``: text and files into a chat, exactly once, within the chat's budget."""

from __future__ import annotations

import asyncio
import os
import sys

import yaml

from hermes_gateway import RateBudget
from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import SECRET_HALF, TOKEN

PRIVATE = RateBudget(rate=1.0, burst=1)   # what Telegram enforces in a private chat (the emulator is strict)
#: The same, counted with 0.4 s for a call's transit: the emulator counts a call when it arrives and the gateway
#: charges it when it sends, and on a machine loaded by parallel test workers one call's way from a `send`
#: process to the emulator can take longer than the next one's (seen: 0.15 s at 0.1 s allowed; 0.31 and 0.38 s
#: at 0.25 s allowed, load 3-8). What these tests catch stays past that: two senders without the shared budget
#: send at the same moment, and a first call made cold (the SDK imported and the connection opened after its
#: charge, no warm_up) lands hundreds of ms late.
ARRIVALS = RateBudget(rate=1 / 0.6, burst=1)



def write_config(tmp_path, api, name="config.yaml", **extra) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({
        "store": {"path": str(tmp_path / "store.db")},
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", "base_url": api.base_url,
                                   "home_chat": "555"}},
        **extra,
    }))
    return str(path)


async def send(config: str, *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "send", "--config", config, "--platform", "telegram", *args,
        env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(stdin), 90)
    return process.returncode, out.decode(), err.decode()


async def test_text_and_a_file_arrive_once(tmp_path):
    report = tmp_path / "report.csv"
    report.write_bytes(b"day,errors\nmon,0\n")
    async with BotApiEmulator(TOKEN, rate_limit=ARRIVALS) as api:
        code, out, err = await send(write_config(tmp_path, api), "--chat", "777", "--file", str(report),
                                    "Nightly *report* attached")
        assert code == 0, err
        chat = api.chat(777)
        assert chat.screen[0] == "Nightly report attached"   # Markdown rendered as Telegram renders replies
        assert ("italic", "report") in chat.formatted(0)
        assert [(m.filename, m.data) for m in chat.uploads] == [("report.csv", b"day,errors\nmon,0\n")]
        assert len(chat.messages) == 2 and chat.violations == []   # any 429 was waited out, nothing sent twice
        # the client is warmed up before the first budgeted call (warm_up): every call lands in its slot
        assert chat.rate_limited == [], [(round(c.at, 2), c.method, c.outcome) for c in chat.calls]
        assert SECRET_HALF not in out + err


async def test_home_chat_and_text_from_stdin(tmp_path):
    async with BotApiEmulator(TOKEN, rate_limit=PRIVATE) as api:
        code, _, err = await send(write_config(tmp_path, api), "--chat", "home", "-", stdin=b"disk full on db-1\n")
        assert code == 0, err
        assert api.screen(555) == ["disk full on db-1"]


async def test_a_chat_that_refuses_exits_non_zero_with_one_line(tmp_path):
    async with BotApiEmulator(TOKEN, rate_limit=PRIVATE) as api:
        api.block_bot(888)
        code, _, err = await send(write_config(tmp_path, api), "--chat", "888", "anyone there?")
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("hermes-gateway:")]
    assert len(lines) == 1 and lines[0].startswith("hermes-gateway: send to telegram chat 888 failed: ")
    assert "blocked" in lines[0]


async def test_two_senders_sharing_redis_stay_within_the_chats_budget(tmp_path, redis_server):
    redis_server.flush()
    files = []
    for i in range(2):
        path = tmp_path / f"chart{i}.txt"
        path.write_bytes(f"chart {i}\n".encode())
        files.append(path)
    async with BotApiEmulator(TOKEN, rate_limit=ARRIVALS) as api:
        coordination = {"coordination": {"url": redis_server.url}}
        first = write_config(tmp_path, api, "a.yaml", **coordination)
        second = write_config(tmp_path, api, "b.yaml", **coordination)
        results = await asyncio.gather(
            send(first, "--chat", "777", "--file", str(files[0]), "--file", str(files[1]), "from replica A"),
            send(second, "--chat", "777", "--file", str(files[0]), "--file", str(files[1]), "from replica B"))
        assert [code for code, _, _ in results] == [0, 0], [err for _, _, err in results]
        chat = api.chat(777)
        assert sorted(m.text for m in chat.messages if m.media is None) == ["from replica A", "from replica B"]
        assert sorted(m.filename for m in chat.uploads) == ["chart0.txt", "chart0.txt", "chart1.txt", "chart1.txt"]
        # without the shared budget two senders collide on every call; with it, none does
        assert chat.rate_limited == [], [(round(c.at, 2), c.method, c.outcome) for c in chat.calls]
        assert chat.violations == []
