"""Hostile input from the daemon's side: malformed events and JSON-RPC answers cost one log line each, an
oversized event is dropped within a bound, and nothing stops the stream or hangs a call."""

from __future__ import annotations

import json
import logging

import pytest
from aiohttp import web

from hermes_gateway import DeliveryError, RateLimited
from hermes_gateway.testing import serve_locally
from hermes_signal.errors import MAX_RETRY_AFTER, translate
from hermes_signal.events import MAX_EVENT_BYTES, SseParser
from hermes_signal.rpc import Rpc
from hermes_signal.settings import SignalSettings
from signal_test_support import ACCOUNT, ALICE, eventually, runner


async def test_malformed_and_oversized_events_are_skipped_and_the_next_message_arrives(daemon, caplog):
    caplog.set_level(logging.WARNING, logger="hermes_signal")
    async with runner(daemon) as run:
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        for raw in ("not json", "[1, 2]", '{"envelope": 5}', '{"envelope": {"sourceNumber": 7, "timestamp": "x"}}',
                    json.dumps({"envelope": {"sourceNumber": ALICE, "timestamp": 1, "dataMessage": {
                        "message": ["no"], "mentions": "bad", "attachments": [5, {"id": 3}],
                        "groupInfo": "x"}}}),
                    json.dumps({"envelope": {"sourceNumber": ALICE, "timestamp": 2, "dataMessage": {
                        "message": "\ufffc hi", "mentions": [{"start": 99, "length": 5}, {"start": -1}]}}}),
                    "x" * (MAX_EVENT_BYTES + 10)):
            daemon.push_raw(raw)
        daemon.push_message(ALICE, "still here")
        await eventually(lambda: [m.text for m in run.received][-1:] == ["still here"], lambda: run.received)
    assert [m.text for m in run.received] == ["\ufffc hi", "still here"]   # a mention out of range: text kept
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 3 and all("\n" not in w for w in warnings), warnings
    assert daemon.connections == 1, "a bad event did not cost the stream"


def test_the_sse_parser_holds_no_more_than_its_bound():
    parser = SseParser(max_bytes=1000)
    for _ in range(100):
        assert parser.feed(b"data:" + b"y" * 999) == []     # one endless line: dropped, never held
        assert len(parser._buffer) <= 1000 + 1000
    assert parser.feed(b"\n\n") == []
    assert parser.feed(b"id:7\nevent:receive\ndata:{}\n\n") == [("7", "receive", "{}")]
    assert parser.feed(b"data:" + b"z" * 600 + b"\ndata:" + b"z" * 600 + b"\n\n") == []   # over, in two lines
    assert parser.feed(b":keep-alive\n\nevent:receive\ndata:a\ndata:b\n\n") == [("7", "receive", "a\nb")]


@pytest.fixture
async def hostile():
    """A 'daemon' whose answer the test chooses: status, body."""
    answers: list[tuple[int, bytes]] = []

    async def rpc(request):
        status, body = answers.pop(0)
        return web.Response(status=status, body=body, content_type="application/json")
    app = web.Application()
    app.router.add_post("/api/v1/rpc", rpc)
    server = await serve_locally(app)
    rpc_client = Rpc(SignalSettings(account=ACCOUNT, url=f"http://127.0.0.1:{server.addresses[0][1]}", timeout=5))
    try:
        yield answers, rpc_client
    finally:
        await rpc_client.close()
        await server.cleanup()


@pytest.mark.parametrize("status, body, says", [
    (200, b"<html>proxy error</html>", "not JSON"),
    (200, b'{"jsonrpc": "2.0", "id": 999, "result": {}}', "not a JSON-RPC answer to this call"),
    (200, b'[{"jsonrpc": "2.0"}]', "not a JSON-RPC answer"),
    (200, b'{"jsonrpc": "2.0", "id": 1, "error": "boom"}', "not an object"),
    (200, b'{"jsonrpc": "2.0", "id": 1, "result": "' + b"a" * (2 * 1024 * 1024) + b'"}', "over"),
    (502, b"bad gateway", "HTTP 502"),
    (200, b'{"jsonrpc": "2.0", "id": 1, "result": {"timestamp": "soon"}}', "no timestamp"),
])
async def test_a_broken_answer_is_one_line_never_a_crash(hostile, status, body, says):
    from hermes_gateway import MessageRef, Stream
    from hermes_signal import PLATFORM
    from hermes_signal.outbound import Outbound

    answers, rpc = hostile
    answers.append((status, body))
    with pytest.raises(DeliveryError) as raised:
        await Outbound(rpc, ACCOUNT).send(Stream(platform=PLATFORM, chat_id=ALICE), "hi")
    assert says in str(raised.value) and "\n" not in str(raised.value)
    assert MessageRef  # the public type a good answer would have been


@pytest.mark.parametrize("results, wait", [
    ([{"type": "RATE_LIMIT_FAILURE", "retryAfterSeconds": 90}], 90.0),
    ([{"type": "RATE_LIMIT_FAILURE", "retryAfterSeconds": 10**12}], MAX_RETRY_AFTER),
    ([{"type": "RATE_LIMIT_FAILURE", "retryAfterSeconds": "soon"}], 30.0),
    ([{"type": "RATE_LIMIT_FAILURE", "retryAfterSeconds": -5}, {"retryAfterSeconds": 4}], 4.0),
    ("garbage", 30.0),
])
def test_a_rate_limit_is_rate_limited_for_the_account_with_a_bounded_wait(results, wait):
    error = translate({"code": -5, "message": "Failed to send message due to rate limiting",
                       "data": {"response": {"timestamp": 1, "results": results}}}, "send")
    assert isinstance(error, RateLimited) and error.retry_after == wait and error.scope == "bot"


def test_a_captcha_challenge_is_a_failure_for_good_not_a_wait():
    error = translate({"code": -5, "message": "rate limit", "data": {"response": {"results": [
        {"type": "RATE_LIMIT_FAILURE", "token": "abc-challenge"}]}}}, "send")
    assert isinstance(error, DeliveryError) and not isinstance(error, RateLimited) and not error.retryable
    assert "submitRateLimitChallenge" in str(error) and "abc-challenge" not in str(error)
