"""``hermes-gateway send --platform discord``: text and a file into a channel, each exactly once (REST only)."""

from __future__ import annotations

import asyncio
import os
import sys

import yaml

from discord_test_support import SECRET_PART, TOKEN


async def test_send_delivers_text_and_a_file_once(api, tmp_path):
    chart = tmp_path / "chart.txt"
    chart.write_bytes(b"up and to the right\n")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "store": {"path": str(tmp_path / "store.db")},
        "platforms": {"discord": {"enabled": True, "token": "${DISCORD_TOKEN}", "api_base_url": api.api_base_url,
                                  "gateway_url": api.gateway_url}},
    }))
    env = {**os.environ, "DISCORD_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    dm = api.dm()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "send", "--platform", "discord", "--chat", dm, "--config", str(path),
        "--file", str(chart), "Weekly **numbers** attached", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    channel = api.channel(dm)
    assert [m.text for m in channel.messages if not m.media] == ["Weekly **numbers** attached"]
    assert [(u.filename, u.data) for u in channel.uploads] == [("chart.txt", b"up and to the right\n")]
    assert api.identifies == 0, "send never connects the gateway websocket"
    assert not channel.rate_limited and SECRET_PART not in (out + err).decode()
