"""Status reactions on the WhatsApp emulator: reaction messages on the user's message, the last one shown."""

from __future__ import annotations

from hermes_gateway.testing import TestGateway, eventually
from hermes_whatsapp import plugin
from whatsapp_test_support import config, webhook_url

USER = "4915100000042"


async def test_received_then_done_on_the_users_message(meta):
    data = {**config(meta, tokens_per_second=10), "reactions": {"received": "👀", "done": "👍"}}
    async with TestGateway(data, plugin, shutdown_grace=1.0) as gateway:
        payload = meta.text_message(USER, "echo: " + " ".join(f"w{i}" for i in range(12)))
        wamid = payload["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
        assert await meta.deliver(webhook_url(gateway), payload) == 200
        await eventually(lambda: meta.user(USER).reactions.get(wamid) == "👍", lambda: meta.user(USER).reaction_log)
    user = meta.user(USER)
    assert [emoji for _, emoji, _ in user.reaction_log] == ["👀", "👍"]
    assert meta.screen(USER) == [" ".join(f"w{i}" for i in range(12))]
    assert not user.violations
