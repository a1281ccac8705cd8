"""``hermes-gateway ask --platform whatsapp``: one turn sent to a user, the plugin configured by its startup hook."""

from __future__ import annotations

import asyncio
import os
import sys

import yaml

from whatsapp_test_support import APP_SECRET, PHONE_ID, SECRETS, TOKEN, USER, VERIFY_TOKEN


async def test_ask_sends_one_reply_to_a_whatsapp_user(meta, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "platforms": {"whatsapp": {"enabled": True, "access_token": "${WHATSAPP_TOKEN}", "phone_number_id": PHONE_ID,
                                   "app_secret": "${WHATSAPP_APP_SECRET}", "verify_token": VERIFY_TOKEN,
                                   "api_base_url": meta.base_url}},
    }))
    env = {**os.environ, "WHATSAPP_TOKEN": TOKEN, "WHATSAPP_APP_SECRET": APP_SECRET}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "ask", "--config", str(path), "--platform", "whatsapp",
        "--chat", USER, "echo: straight to the phone", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert meta.screen(USER) == ["straight to the phone"]
    assert [m.quotes for m in meta.user(USER).messages] == [None], "nothing to quote: no question came in"
    assert not any(secret in (out + err).decode() for secret in SECRETS)
