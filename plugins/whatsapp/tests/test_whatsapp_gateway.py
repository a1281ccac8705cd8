"""End to end: Meta POSTs a signed webhook, the gateway answers it at once, the reply arrives on the user's phone.

Everything a test asserts is what the person sees (the emulator's screen of
that user's phone) or what Meta sees (HTTP statuses, the calls it got).
"""

from __future__ import annotations

import asyncio
import logging
import time

import aiohttp
import pytest

from hermes_gateway.testing import reassemble
from hermes_whatsapp.errors import BOT_WAITS
from hermes_whatsapp.notices import NOTICE
from whatsapp_test_support import USER, VERIFY_TOKEN, eventually, gateway_for, outcomes, webhook_url


def paragraph(i: int) -> str:
    return f"Paragraph {i}: " + " ".join(f"w{i}x{j}" for j in range(20)) + "."


def long_reply(chars: int) -> str:
    text, i = "", 0
    while len(text) < chars:
        text += ("\n\n" if text else "") + paragraph(i)
        i += 1
    return text[:chars].rstrip(" .\n") + "."


async def test_a_9000_character_reply_arrives_as_three_messages_in_order(meta):
    reply = long_reply(9000)
    assert len(reply) >= 8990
    gateway = gateway_for(meta)
    async with gateway:
        payload = meta.text_message(USER, f"echo: {reply}")
        question = payload["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
        assert await meta.deliver(webhook_url(gateway), payload) == 200
        await eventually(lambda: len(meta.screen(USER)) == 3, lambda: meta.screen(USER))
        await asyncio.sleep(0.1)  # nothing more is on its way
    phone = meta.user(USER)
    assert len(phone.screen) == 3 and all(len(text) <= 4096 for text in phone.screen)
    assert reassemble(phone.screen, sep="\n\n") == reply, "the three messages join to the reply"
    assert [m.text[:14] for m in phone.messages][0] == "Paragraph 0: w"
    assert not any(m.preview_url for m in phone.messages), "no link previews"
    assert [m.quotes for m in phone.messages] == [question, None, None], "the first message quotes the question"
    assert phone.read == [question] and phone.typing in ([], [question]), "the question read, typing at most once"
    assert outcomes(phone.calls) == ["read", "sent", "sent", "sent"], "one send per message, no edits"
    assert not phone.violations


async def test_the_webhook_is_answered_before_the_reply_is_written(meta):
    gateway = gateway_for(meta, tokens_per_second=10)  # about a second of words
    async with gateway:
        started = time.monotonic()
        assert await meta.deliver(webhook_url(gateway), meta.text_message(USER, "echo: one two three four five six "
                                                                                "seven eight nine ten")) == 200
        answered = time.monotonic() - started
        assert meta.screen(USER) == [], "the 200 came before the reply"
        await eventually(lambda: meta.screen(USER) != [], lambda: meta.calls)
    assert meta.screen(USER) == ["one two three four five six seven eight nine ten"]
    assert answered < 0.5, f"the webhook took {answered:.2f}s to answer"


@pytest.mark.parametrize("headers", [
    {"Content-Type": "application/json"},                                   # unsigned
    {"Content-Type": "application/json", "X-Hub-Signature-256": "sha256=" + "0" * 64},   # wrong
    {"Content-Type": "application/json", "X-Hub-Signature-256": "md5=abc"},                # not even sha256
], ids=["missing", "wrong", "malformed"])
async def test_a_bad_signature_is_refused_and_nothing_is_sent(meta, headers):
    gateway = gateway_for(meta)
    async with gateway:
        url = webhook_url(gateway)
        status = await meta.deliver(url, meta.text_message(USER, "echo: forged"), headers=headers)
        assert status == (401 if "X-Hub-Signature-256" not in headers else 403)
        assert await meta.deliver(url, meta.text_message(USER, "echo: forged"), secret="another-apps-secret") == 403
        # a genuine message after them is answered; the forged ones never are
        assert await meta.deliver(url, meta.text_message(USER, "echo: genuine")) == 200
        await eventually(lambda: meta.screen(USER) == ["genuine"], lambda: meta.calls)
    assert meta.screen(USER) == ["genuine"]
    assert outcomes(meta.user(USER).calls) == ["read", "sent"]
    assert gateway.client("whatsapp").events["bad_signature"] == 2


async def test_a_signature_of_another_body_is_refused(meta):
    """The signature covers the raw bytes: a body changed on the way is refused, even as the same JSON."""
    gateway = gateway_for(meta)
    async with gateway:
        payload = meta.text_message(USER, "echo: tampered")
        body, headers = meta.signed(payload)
        async with aiohttp.ClientSession() as http:
            async with http.post(webhook_url(gateway), data=body.replace(b'":"', b'": "'), headers=headers) as r:
                assert r.status == 403
        assert await meta.deliver(webhook_url(gateway), meta.text_message(USER, "echo: next")) == 200
        await eventually(lambda: meta.screen(USER) == ["next"], lambda: meta.calls)


async def test_a_redelivered_message_gets_one_reply(meta):
    gateway = gateway_for(meta)
    async with gateway:
        url = webhook_url(gateway)
        first = meta.text_message(USER, "echo: only once")
        for _ in range(3):  # Meta did not hear our 200 (or retries for days): the same wamid again
            assert await meta.deliver(url, first) == 200
        await eventually(lambda: meta.screen(USER) == ["only once"], lambda: meta.calls)
        assert await meta.deliver(url, first) == 200      # and once more after the reply
        assert await meta.deliver(url, meta.text_message(USER, "echo: second question")) == 200
        await eventually(lambda: len(meta.screen(USER)) == 2, lambda: meta.screen(USER))
        await asyncio.sleep(0.1)
    assert meta.screen(USER) == ["only once", "second question"]


async def test_a_pair_rate_limit_once_still_delivers_the_reply_once_after_the_wait(meta):
    gateway = gateway_for(meta)
    async with gateway:
        payload = meta.text_message(USER, "echo: worth the wait")
        meta.inject_pair_rate_limit(USER)  # the next send to this user answers 131056
        assert await meta.deliver(webhook_url(gateway), payload) == 200
        await eventually(lambda: meta.screen(USER) == ["worth the wait"], lambda: meta.user(USER).calls, timeout=30)
        await asyncio.sleep(0.1)
    calls = meta.user(USER).calls
    assert outcomes(calls) == ["read", "131056", "sent"]
    refused, sent = calls[1], calls[2]
    assert sent.at - refused.at >= 3.9, "the send was retried only after Meta's suggested 4 s"
    assert meta.screen(USER) == ["worth the wait"] and not meta.user(USER).violations


async def test_the_verification_handshake_both_ways(meta):
    gateway = gateway_for(meta)
    async with gateway:
        url = webhook_url(gateway)
        assert await meta.verify(url, VERIFY_TOKEN, challenge="8675309") == (200, "8675309")
        status, text = await meta.verify(url, "not-the-token", challenge="8675309")
        assert status == 403 and "8675309" not in text
        async with aiohttp.ClientSession() as http:
            query = {"hub.mode": "unsubscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1"}
            async with http.get(url, params=query) as r:
                assert r.status == 403
            async with http.get(url) as r:
                assert r.status == 403
    assert [c.outcome for c in meta.calls] == ["lookup"], "only the start-up check of the token"


MALFORMED = [
    b"this is not json",
    b"[1, 2, 3]",
    b'{"object": "page", "entry": []}',
    b'{"object": "whatsapp_business_account"}',
    b'{"object": "whatsapp_business_account", "entry": {"changes": []}}',
    b'{"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages", "value": 7}]}]}',
    b'{"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages", "value": '
    b'{"metadata": {"phone_number_id": "106540352242922"}, "messages": [{"id": "wamid.X", "type": "text", '
    b'"text": {"body": "echo: no sender"}}]}}]}]}',
    b'{"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages", "value": '
    b'{"metadata": {"phone_number_id": "106540352242922"}, "messages": [{"id": "wamid.Y", "from": "4915112345678", '
    b'"type": "hologram", "hologram": {}}]}}]}]}',
    b'{"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages", "value": '
    b'{"metadata": {"phone_number_id": "106540352242922"}, "messages": [{"id": "wamid.Z", "from": "4915112345678", '
    b'"type": "text", "text": {"body": 42}}]}}]}]}',
    b'{"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages", "value": '
    b'{"metadata": {"phone_number_id": "106540352242922"}, "statuses": [{"status": "read"}]}}]}]}',
    b"\xff\xfe\x00garbage",
]


async def test_malformed_payloads_get_200_nothing_done_and_one_log_line_each(meta, caplog):
    gateway = gateway_for(meta)
    async with gateway:
        url = webhook_url(gateway)
        for body in MALFORMED:
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="hermes_whatsapp"):
                assert await meta.deliver(url, body) == 200, body
            lines = [r for r in caplog.records if r.name.startswith("hermes_whatsapp")]
            assert len(lines) == 1, (body, [r.getMessage() for r in lines])
            assert "ignored" in lines[0].getMessage()
        assert await meta.deliver(url, meta.text_message(USER, "echo: still fine")) == 200
        await eventually(lambda: meta.screen(USER) == ["still fine"], lambda: meta.calls)
    assert outcomes(meta.calls) == ["lookup", "read", "sent"], "the malformed ones did nothing"
    assert gateway.client("whatsapp").events["malformed"] == len(MALFORMED)


