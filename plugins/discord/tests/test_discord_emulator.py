"""The emulator answers like Discord where the plugin depends on it (raw HTTP and websocket, no discord.py)."""

from __future__ import annotations

import asyncio
import json

import aiohttp

from discord_test_support import BOT_ID, TOKEN
from hermes_discord.emulator import DiscordEmulator

NONE = {"parse": []}
RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After",
                "X-RateLimit-Bucket")


async def call(api, method, path, body=None, token=TOKEN):
    async with aiohttp.ClientSession() as session:
        async with session.request(method, api.api_base_url + path, json=body,
                                   headers={"Authorization": f"Bot {token}"}) as response:
            text = await response.text()
            return response.status, dict(response.headers), json.loads(text) if text else None


async def test_login_calls_have_discords_shapes_and_exact_content_type(api):
    status, headers, me = await call(api, "GET", "/users/@me")
    assert status == 200 and headers["Content-Type"] == "application/json" and headers["Via"]
    assert me["id"] == BOT_ID and me["bot"] is True, "the bot id is the token's first part, as Discord makes them"
    status, _, app = await call(api, "GET", "/oauth2/applications/@me")
    assert status == 200
    assert {"id", "name", "description", "icon", "bot_public", "bot_require_code_grant", "owner",
            "verify_key"} <= set(app)
    assert (await call(api, "GET", "/users/@me", token="wrong"))[0] == 401


async def test_create_and_edit_carry_the_whole_rate_limit_header_set(api):
    status, headers, message = await call(api, "POST", f"/channels/{api.general}/messages",
                                          {"content": "  hello  ", "allowed_mentions": NONE})
    assert status == 200 and all(h in headers for h in RATE_HEADERS)
    assert headers["X-RateLimit-Limit"] == "5" and headers["X-RateLimit-Remaining"] == "4"
    assert message["content"] == "hello" and message["channel_id"] == api.general
    status, headers, edited = await call(api, "PATCH", f"/channels/{api.general}/messages/{message['id']}",
                                         {"content": "hi", "allowed_mentions": NONE})
    assert status == 200 and edited["edited_timestamp"] and headers["X-RateLimit-Remaining"] == "3"
    assert api.channel(api.general).messages[0].history == ["hello", "hi"]
    assert (await call(api, "POST", f"/channels/{api.general}/typing"))[0] == 204
    assert api.channel(api.general).typing == 1 and not api.violations


async def test_past_2000_characters_is_50035_and_a_violation(api):
    status, _, body = await call(api, "POST", f"/channels/{api.general}/messages",
                                 {"content": "x" * 2001, "allowed_mentions": NONE})
    assert (status, body["code"]) == (400, 50035)
    assert (await call(api, "POST", f"/channels/{api.general}/messages",
                       {"content": "x" * 2000, "allowed_mentions": NONE}))[0] == 200
    assert api.violations == {api.general: ["create of 2001 characters"]}


async def test_a_message_that_could_ping_is_a_violation(api):
    await call(api, "POST", f"/channels/{api.general}/messages", {"content": "hi @everyone"})
    [violation] = api.channel(api.general).violations
    assert "allowed_mentions" in violation


async def test_the_channel_bucket_answers_429_with_retry_after_and_global(api):
    other = api.text_channel()
    for i in range(5):
        assert (await call(api, "POST", f"/channels/{api.general}/messages",
                           {"content": f"m{i}", "allowed_mentions": NONE}))[0] == 200
    status, headers, body = await call(api, "POST", f"/channels/{api.general}/messages",
                                       {"content": "one too many", "allowed_mentions": NONE})
    assert status == 429 and headers["Via"] and headers["Content-Type"] == "application/json"
    assert body["global"] is False and 0 < body["retry_after"] <= 5.0 and isinstance(body["retry_after"], float)
    assert all(h in headers for h in RATE_HEADERS) and headers["X-RateLimit-Remaining"] == "0"
    assert (await call(api, "POST", f"/channels/{other}/messages",
                       {"content": "another channel", "allowed_mentions": NONE}))[0] == 200, "per channel"
    await call(api, "POST", f"/channels/{api.general}/messages", {"content": "again", "allowed_mentions": NONE})
    assert api.violations[api.general][0].startswith("create "), "a call inside the 429's window is recorded"


async def test_the_global_limit_answers_429_global():
    async with DiscordEmulator(TOKEN, global_limit=3) as api:
        statuses = [(await call(api, "POST", f"/channels/{api.general}/typing"))[0] for _ in range(3)]
        status, headers, body = await call(api, "POST", f"/channels/{api.dm()}/typing")
        assert statuses == [204, 204, 204]
        assert status == 429 and body["global"] is True and headers["X-RateLimit-Global"] == "true"


