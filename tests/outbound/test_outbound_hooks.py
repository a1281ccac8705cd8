"""``POST /hooks/NAME`` in a real gateway (the reference platform, the demo model): who gets a turn, and who a 4xx.

Each refusal is followed by a call that is accepted: the chat then shows that
call's reply and nothing before it, so a refused call that had started a turn
(which would run first in the chat's lane) would show.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from typing import Any

import aiohttp
import pytest

from hermes_gateway import RateBudget
from hermes_gateway.testing import ReferencePlatform, TestGateway, eventually

SECRET = "hook-secret-4f9a1c2e7b"
FAST = {"default": RateBudget(rate=200.0, burst=20)}


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def gateway_with(platform: ReferencePlatform, *hooks: dict[str, Any], **config: Any) -> TestGateway:
    return TestGateway({"model": {"demo": {"tokens_per_second": 1000}}, "platforms": {"reference": {"enabled": True}},
                        "hooks": list(hooks), **config}, platform)


def hook(name: str = "ci", verify: str = "github", prompt: str = "echo: {json.msg}", **more: Any) -> dict[str, Any]:
    return {"name": name, "secret": SECRET, "verify": verify, "chat": "reference:ops", "prompt": prompt, **more}


async def post(url: str, body: bytes, headers: dict[str, str] | None = None,
               method: str = "POST") -> tuple[int, dict[str, Any], dict[str, str]]:
    async with aiohttp.ClientSession() as http:
        async with http.request(method, url, data=body, headers=headers or {}) as response:
            return response.status, await response.json(), dict(response.headers)


async def accepted_reply(gateway: TestGateway, platform: ReferencePlatform, text: str,
                         before: tuple[str, ...] = ()) -> None:
    """A valid GitHub-signed call whose reply is ``text``: 202, then the chat shows ``before`` and ``text``, no more."""
    body = json.dumps({"msg": text}).encode()
    status, answer, _ = await post(f"{gateway.url}/hooks/ci", body, {"X-Hub-Signature-256": sign(body)})
    assert (status, answer["status"]) == (202, "accepted")
    await eventually(lambda: platform.chat("ops").screen == [*before, text], lambda: platform.chat("ops").screen)


async def test_a_github_signed_call_is_answered_202_and_its_reply_is_recorded_in_the_chat():
    platform = ReferencePlatform(budgets=FAST)
    async with gateway_with(platform, hook(prompt="echo: CI of {json.repository.full_name} is {json.status}"
                                                  "{json.missing.field}")) as gateway:
        body = json.dumps({"repository": {"full_name": "acme/app"}, "status": "red"}).encode()
        status, answer, _ = await post(f"{gateway.url}/hooks/ci", body,
                                       {"X-Hub-Signature-256": sign(body), "X-GitHub-Delivery": "d-1"})
        assert status == 202 and answer["id"].startswith("hook_") and answer["hook"] == "ci"
        await eventually(lambda: platform.chat("ops").screen == ["CI of acme/app is red"],
                         lambda: platform.chat("ops").screen)
        history: list[dict[str, Any]] = []
        for _ in range(500):  # recorded right after the reply is delivered
            history = await gateway.history("reference", "ops")
            if history:
                break
            await asyncio.sleep(0.02)
    assert [(m["role"], m["content"]) for m in history] == [
        ("user", "echo: CI of acme/app is red"), ("assistant", "CI of acme/app is red")]


async def test_a_redelivery_gets_no_second_turn_and_a_forged_or_unsigned_call_none_at_all():
    platform = ReferencePlatform(budgets=FAST)
    async with gateway_with(platform, hook()) as gateway:
        forged = json.dumps({"msg": "forged"}).encode()
        status, answer, _ = await post(f"{gateway.url}/hooks/ci", forged,
                                       {"X-Hub-Signature-256": sign(forged, "not-the-secret")})
        assert status == 401 and answer["error"]["type"] == "authentication_error"
        assert SECRET not in json.dumps(answer)
        status, answer, _ = await post(f"{gateway.url}/hooks/ci", forged)
        assert status == 401 and "X-Hub-Signature-256" in answer["error"]["message"]
        status, _, _ = await post(f"{gateway.url}/hooks/ci", forged, {"X-Hub-Signature-256": "md5=abc"})
        assert status == 401
        body = json.dumps({"msg": "build 7 failed"}).encode()
        headers = {"X-Hub-Signature-256": sign(body), "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958"}
        assert (await post(f"{gateway.url}/hooks/ci", body, headers))[0] == 202
        status, answer, _ = await post(f"{gateway.url}/hooks/ci", body, headers)
        assert (status, answer["status"]) == (200, "duplicate")
        await eventually(lambda: platform.chat("ops").screen == ["build 7 failed"],
                         lambda: platform.chat("ops").screen)
        # a turn for the redelivery would have run before this one, in the chat's lane
        await accepted_reply(gateway, platform, "build 8 passed", before=("build 7 failed",))


async def test_bearer_token_is_checked_before_the_body(caplog):
    caplog.set_level(logging.DEBUG)
    platform = ReferencePlatform(budgets=FAST)
    async with gateway_with(platform, hook(verify="bearer", prompt="echo: {body}")) as gateway:
        url = f"{gateway.url}/hooks/ci"
        assert (await post(url, b"x", {"Authorization": "Bearer wrong"}))[0] == 401
        assert (await post(url, b"x", {"Authorization": f"Basic {SECRET}"}))[0] == 401
        assert (await post(url, b"x"))[0] == 401
        status, _, _ = await post(url, b"deploy {json.x} done", {"Authorization": f"Bearer {SECRET}"})
        assert status == 202
        await eventually(lambda: platform.chat("ops").screen == ["deploy {json.x} done"],
                         lambda: platform.chat("ops").screen)  # the body's braces are not read as fields
    assert "refused a call" in caplog.text and SECRET not in caplog.text


async def test_generic_hmac_takes_prefixed_or_bare_hex_and_refuses_a_stale_timestamp():
    platform = ReferencePlatform(budgets=FAST)
    async with gateway_with(platform, hook(verify="hmac-sha256", prompt="echo: {json.msg}")) as gateway:
        url = f"{gateway.url}/hooks/ci"
        stale = json.dumps({"msg": "stale"}).encode()
        status, answer, _ = await post(url, stale, {"X-Signature-256": sign(stale),
                                                    "X-Signature-Timestamp": str(int(time.time()) - 600)})
        assert status == 401 and "stale" in answer["error"]["message"]
        wrong = json.dumps({"msg": "wrong"}).encode()
        assert (await post(url, wrong, {"X-Signature-256": sign(b"other")}))[0] == 401
        one = json.dumps({"msg": "one"}).encode()
        assert (await post(url, one, {"X-Signature-256": sign(one),
                                      "X-Signature-Timestamp": str(int(time.time()))}))[0] == 202
        await eventually(lambda: platform.chat("ops").screen == ["one"], lambda: platform.chat("ops").screen)
        two = json.dumps({"msg": "two"}).encode()
        assert (await post(url, two, {"X-Signature-256": sign(two).removeprefix("sha256="),
                                      "Idempotency-Key": "k1"}))[0] == 202
        assert (await post(url, two, {"X-Signature-256": sign(two), "Idempotency-Key": "k1"}))[0] == 200
        await eventually(lambda: platform.chat("ops").screen == ["one", "two"], lambda: platform.chat("ops").screen)


async def test_a_prompt_that_reads_json_refuses_a_body_that_is_not():
    platform = ReferencePlatform(budgets=FAST)
    async with gateway_with(platform, hook()) as gateway:
        for body in (b"not json", b"[" * 100_000):
            status, answer, _ = await post(f"{gateway.url}/hooks/ci", body, {"X-Hub-Signature-256": sign(body)})
            assert (status, answer["error"]["code"]) == (400, "invalid_json")
        await accepted_reply(gateway, platform, "after the bad ones")


async def test_unknown_hook_is_404_and_another_method_405():
    platform = ReferencePlatform(budgets=FAST)
    async with gateway_with(platform, hook()) as gateway:
        status, answer, _ = await post(f"{gateway.url}/hooks/nope", b"{}")
        assert (status, answer["error"]["code"]) == (404, "unknown_hook")
        status, answer, headers = await post(f"{gateway.url}/hooks/ci", b"", method="GET")
        assert (status, headers["Allow"]) == (405, "POST")


async def test_the_rate_limit_answers_429_with_retry_after():
    platform = ReferencePlatform(budgets=FAST)
    async with gateway_with(platform, hook(per_minute=1, burst=2)) as gateway:
        statuses = []
        for i in range(3):
            body = json.dumps({"msg": f"call {i}"}).encode()
            status, answer, headers = await post(f"{gateway.url}/hooks/ci", body, {"X-Hub-Signature-256": sign(body)})
            statuses.append(status)
        assert statuses == [202, 202, 429]
        assert answer["error"]["code"] == "rate_limited" and 1 <= int(headers["Retry-After"]) <= 60
        await eventually(lambda: platform.chat("ops").screen == ["call 0", "call 1"],
                         lambda: platform.chat("ops").screen)


async def raw_request(url: str, head: bytes, body_parts: list[bytes]) -> bytes:
    """Send ``head`` and ``body_parts`` but never the rest; return what the gateway answers before closing."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(head)
        for part in body_parts:
            writer.write(part)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 20)  # the gateway closes: the rest is never waited for
    finally:
        writer.close()


