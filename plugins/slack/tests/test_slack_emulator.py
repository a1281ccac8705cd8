"""The emulator behaves like Slack where the plugin depends on it, checked through the real slack_sdk."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN


@pytest.fixture
async def client(api):
    client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url)
    yield client
    if client.session is not None:
        await client.session.close()


async def error_of(call):
    with pytest.raises(SlackApiError) as caught:
        await call
    return caught.value.response.status_code, caught.value.response["error"], caught.value.response.headers


async def test_auth_and_socket_mode_urls(api, client):
    me = await client.auth_test()
    assert (me["user_id"], me["team_id"], me["bot_id"]) == ("U0BOT", "T0HERMES", "B0BOT")
    opened = await client.apps_connections_open(app_token=APP_TOKEN)
    assert opened["url"].startswith(f"ws://127.0.0.1:{api.port}/socket-mode")
    assert (await error_of(client.apps_connections_open(app_token="xapp-1-wrong-000000000")))[1] == "invalid_auth"
    wrong = AsyncWebClient(token="xoxb-0-wrong-token-here", base_url=api.base_url)
    assert (await error_of(wrong.auth_test()))[1] == "invalid_auth"
    await wrong.session.close() if wrong.session else None


async def test_post_and_update_with_the_4000_character_limit(api, client):
    api.channel("D1", "im")
    posted = await client.chat_postMessage(channel="D1", thread_ts="1.0", markdown_text="hello")
    await client.chat_update(channel="D1", ts=posted["ts"], markdown_text="hello again")
    await client.chat_update(channel="D1", ts=posted["ts"], markdown_text="hello again")  # identical: ok
    assert (await error_of(client.chat_update(channel="D1", ts=posted["ts"], markdown_text="x" * 4001)))[1] == \
        "msg_too_long"
    assert (await error_of(client.chat_update(channel="D1", ts="9.9", markdown_text="x")))[1] == "message_not_found"
    assert (await error_of(client.chat_postMessage(channel="C404", text="x")))[1] == "channel_not_found"
    assert api.screen("D1", "1.0") == ["hello again"]


async def test_the_streaming_state_rules(api, client):
    api.channel("D2", "im")
    started = await client.chat_startStream(channel="D2", thread_ts="1.0", markdown_text="Hel")
    ts = started["ts"]
    await client.chat_appendStream(channel="D2", ts=ts, markdown_text="lo")
    await client.chat_appendStream(channel="D2", ts=ts, chunks=[{"type": "markdown_text", "text": ", wor"}])
    assert api.still_streaming() == [f"D2/{ts}"]
    assert (await error_of(client.chat_update(channel="D2", ts=ts, markdown_text="x")))[1] == \
        "streaming_state_conflict"
    await client.chat_stopStream(channel="D2", ts=ts, markdown_text="ld")
    assert api.screen("D2", "1.0") == ["Hello, world"] and api.still_streaming() == []
    assert (await error_of(client.chat_appendStream(channel="D2", ts=ts, markdown_text="!")))[1] == \
        "message_not_in_streaming_state"
    await client.chat_update(channel="D2", ts=ts, markdown_text="Hello, world!")  # after the stream: fine
    assert api.screen("D2", "1.0") == ["Hello, world!"]


async def test_old_streams_expire(api, client):
    api.channel("D3", "im")
    api.stream_ttl = 0.0
    ts = (await client.chat_startStream(channel="D3", thread_ts="1.0", markdown_text="partial"))["ts"]
    assert (await error_of(client.chat_stopStream(channel="D3", ts=ts)))[1] == "message_not_in_streaming_state"
    await client.chat_update(channel="D3", ts=ts, markdown_text="repaired")
    assert api.screen("D3") == ["repaired"]


async def test_a_channel_stream_without_its_recipient_disappears(api, client):
    api.channel("C1", "channel")
    await client.chat_startStream(channel="C1", thread_ts="1.0", markdown_text="lost")
    assert api.screen("C1") == [] and api.violations
    await client.chat_startStream(channel="C1", thread_ts="1.0", markdown_text="kept", recipient_user_id="U1",
                                  recipient_team_id="T0HERMES")
    assert api.screen("C1") == ["kept"]


async def test_the_start_stream_switch(api, client):
    api.channel("D4", "im")
    api.start_stream_error = "missing_scope"
    assert (await error_of(client.chat_startStream(channel="D4", thread_ts="1.0", markdown_text="x")))[1] == \
        "missing_scope"
    assert api.screen("D4") == []


async def test_rate_limits_in_both_shapes_and_per_method(api, client):
    api.channel("D5", "im")
    api.inject_rate_limit(7, method="chat.postMessage")
    status, error, headers = await error_of(client.chat_postMessage(channel="D5", text="x"))
    assert (status, error, headers.get("Retry-After")) == (429, "ratelimited", "7")
    api.inject_rate_limit(7, method="chat.postMessage", shape="ok_false")
    status, error, headers = await error_of(client.chat_postMessage(channel="D5", text="x"))
    assert (status, error) == (200, "rate_limited") and "Retry-After" not in headers
    api.limit("chat.update", per_minute=50, burst=2)
    ts = (await client.chat_postMessage(channel="D5", text="x"))["ts"]
    await client.chat_update(channel="D5", ts=ts, text="a")
    await client.chat_update(channel="D5", ts=ts, text="b")
    status, error, headers = await error_of(client.chat_update(channel="D5", ts=ts, text="c"))
    assert (status, error) == (429, "ratelimited") and int(headers["Retry-After"]) >= 1
    assert api.screen("D5") == ["b"]


async def test_start_stream_is_limited_to_20_in_any_minute_with_429_and_retry_after(api, client):
    api.channel("D6", "im")
    for n in range(20):
        await client.chat_startStream(channel="D6", thread_ts=f"{n}.0", markdown_text="x")
    status, error, headers = await error_of(client.chat_startStream(channel="D6", thread_ts="20.0",
                                                                    markdown_text="x"))
    assert (status, error) == (429, "ratelimited") and 55 <= int(headers["Retry-After"]) <= 60
    assert len(api.screen("D6")) == 20, "the refused call started nothing"
    await client.chat_postMessage(channel="D6", text="other methods are not held back")


async def test_signed_requests(api):
    headers = api.sign('{"a": 1}', timestamp=1531420618)
    assert headers["X-Slack-Request-Timestamp"] == "1531420618"
    from slack_sdk.signature import SignatureVerifier

    verifier = SignatureVerifier(api.signing_secret, clock=type("C", (), {"now": lambda self: 1531420618})())
    assert verifier.is_valid('{"a": 1}', "1531420618", headers["X-Slack-Signature"])
    assert not verifier.is_valid('{"a": 2}', "1531420618", headers["X-Slack-Signature"])


async def test_a_socket_mode_outage_closes_the_socket_and_refuses_upgrades_until_it_ends(api, client):
    import json

    import aiohttp

    url = (await client.apps_connections_open(app_token=APP_TOKEN))["url"]
    async with aiohttp.ClientSession() as session:
        ws = await session.ws_connect(url)
        assert json.loads((await ws.receive()).data)["type"] == "hello" and api.connected
        await api.take_socket_mode_down()
        assert (await ws.receive()).type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(url)
        assert refused.value.status == 503 and api.refused_connections == 1 and not api.connected
        api.bring_socket_mode_back()
        again = await session.ws_connect(url)
        assert json.loads((await again.receive()).data)["type"] == "hello" and api.refused_connections == 1
        await again.close()
