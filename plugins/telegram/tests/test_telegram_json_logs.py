"""``logging.format: json``: every stderr line of a running gateway is a JSON object; a turn's lines carry its ids."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

import yaml

from telegram_test_support import SECRET_HALF, TOKEN, eventually


async def test_a_turn_logs_json_lines_with_its_ids_and_no_token(api, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "api_server": {"enabled": False},
        "logging": {"format": "json", "level": "debug"},
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", "base_url": api.base_url,
                                   "poll_timeout": 2}},
    }))
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        await asyncio.wait_for(process.stdout.readline(), 30)
        await api.push_message(42, "echo: hello in JSON")
        await eventually(lambda: api.screen(42) == ["hello in JSON"], lambda: api.chat(42).messages)
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err
    lines = err.decode().splitlines()
    assert lines, "no log line at level debug"
    records = [json.loads(line) for line in lines]  # every line, or this fails naming the one that is not JSON
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records)
    in_turn = [r for r in records if r.get("platform") == "telegram" and r.get("chat_id") == "42"]
    assert in_turn, records
    assert all(r.get("message_id") and r.get("update_id") for r in in_turn), in_turn
    assert SECRET_HALF.lower() not in err.decode().lower()
