"""``hermes-gateway send --platform slack``: text and a file into a channel, each exactly once."""

from __future__ import annotations

import asyncio
import sys

from test_slack_run_command import environment, leaked, write_config


async def test_send_delivers_text_and_a_file_once(api, tmp_path):
    api.channel("C0OPS", "channel")
    chart = tmp_path / "chart.txt"
    chart.write_bytes(b"p99 = 120 ms\n")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "send", "--config", str(write_config(tmp_path, api.base_url)),
        "--platform", "slack", "--chat", "C0OPS", "--file", str(chart), "Latency report", env=environment(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    texts = [line for line in api.screen("C0OPS") if not line.startswith("[")]
    assert texts == ["Latency report"]
    assert api.attachments("C0OPS") == [("chart.txt", b"p99 = 120 ms\n")]
    assert not api.violations and leaked(out + err) == []


async def test_send_into_a_thread_stays_in_it(api, tmp_path):
    api.channel("C0OPS", "channel")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "send", "--config", str(write_config(tmp_path, api.base_url)),
        "--platform", "slack", "--chat", "C0OPS", "--thread", "1700000000.000100", "deploy finished",
        env=environment(tmp_path), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert api.screen("C0OPS", "1700000000.000100") == ["deploy finished"]
    assert not api.violations
