"""A hook from outside answered into a Telegram group (issue 38): once, also when GitHub redelivers it after a restart."""

from __future__ import annotations

import hashlib
import hmac
import json

import aiohttp

from hermes_telegram import plugin
from telegram_test_support import FAST_LIMITS, TestGateway, config, eventually

SECRET = "gh-webhook-secret-8d1e0c"
GROUP = -1001234


def gateway(api, store: str) -> TestGateway:
    cfg = {**config(api.base_url, tokens_per_second=1000), "store": {"path": store},
           "hooks": [{"name": "ci", "secret": "${GH_SECRET}", "verify": "github", "chat": f"telegram:{GROUP}",
                      "prompt": "echo: CI failed on {json.repository.full_name}: {json.workflow_run.name}"}]}
    return TestGateway(cfg, plugin, limits=FAST_LIMITS, shutdown_grace=0.5, env={"GH_SECRET": SECRET})


async def deliver(url: str, body: bytes, signature: str, delivery: str) -> int:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/hooks/ci", data=body, headers={
                "X-GitHub-Event": "workflow_run", "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": signature,
                "Content-Type": "application/json"}) as response:
            return response.status


async def test_github_hook_reply_appears_in_the_group_once_across_redelivery_and_restart(api, tmp_path):
    store = str(tmp_path / "store.db")
    body = json.dumps({"action": "completed", "repository": {"full_name": "acme/app"},
                       "workflow_run": {"name": "tests", "conclusion": "failure"}}).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    forged = "sha256=" + hmac.new(b"guess", body, hashlib.sha256).hexdigest()
    expected = "CI failed on acme/app: tests"
    async with gateway(api, store) as first:
        assert await deliver(first.url, body, forged, "forged-1") == 401
        assert await deliver(first.url, body, signature, "d-1") == 202
        await eventually(lambda: api.screen(GROUP) == [expected], lambda: api.screen(GROUP))
        assert await deliver(first.url, body, signature, "d-1") == 200  # GitHub's "Redeliver"
    async with gateway(api, store) as second:  # the same store: the delivery id is remembered
        assert await deliver(second.url, body, signature, "d-1") == 200
        other = body.replace(b"tests", b"lint")
        other_sig = "sha256=" + hmac.new(SECRET.encode(), other, hashlib.sha256).hexdigest()
        assert await deliver(second.url, other, other_sig, "d-2") == 202
        await eventually(lambda: api.screen(GROUP) == [expected, "CI failed on acme/app: lint"],
                         lambda: api.screen(GROUP))
        history = await second.history("telegram", str(GROUP))
    assert [m["content"] for m in history if m["role"] == "assistant"][:1] == [expected]
    assert not api.chat(GROUP).violations