async def test_unknown_message_missing_permissions_and_unknown_channel(api):
    _, _, message = await call(api, "POST", f"/channels/{api.general}/messages",
                               {"content": "soon gone", "allowed_mentions": NONE})
    api.delete_message(api.general, message["id"])
    status, _, body = await call(api, "PATCH", f"/channels/{api.general}/messages/{message['id']}",
                                 {"content": "x", "allowed_mentions": NONE})
    assert (status, body["code"]) == (404, 10008)
    api.deny_permissions(api.general)
    status, _, body = await call(api, "POST", f"/channels/{api.general}/messages",
                                 {"content": "x", "allowed_mentions": NONE})
    assert (status, body["code"]) == (403, 50013)
    status, _, body = await call(api, "POST", "/channels/42/messages", {"content": "x", "allowed_mentions": NONE})
    assert (status, body["code"]) == (404, 10003)


async def test_the_gateway_says_hello_acks_heartbeats_and_dispatches_after_identify(api):
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(api.gateway_url + "?v=10&encoding=json") as ws:
            hello = await ws.receive_json(timeout=5)
            assert hello["op"] == 10 and hello["d"]["heartbeat_interval"] > 0
            await ws.send_json({"op": 1, "d": None})
            assert (await ws.receive_json(timeout=5))["op"] == 11
            await ws.send_json({"op": 2, "d": {"token": TOKEN, "intents": 53608189, "properties": {}}})
            ready = await ws.receive_json(timeout=5)
            assert (ready["op"], ready["t"], ready["s"]) == (0, "READY", 1)
            assert ready["d"]["user"]["id"] == BOT_ID and ready["d"]["resume_gateway_url"] == api.gateway_url
            guild = await ws.receive_json(timeout=5)
            assert guild["t"] == "GUILD_CREATE" and [c["id"] for c in guild["d"]["channels"]] == [api.general]
            message_id = await api.push_message(api.general, "hello", mention=True)
            event = await ws.receive_json(timeout=5)
            assert (event["t"], event["s"], event["d"]["id"]) == ("MESSAGE_CREATE", 3, message_id)
            assert event["d"]["content"] == f"<@{BOT_ID}> hello" and event["d"]["guild_id"] == api.guild_id
            assert event["d"]["mentions"][0]["id"] == BOT_ID
            dm = api.dm()
            await api.push_message(dm, "psst")
            assert "guild_id" not in (await ws.receive_json(timeout=5))["d"], "no guild_id: a DM"


async def test_a_wrong_token_on_identify_closes_with_4004(api):
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(api.gateway_url) as ws:
            await ws.receive_json(timeout=5)
            await ws.send_json({"op": 2, "d": {"token": "wrong", "intents": 0}})
            closed = await ws.receive(timeout=5)
            assert closed.type == aiohttp.WSMsgType.CLOSE and closed.data == 4004


async def test_resume_replays_what_the_session_missed(api):
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(api.gateway_url) as ws:
            await ws.receive_json(timeout=5)
            await ws.send_json({"op": 2, "d": {"token": TOKEN, "intents": 0}})
            ready = await ws.receive_json(timeout=5)
            await ws.receive_json(timeout=5)  # GUILD_CREATE
        await asyncio.sleep(0.05)
        missed = await api.push_message(api.general, "while you were away")
        async with session.ws_connect(api.gateway_url) as ws:
            await ws.receive_json(timeout=5)
            await ws.send_json({"op": 6, "d": {"token": TOKEN, "session_id": ready["d"]["session_id"], "seq": 2}})
            replayed = await ws.receive_json(timeout=5)
            assert (replayed["t"], replayed["s"], replayed["d"]["id"]) == ("MESSAGE_CREATE", 3, missed)
            assert (await ws.receive_json(timeout=5))["t"] == "RESUMED"


async def test_a_gateway_outage_closes_the_socket_and_refuses_upgrades_until_it_ends(api):
    async with aiohttp.ClientSession() as session:
        ws = await session.ws_connect(api.gateway_url)
        hello = json.loads((await ws.receive()).data)
        assert hello["op"] == 10
        await ws.send_str(json.dumps({"op": 2, "d": {"token": TOKEN, "intents": 0, "properties": {}}}))
        assert json.loads((await ws.receive()).data)["t"] == "READY"
        await api.take_gateway_down()
        closed = await ws.receive()
        while closed.type == aiohttp.WSMsgType.TEXT:  # GUILD_CREATE, then the close
            closed = await ws.receive()
        assert closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED) and ws.close_code == 4000
        try:
            await session.ws_connect(api.gateway_url)
        except aiohttp.WSServerHandshakeError as exc:
            assert exc.status == 503
        else:
            raise AssertionError("an upgrade during the outage was accepted")
        assert api.refused_connections == 1
        api.bring_gateway_back()
        again = await session.ws_connect(api.gateway_url)
        assert json.loads((await again.receive()).data)["op"] == 10 and api.refused_connections == 1
        await again.close()
