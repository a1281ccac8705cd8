"""End to end over the Events API (``mode: http``): Slack POSTs signed events to the gateway's listener."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time

import aiohttp
import pytest

from hermes_slack import EVENTS_PATH
from slack_test_support import CURSOR, eventually
from slack_test_support import gateway as make_gateway

SENTENCE = "Signed and delivered over HTTP, this reply streams into the thread word by word."


def settled(api, channel, thread):
    screen = api.screen(channel, thread)
    return bool(screen) and not api.still_streaming() and not any(CURSOR.strip() in t for t in screen)


def http_gateway(api, **cfg):
    return make_gateway(api, mode="http", **cfg)


async def started(gateway, api):
    await gateway.start()
    api.events_url = gateway.url + EVENTS_PATH


async def test_url_verification_is_answered_with_the_challenge(api):
    gateway = http_gateway(api)
    try:
        await started(gateway, api)
        status, text = await api.url_verification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")
    finally:
        await gateway.stop()
    assert status == 200 and json.loads(text) == {"challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}


async def test_a_signed_dm_is_answered_in_its_thread(api):
    reply = " ".join([SENTENCE] * 4)
    gateway = http_gateway(api, tokens_per_second=150)
    try:
        await started(gateway, api)
        ts = await api.push_message("D0HTTP", f"echo: {reply}", kind="im")
        await eventually(lambda: settled(api, "D0HTTP", ts), lambda: api.screen("D0HTTP"))
        await eventually(lambda: len(api.deliveries) >= 2 and all(d.status for d in api.deliveries),
                         lambda: api.deliveries)  # the bot's own echo too
    finally:
        await gateway.stop()
    assert api.screen("D0HTTP", ts) == [reply] and api.screen("D0HTTP") == [reply]
    assert all(d.status == 200 for d in api.deliveries), [(d.event_id, d.status) for d in api.deliveries]
    assert not api.violations


async def test_a_badly_signed_or_stale_request_gets_401_and_no_reply(api):
    gateway = http_gateway(api)
    try:
        await started(gateway, api)
        channel = api.channel("D0FORGED", "im")
        body = json.dumps(api.event_payload({"type": "message", "channel": channel.id, "user": "U0EVE",
                                             "text": "echo: forged", "ts": "1800009999.000001",
                                             "channel_type": "im"}))
        forged = await api.post_signed(body, signature="v0=" + "0" * 64)
        stale = await api.post_signed(body, timestamp=int(time.time()) - 6 * 60)
        unsigned = await api.post_signed(body, signature="")
        challenge = await api.post_signed(json.dumps({"type": "url_verification", "challenge": "x"}),
                                          signature="v0=" + "1" * 64)
        await asyncio.sleep(0.3)
    finally:
        await gateway.stop()
    assert [forged[0], stale[0], unsigned[0], challenge[0]] == [401, 401, 401, 401]
    assert "x" != challenge[1]
    assert api.screen("D0FORGED") == [] and not [c for c in api.calls if c.method.startswith("chat.")]


async def test_slacks_retry_of_an_event_gets_no_second_reply(api):
    gateway = http_gateway(api)
    try:
        await started(gateway, api)
        ts = await api.push_message("D0RETRY", "echo: answered once over http", kind="im")
        await eventually(lambda: settled(api, "D0RETRY", ts), lambda: api.screen("D0RETRY"))
        [event_id] = [d.event_id for d in api.deliveries if api._payloads[d.event_id]["event"].get("ts") == ts]
        await api.redeliver(event_id)
        await api.redeliver(event_id)
        await asyncio.sleep(0.3)
    finally:
        await gateway.stop()
    attempts = [(d.attempt, d.status) for d in api.deliveries if d.event_id == event_id]
    assert attempts == [(0, 200), (1, 200), (2, 200)], "each retry (X-Slack-Retry-Num) is acknowledged"
    assert api.screen("D0RETRY") == ["answered once over http"]


async def test_the_request_is_answered_before_the_model_runs(api):
    reply = "one two three four five six seven eight nine ten"
    gateway = http_gateway(api, tokens_per_second=3)
    try:
        await started(gateway, api)
        ts = await api.push_message("D0QUICK", f"echo: {reply}", kind="im")  # returns when the POST is answered
        [delivery] = [d for d in api.deliveries if api._payloads[d.event_id]["event"].get("ts") == ts]
        assert delivery.status == 200
        assert api.screen("D0QUICK", ts) != [reply], "answered while the reply is still being written"
        await eventually(lambda: settled(api, "D0QUICK", ts), lambda: api.screen("D0QUICK"))
    finally:
        await gateway.stop()
    assert api.screen("D0QUICK", ts) == [reply]


async def test_the_route_is_only_mounted_in_http_mode(api):
    async with make_gateway(api) as gateway:  # socket mode
        await api.wait_connected()
        assert gateway.url is None, "socket mode needs no listener"


async def test_with_native_streaming_refused_a_long_reply_is_exact_once_through_edits(api):
    api.start_stream_error = "feature_not_enabled"
    reply = " ".join([SENTENCE] * 80)  # about 6,700 characters: two messages
    gateway = http_gateway(api, tokens_per_second=2000)
    try:
        await started(gateway, api)
        ts = await api.push_message("C0HTTP", f"<@U0BOT> echo: {reply}", kind="channel", user="U0DAN")
        # the whole reply on the screen (its previews show no cursor on Slack: "settled" alone can come early)
        await eventually(lambda: len(api.screen("C0HTTP", ts)) == 2 and settled(api, "C0HTTP", ts)
                         and " ".join(api.screen("C0HTTP", ts)).split() == reply.split(),
                         lambda: api.screen("C0HTTP"))
        await asyncio.sleep(0.2)
    finally:
        await gateway.stop()
    screen = api.screen("C0HTTP", ts)
    assert " ".join(screen).split() == reply.split() and all(len(t) <= 4000 for t in screen)
    assert api.screen("C0HTTP") == screen, "all of it in the thread"
    assert len(api.calls_to("chat.startStream")) == 1 and len(api.calls_to("chat.postMessage")) == 2
    assert api.calls_to("chat.update"), "previews were edits"


async def test_an_oversized_request_gets_413_and_no_reply(api):
    gateway = http_gateway(api)
    try:
        await started(gateway, api)
        channel = api.channel("D0HUGE", "im")
        body = json.dumps(api.event_payload({"type": "message", "channel": channel.id, "user": "U0EVE",
                                             "text": "echo: " + "x" * (5 * 1024 * 1024),
                                             "ts": "1800009999.000002", "channel_type": "im"}))
        status, _ = await api.post_signed(body)
        await asyncio.sleep(0.3)
    finally:
        await gateway.stop()
    assert status == 413
    assert api.screen("D0HUGE") == [] and not [c for c in api.calls if c.method.startswith("chat.")]


async def test_an_event_arriving_while_the_gateway_stops_gets_503_and_its_retry_is_answered(api):
    """Acknowledging it would lose it: the stopping gateway no longer answers, so Slack must retry."""
    gateway = http_gateway(api, tokens_per_second=20)
    await started(gateway, api)
    busy = await api.push_message("D0BUSY", "echo: " + " ".join(f"w{i}" for i in range(60)), kind="im")
    await eventually(lambda: api.screen("D0BUSY", busy), lambda: api.calls)
    stopping = asyncio.get_running_loop().create_task(gateway.stop())
    await eventually(lambda: not gateway.accepting, lambda: "still accepting")
    ts = await api.push_message("D0LATE", "echo: late but answered", kind="im")
    await stopping
    [event_id] = [d.event_id for d in api.deliveries if api._payloads[d.event_id]["event"].get("ts") == ts]
    assert [d.status for d in api.deliveries if d.event_id == event_id] == [503]
    restarted = http_gateway(api)
    try:
        await started(restarted, api)
        await api.redeliver(event_id)  # Slack's retry (X-Slack-Retry-Num: 1), to the restarted gateway
        await eventually(lambda: settled(api, "D0LATE", ts), lambda: api.screen("D0LATE"))
    finally:
        await restarted.stop()
    assert api.screen("D0LATE") == ["late but answered"]


@pytest.mark.parametrize("headers", [
    {},                                                                         # no timestamp, no signature
    {"X-Slack-Request-Timestamp": "", "X-Slack-Signature": "v0=" + "0" * 64},    # empty timestamp
    {"X-Slack-Request-Timestamp": "yesterday", "X-Slack-Signature": "v0=" + "0" * 64},
    {"X-Slack-Request-Timestamp": "9" * 5000, "X-Slack-Signature": "v0=" + "0" * 64},
    {"X-Slack-Request-Timestamp": "NOW", "X-Slack-Signature": "v0=ä".encode().decode("latin-1")},
    {"X-Slack-Signature": "v0=é" + "0" * 63},                                    # non-ASCII, timestamp fresh
], ids=["missing", "empty", "non-numeric", "5000-digits", "non-ascii-sig", "non-ascii-sig-fresh"])
async def test_headers_that_cannot_be_checked_get_401_never_500(api, headers):
    gateway = http_gateway(api)
    try:
        await started(gateway, api)
        body = json.dumps(api.event_payload({"type": "message", "channel": "D0ODD", "user": "U0EVE",
                                             "text": "echo: odd", "ts": "1800009999.000002", "channel_type": "im"}))
        sent = {"Content-Type": "application/json", **headers}
        if sent.get("X-Slack-Request-Timestamp") == "NOW" or "X-Slack-Request-Timestamp" not in sent and headers:
            sent["X-Slack-Request-Timestamp"] = str(int(time.time()))
        async with aiohttp.ClientSession() as http:
            async with http.post(api.events_url, data=body.encode(), headers=sent) as response:
                status = response.status
    finally:
        await gateway.stop()
    assert status == 401
    assert api.screen("D0ODD") == []


async def test_a_signed_body_that_is_not_utf8_gets_400_never_500(api):
    gateway = http_gateway(api)
    try:
        await started(gateway, api)
        raw = b'{"type": "event_callback", "text": "\xff\xfe"}'
        timestamp = str(int(time.time()))
        digest = hmac.new(api.signing_secret.encode(), b"v0:" + timestamp.encode() + b":" + raw,
                          hashlib.sha256).hexdigest()
        async with aiohttp.ClientSession() as http:
            async with http.post(api.events_url, data=raw, headers={
                    "Content-Type": "application/json", "X-Slack-Request-Timestamp": timestamp,
                    "X-Slack-Signature": f"v0={digest}"}) as response:
                status = response.status
    finally:
        await gateway.stop()
    assert status == 400