async def test_statuses_are_counted_in_metrics_and_never_answered(meta, caplog):
    gateway = gateway_for(meta, api_server=True)
    async with gateway:
        url = webhook_url(gateway)
        meta.send_statuses_to(url)  # Meta reports sent and delivered for every message the bot sends
        assert await meta.deliver(url, meta.text_message(USER, "echo: tell me")) == 200
        await eventually(lambda: meta.screen(USER) == ["tell me"], lambda: meta.calls)
        reply = meta.user(USER).messages[0].wamid
        await eventually(lambda: len(meta.deliveries) == 3, lambda: meta.deliveries)
        with caplog.at_level(logging.WARNING, logger="hermes_whatsapp"):
            for status in ("read", "read"):  # out of order and twice: both fine
                assert await meta.deliver(url, meta.status_update(reply, status, USER)) == 200
            failed = meta.status_update(reply, "failed", USER,
                                        errors=[{"code": 131047, "title": "Re-engagement message"}])
            assert await meta.deliver(url, failed) == 200
        async with aiohttp.ClientSession() as http:
            async with http.get(gateway.url + "/metrics") as r:
                metrics = await r.text()
    assert meta.screen(USER) == ["tell me"], "no status produced a reply"
    assert all(status == 200 for status, _ in meta.deliveries)
    for event, n in (("status_sent", 1), ("status_delivered", 1), ("status_read", 2), ("status_failed", 1)):
        assert f'hermes_platform_events_total{{event="{event}",platform="whatsapp"}} {n}' in metrics, metrics
    [line] = [r.getMessage() for r in caplog.records if r.name.startswith("hermes_whatsapp")]
    assert reply in line and "131047" in line


