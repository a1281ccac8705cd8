"""The dashboard's snapshot of a real gateway on the Telegram emulator: what an operator reads there is true.

Each test runs the core's ``Gateway`` with the Telegram plugin polling the
Bot API emulator on 127.0.0.1, makes something happen the way a person or
the platform would (a message, a slow reply, a 429, a refused call, an
unknown user), and reads the snapshot through JSON as the browser does.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from hermes_gateway.testing import eventually
from hermes_gateway._core.web.dashboard_pairing import PairingRefused, decide
from hermes_gateway._core.web.dashboard_state import snapshot, steady
from dashboard_support import API_KEY, TOKEN, platform, state_of, telegram_gateway, until_state

pytest.importorskip("hermes_telegram")
from hermes_telegram.emulator import BotApiEmulator  # noqa: E402


WEB_PASSWORD = "console-password-5678"
API_SERVER_KEY = "sk-api-server-key-4321"


@pytest.fixture
async def api():
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator


async def test_a_running_platform_is_connected_with_its_mode_and_after_stop_it_is_not(api):
    gateway = telegram_gateway(api.base_url)
    before = await state_of(gateway)
    assert platform(before, "telegram") | {} == {**platform(before, "telegram"), "enabled": True, "connected": False,
                                                  "state": "stopped"}
    async with gateway:
        telegram = await until_state(gateway, "telegram", "connected")  # its first getUpdates answered
        assert telegram["connected"] is True and telegram["mode"] == "polling"
        assert telegram["last_error"] is None and telegram["rate_limited_last_hour"] == 0
    after = platform(await state_of(gateway), "telegram")
    assert after["connected"] is False and after["state"] == "stopped" and after["last_error"] is None


async def test_a_reply_in_flight_shows_its_chat_time_and_calls_then_leaves_the_list(api):
    gateway = telegram_gateway(api.base_url, tokens_per_second=8)  # ~4 s of words
    words = " ".join(f"word{i}" for i in range(30))
    async with gateway:
        await api.push_message(42, f"echo: {words}")
        await eventually(lambda: len(api.screen(42)) == 1, lambda: api.chat(42).calls)  # text is on screen
        [reply] = (await state_of(gateway))["in_flight"]
        assert reply["platform"] == "telegram" and reply["chat_id"] == "42" and reply["calls"] >= 1
        first_calls = reply["calls"]
        await eventually(lambda: len(api.chat(42).calls) > first_calls + 1, lambda: api.chat(42).calls)
        [later] = (await state_of(gateway))["in_flight"]
        assert later["calls"] > first_calls and later["started_at"] == reply["started_at"]
        assert later["running_for"] >= reply["running_for"] >= 0  # (rounded to 0.1 s: may not have moved yet)
        await eventually(lambda: api.screen(42) == [words], lambda: api.screen(42), timeout=30)
        await eventually(lambda: gateway.delivery.in_flight() == [], lambda: gateway.delivery.in_flight())
        # the turn is recorded after its reply is delivered: the dashboard lists it once the store has it
        for _ in range(300):
            state = await state_of(gateway)
            if state["conversations"]:
                break
            await asyncio.sleep(0.05)
    assert state["in_flight"] == []
    [conversation] = state["conversations"]
    assert (conversation["platform"], conversation["chat_id"], conversation["turns"]) == ("telegram", "42", 1)
    assert conversation["last_messages"] == [{"role": "user", "text": f"echo: {words}"},
                                             {"role": "assistant", "text": words}]


async def test_a_429_is_counted_for_the_last_hour_and_a_refused_call_is_the_last_error(api):
    gateway = telegram_gateway(api.base_url)
    async with gateway:
        await until_state(gateway, "telegram", "connected")
        api.inject_rate_limit(7, 1)
        await api.push_message(7, "echo: patience")
        await eventually(lambda: api.screen(7) == ["patience"], lambda: api.chat(7).calls, timeout=15)
        telegram = platform(await state_of(gateway), "telegram")
        assert telegram["rate_limited_last_hour"] == 1 and telegram["last_error"] is None
        api.fail_next(8, 400, "Bad Request: chat not found")
        await api.push_message(8, "echo: anyone?")
        await eventually(lambda: platform(gateway.platform_status and {"platforms": _platforms(gateway)},
                                          "telegram")["last_error"], lambda: _platforms(gateway))
        telegram = platform(await state_of(gateway), "telegram")
    assert "chat not found" in telegram["last_error"].lower() and telegram["last_error_at"] <= time.time()
    assert telegram["connected"] is True  # one refused call is an error, not a disconnection


def _platforms(gateway):
    return [{"name": s.name, "last_error": s.last_error} for s in gateway.platform_status.all()]


async def test_an_unknown_user_waits_in_pairing_and_once_approved_is_answered(api):
    gateway = telegram_gateway(api.base_url, access={"unknown_users": "pair", "admins": ["telegram:1"]})
    async with gateway:
        await api.push_message(55, "hello?", user_id=555)
        await eventually(lambda: "pairing code" in " ".join(api.screen(55)), lambda: api.screen(55))
        [pending] = (await state_of(gateway))["pairing"]
        assert (pending["platform"], pending["user_id"], pending["chat_id"]) == ("telegram", "555", "55")
        [stored] = await gateway.store.pairings(time.time())
        assert pending["code"] != stored.code and stored.code not in json.dumps(pending)  # masked
        with pytest.raises(PairingRefused) as refused:
            await decide(gateway.store, "telegram", "999", True, by="test")
        assert refused.value.status == 404
        assert await decide(gateway.store, "telegram", "555", True, by="operator (test)") == {
            "approved": True, "platform": "telegram", "user_id": "555"}
        assert (await state_of(gateway))["pairing"] == []
        await api.push_message(55, "echo: now I am in", user_id=555)
        await eventually(lambda: api.screen(55)[-1:] == ["now I am in"], lambda: api.screen(55))


async def test_a_rejected_request_leaves_the_list_and_the_person_is_not_answered(api):
    gateway = telegram_gateway(api.base_url, access={"unknown_users": "pair"})
    async with gateway:
        await api.push_message(56, "hello?", user_id=556)
        await eventually(lambda: len(api.screen(56)) == 1, lambda: api.screen(56))
        assert (await decide(gateway.store, "telegram", "556", False, by="test"))["approved"] is False
        assert (await state_of(gateway))["pairing"] == []
        assert not await gateway.store.is_approved("telegram", "556")


async def test_schedules_show_their_next_run(api):
    schedules = [{"name": "standup", "platform": "telegram", "chat": "42", "every": "1h", "text": "Standup!"}]
    gateway = telegram_gateway(api.base_url, schedules=schedules)
    async with gateway:
        [standup] = (await state_of(gateway))["schedules"]
    assert standup["name"] == "standup" and standup["when"] == "every 1h" and standup["last_run"] is None
    assert time.time() < standup["next_run"] <= time.time() + 3600


async def test_no_secret_appears_anywhere_in_the_snapshot(api):
    gateway = telegram_gateway(api.base_url, access={"unknown_users": "pair"},
                               web={"enabled": True, "password": WEB_PASSWORD},
                               api_server={"api_keys": [API_SERVER_KEY]})
    async with gateway:
        await api.push_message(57, "hi", user_id=557)
        await eventually(lambda: len(api.screen(57)) == 1, lambda: api.screen(57))
        code = (await gateway.store.pairings(time.time()))[0].code
        state = await snapshot(gateway.console_sources)
    wire = json.dumps(state)
    for secret in (TOKEN, TOKEN.split(":", 1)[1], API_KEY, WEB_PASSWORD, API_SERVER_KEY, code):
        assert secret not in wire
    assert state["config"]["platforms"]["telegram"]["token"] == "***"
    assert state["config"]["model"]["api_key"] == "***" and state["config"]["web"]["password"] == "***"


async def test_a_store_that_fails_leaves_the_rest_of_the_snapshot(api, caplog):
    gateway = telegram_gateway(api.base_url)

    async def broken(*args, **kwargs):
        raise OSError("disk gone")

    async with gateway:
        await until_state(gateway, "telegram", "connected")
        gateway.store.list_conversations = broken
        state = await state_of(gateway)
    assert state["conversations"] == [] and state["errors"] == ["conversations: OSError"]
    assert platform(state, "telegram")["connected"] is True


def test_steady_leaves_out_what_the_clock_changes():
    a = {"generated_at": 1.0, "in_flight": [{"chat_id": "1", "running_for": 2.0, "calls": 3}]}
    b = {"generated_at": 9.0, "in_flight": [{"chat_id": "1", "running_for": 8.5, "calls": 3}]}
    assert steady(a) == steady(b)
    assert steady(a) != steady({**b, "in_flight": [{"chat_id": "1", "running_for": 8.5, "calls": 4}]})


async def test_the_last_messages_are_read_again_only_after_a_new_turn(api):
    from hermes_gateway._core.web.dashboard_state import LastMessages

    gateway = telegram_gateway(api.base_url)
    last = LastMessages()

    async def last_text() -> str:
        state = await snapshot(gateway.console_sources, last=last)
        return state["conversations"][0]["last_messages"][-1]["text"] if state["conversations"] else ""

    async with gateway:
        await api.push_message(90, "echo: one")
        await _until_said(last_text, "one")
        reads = []
        original = gateway.store.conversation

        async def counted(conversation_id):
            reads.append(conversation_id)
            return await original(conversation_id)

        gateway.store.conversation = counted
        for _ in range(3):
            assert await last_text() == "one"
        assert reads == [], "nothing new: nothing read again"
        await api.push_message(90, "echo: two")
        await _until_said(last_text, "two")
        for _ in range(3):
            assert await last_text() == "two"
    assert len(reads) == 1, "one new turn: one read"


async def _until_said(read, text: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while (said := await read()) != text:
        assert time.monotonic() < deadline, said
        await asyncio.sleep(0.05)
