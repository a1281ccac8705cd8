"""``hermes-gateway send --platform whatsapp``: text and a file to a user's phone, each exactly once."""

from __future__ import annotations

import asyncio
import os
import sys

import yaml

from whatsapp_test_support import APP_SECRET, PHONE_ID, SECRETS, TOKEN, USER, VERIFY_TOKEN


async def test_send_delivers_text_and_a_file_once(meta, tmp_path):
    invoice = tmp_path / "invoice.txt"
    invoice.write_bytes(b"total: 42 EUR\n")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "store": {"path": str(tmp_path / "store.db")},
        "platforms": {"whatsapp": {"enabled": True, "access_token": "${WHATSAPP_TOKEN}", "phone_number_id": PHONE_ID,
                                   "app_secret": "${WHATSAPP_APP_SECRET}", "verify_token": VERIFY_TOKEN,
                                   "api_base_url": meta.base_url, "home_chat": USER}},
    }))
    env = {**os.environ, "WHATSAPP_TOKEN": TOKEN, "WHATSAPP_APP_SECRET": APP_SECRET}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "send", "--config", str(path), "--platform", "whatsapp",
        "--chat", "home", "--file", str(invoice), "Your invoice", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert meta.screen(USER)[0] == "Your invoice"
    assert meta.attachments(USER) == [("invoice.txt", b"total: 42 EUR\n")]
    assert len(meta.uploads) == 1 and not meta.user(USER).violations
    assert not any(secret in (out + err).decode() for secret in SECRETS)