async def test_a_location_is_answered_once_and_what_carries_nothing_gets_the_notice(meta):
    """A shared location (or contact card) is a message the model answers, once however often Meta delivers it;
    a 👍 reaction needs no answer; what the bot cannot read at all is answered with the notice, not silence."""
    gateway = gateway_for(meta)
    async with gateway:
        url = webhook_url(gateway)
        pin = meta.media_message(USER, "location")
        assert await meta.deliver(url, pin) == 200
        assert await meta.deliver(url, pin) == 200  # redelivered
        assert await meta.deliver(url, meta.media_message(USER, "reaction")) == 200  # a 👍 needs no answer
        await eventually(lambda: len(meta.screen(USER)) == 1, lambda: meta.calls)
        assert await meta.deliver(url, meta.media_message(USER, "unsupported")) == 200
        await eventually(lambda: len(meta.screen(USER)) == 2, lambda: meta.calls)
        await asyncio.sleep(0.1)
    [answer, notice] = meta.screen(USER)
    assert 'You said: "[a location: 52.520000, 13.405000]"' in answer and notice == NOTICE  # (the demo model)


async def test_only_allowed_users_are_answered(meta):
    stranger = "447700900123"
    gateway = gateway_for(meta, allowed_users=[int(USER)])
    async with gateway:
        url = webhook_url(gateway)
        assert await meta.deliver(url, meta.text_message(stranger, "echo: let me in")) == 200
        assert await meta.deliver(url, meta.media_message(stranger, "sticker")) == 200
        assert await meta.deliver(url, meta.text_message(USER, "echo: welcome")) == 200
        await eventually(lambda: meta.screen(USER) == ["welcome"], lambda: meta.calls)
        await asyncio.sleep(0.1)
    assert meta.user(stranger).calls == [] and meta.screen(stranger) == []


async def test_a_closed_24_hour_window_is_one_log_line_and_no_retry(meta, caplog):
    gateway = gateway_for(meta)
    async with gateway:
        payload = meta.text_message(USER, "echo: too late")
        meta.close_window(USER)  # e.g. the reply took a day, or the message was replayed from the past
        with caplog.at_level(logging.INFO):
            assert await meta.deliver(webhook_url(gateway), payload) == 200
            await eventually(lambda: any(c.outcome.startswith("131047") for c in meta.user(USER).calls),
                             lambda: meta.calls)
            await asyncio.sleep(0.3)
    assert outcomes(meta.user(USER).calls) == ["read", "131047"], "not retried"
    lines = [r.getMessage() for r in caplog.records if "131047" in r.getMessage()]
    assert len(lines) == 1 and "24 hours" in lines[0], lines