async def test_an_oversized_body_is_413_before_the_rest_is_sent():
    platform = ReferencePlatform(budgets=FAST)
    async with gateway_with(platform, hook(max_bytes=1000)) as gateway:
        sig = sign(b"whatever").encode()
        announced = await raw_request(gateway.url, b"POST /hooks/ci HTTP/1.1\r\nHost: localhost\r\n"
                                      b"X-Hub-Signature-256: " + sig + b"\r\nContent-Length: 10000000\r\n\r\n",
                                      [b"{" * 100])
        assert announced.startswith(b"HTTP/1.1 413") and b"body_too_large" in announced
        streamed = await raw_request(gateway.url, b"POST /hooks/ci HTTP/1.1\r\nHost: localhost\r\n"
                                     b"X-Hub-Signature-256: " + sig + b"\r\nTransfer-Encoding: chunked\r\n\r\n",
                                     [b"400\r\n" + b"a" * 1024 + b"\r\n"])  # 1 KiB sent, the end never
        assert streamed.startswith(b"HTTP/1.1 413") and b"max_bytes" in streamed
        unsigned = await raw_request(gateway.url, b"POST /hooks/ci HTTP/1.1\r\nHost: localhost\r\n"
                                     b"Content-Length: 500\r\n\r\n", [b"{"])  # refused before the body comes
        assert unsigned.startswith(b"HTTP/1.1 401")
        await accepted_reply(gateway, platform, "still answering")