async def test_a_message_for_another_number_is_left_alone(meta, caplog):
    gateway = gateway_for(meta)
    async with gateway:
        payload = meta.text_message(USER, "echo: not for us")
        payload["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"] = "999000999000"
        with caplog.at_level(logging.INFO, logger="hermes_whatsapp"):
            assert await meta.deliver(webhook_url(gateway), payload) == 200
        assert await meta.deliver(webhook_url(gateway), meta.text_message(USER, "echo: for us")) == 200
        await eventually(lambda: meta.screen(USER) == ["for us"], lambda: meta.calls)
    assert "999000999000" in caplog.text


async def test_a_disabled_platform_mounts_no_route_and_calls_nothing(meta):
    async with gateway_for(meta, enabled=False) as gateway:
        assert gateway.started_platforms == [] and gateway.url is None, "nothing to listen for"
    assert meta.calls == []


async def test_the_numbers_throughput_limit_holds_back_every_chat(meta):
    """130429: the whole number is over its throughput, so another user's reply waits too (scope "bot")."""
    other = "447700900123"
    gateway = gateway_for(meta)
    async with gateway:
        url = webhook_url(gateway)
        meta.fail_next(USER, 130429)
        assert await meta.deliver(url, meta.text_message(USER, "echo: first")) == 200
        await eventually(lambda: any(c.outcome.startswith("130429") for c in meta.calls), lambda: meta.calls)
        assert await meta.deliver(url, meta.text_message(other, "echo: second")) == 200
        await eventually(lambda: meta.screen(USER) == ["first"] and meta.screen(other) == ["second"],
                         lambda: meta.calls)
    limited = next(c for c in meta.calls if c.outcome.startswith("130429"))
    later = [c for c in meta.calls if c.at > limited.at and c.outcome in ("sent", "typing")]
    assert later and all(c.at - limited.at >= BOT_WAITS[130429] - 0.1 for c in later), \
        "no call for any user until the number's wait was over"


async def test_a_message_that_arrives_while_the_gateway_stops_is_delivered_again_not_lost(meta):
    """The core refuses messages once it is stopping; a 200 would lose them, a 503 makes Meta deliver again."""
    gateway = gateway_for(meta)
    async with gateway:
        url = webhook_url(gateway)
        payload = meta.text_message(USER, "echo: just in time")
        gateway.accepting = False  # what Gateway.stop does before the listener closes
        assert await meta.deliver(url, payload) == 503
        assert await meta.deliver(url, meta.status_update("wamid.old", "read", USER)) == 200, "statuses are fine"
        gateway.accepting = True   # the gateway is back (restarted): Meta's retry arrives
        assert await meta.deliver(url, payload) == 200
        await eventually(lambda: meta.screen(USER) == ["just in time"], lambda: meta.calls)


async def test_typing_is_refreshed_while_the_model_thinks_but_not_more_often_than_the_platform_allows(meta):
    """The config asks for typing every 0.5 s here; the platform declares a longer interval, which wins."""
    # 20 s in production; scaled down with the core's interval
    gateway = gateway_for(meta, limits={"typing_interval": 1.0}, tokens_per_second=12, streaming=False,
                          conversation={"typing_interval": 0.5})
    async with gateway:
        payload = meta.text_message(USER, "think: done thinking")
        question = payload["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
        assert await meta.deliver(webhook_url(gateway), payload) == 200
        await eventually(lambda: meta.screen(USER) == ["done thinking"], lambda: meta.calls)
    typing = [c for c in meta.user(USER).calls if c.outcome == "typing"]
    assert len(typing) >= 2, "refreshed while the model thought"
    assert all(b.at - a.at >= 0.95 for a, b in zip(typing, typing[1:])), [c.at for c in typing]
    assert set(meta.user(USER).typing) == {question}


async def test_an_oversized_delivery_gets_413_and_nothing_is_sent(meta):
    gateway = gateway_for(meta)
    async with gateway:
        huge = meta.text_message(USER, "echo: " + "x" * (5 * 1024 * 1024))  # over api_server.max_body_bytes
        assert await meta.deliver(webhook_url(gateway), huge) == 413
        await asyncio.sleep(0.2)
    assert meta.screen(USER) == [] and meta.user(USER).calls == []


async def test_a_malformed_status_in_the_same_webhook_does_not_drop_the_message(meta):
    """Meta batches statuses with messages; answered 200, a dropped message would never come again."""
    gateway = gateway_for(meta)
    payload = meta.text_message(USER, "echo: answered anyway")
    payload["entry"][0]["changes"][0]["value"]["statuses"] = [
        {"id": "wamid.OUT1", "status": "failed", "recipient_id": USER, "errors": 5}]
    async with gateway:
        assert await meta.deliver(webhook_url(gateway), payload) == 200
        await eventually(lambda: meta.screen(USER) == ["answered anyway"], lambda: meta.calls)