async def test_a_hook_into_a_platform_that_is_not_enabled_stops_start_up_in_one_line():
    from hermes_gateway._core.errors import StartError

    with pytest.raises(StartError, match=r"hooks\[0\]\.chat: telegram is not an enabled platform"):
        async with gateway_with(ReferencePlatform(budgets=FAST), hook(chat="telegram:-100")):
            pass


async def test_several_workers_without_coordination_refuse_hooks_in_one_line():
    from hermes_gateway._core.errors import StartError
    from hermes_gateway._core.gateway import Gateway
    from hermes_gateway._core.http.workers import WorkerSlot

    test_gateway = gateway_with(ReferencePlatform(budgets=FAST), hook())
    gateway = Gateway(test_gateway.config, test_gateway._gateway.plugins, worker=WorkerSlot(index=1, count=2))
    with pytest.raises(StartError, match=r"api_server.workers is 2, but hooks: .* set coordination.url"):
        await gateway.start()



async def test_two_replicas_sharing_redis_take_one_delivery_once(redis_server):
    redis_server.flush()
    platform = ReferencePlatform(budgets=FAST)
    body = json.dumps({"msg": "deploy finished"}).encode()
    headers = {"X-Hub-Signature-256": sign(body), "X-GitHub-Delivery": "shared-1"}
    replicas = [gateway_with(platform, hook(), coordination={"url": redis_server.url}) for _ in range(2)]
    for replica in replicas:
        await replica.start()
    try:
        answers = [await post(f"{replica.url}/hooks/ci", body, headers) for replica in replicas]
        assert sorted(status for status, _, _ in answers) == [200, 202]
        await eventually(lambda: platform.chat("ops").screen == ["deploy finished"],
                         lambda: platform.chat("ops").screen)
        later = json.dumps({"msg": "and the next one"}).encode()
        assert (await post(f"{replicas[0].url}/hooks/ci", later, {"X-Hub-Signature-256": sign(later),
                                                                   "X-GitHub-Delivery": "shared-2"}))[0] == 202
        await eventually(lambda: platform.chat("ops").screen == ["deploy finished", "and the next one"],
                         lambda: platform.chat("ops").screen)  # the duplicate's turn would have come before it
    finally:
        for replica in replicas:
            await replica.stop()


async def test_a_sender_hanging_up_mid_body_costs_no_turn_and_no_traceback(caplog):
    caplog.set_level(logging.INFO)
    platform = ReferencePlatform(budgets=FAST)
    async with gateway_with(platform, hook()) as gateway:
        host, port = gateway.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /hooks/ci HTTP/1.1\r\nHost: localhost\r\nX-Hub-Signature-256: " + sign(b"{}").encode()
                     + b"\r\nContent-Length: 500\r\n\r\n{\"msg\":")
        await writer.drain()
        writer.close()
        await accepted_reply(gateway, platform, "after the hang-up")
    assert "Traceback" not in caplog.text and "never retrieved" not in caplog.text
