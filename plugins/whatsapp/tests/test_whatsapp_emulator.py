"""The Graph API emulator answers like the Cloud API, so the plugin's tests mean something."""

from __future__ import annotations

import aiohttp

from hermes_gateway import RateBudget
from hermes_whatsapp.emulator import GraphApiEmulator
from whatsapp_test_support import APP_SECRET, PHONE_ID, TOKEN, USER


async def post(meta, body, token=TOKEN, phone=PHONE_ID):
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{meta.base_url}/{phone}/messages", json=body,
                             headers={"Authorization": f"Bearer {token}"}) as r:
            return r.status, await r.json()


def text(body, to=USER, **extra):
    return {"messaging_product": "whatsapp", "to": to, "type": "text", "text": {"body": body}, **extra}


async def test_a_send_returns_a_wamid_and_shows_on_the_phone(meta):
    status, answer = await post(meta, text("Hello", context={"message_id": "wamid.Q"}))
    assert status == 200 and answer["messages"][0]["id"].startswith("wamid.")
    assert answer["contacts"] == [{"input": USER, "wa_id": USER}]
    [message] = meta.user(USER).messages
    assert (message.text, message.quotes, message.wamid) == ("Hello", "wamid.Q", answer["messages"][0]["id"])


async def test_errors_come_in_the_body_with_their_code(meta):
    assert (await post(meta, text("x"), token="EAAwrongtoken"))[1]["error"]["code"] == 190
    status, answer = await post(meta, text("x"), phone="999")
    assert status == 400 and answer["error"]["code"] == 100
    assert (await post(meta, {"to": USER, "type": "text", "text": {"body": "x"}}))[1]["error"]["code"] == 100
    status, answer = await post(meta, text("y" * 4097))
    assert status == 400 and "4096" in answer["error"]["message"]
    assert (await post(meta, text("y" * 4096)))[0] == 200
    meta.inject_pair_rate_limit(USER)
    status, answer = await post(meta, text("z"))
    assert status == 400 and answer["error"]["code"] == 131056 and answer["error"]["error_data"]["details"]
    assert meta.screen(USER) == ["y" * 4096]
    assert meta.user(USER).violations == ["a text of 4097 characters"]


async def test_typing_needs_a_message_the_user_sent(meta):
    wamid = meta.text_message(USER, "hi")["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
    typing = {"messaging_product": "whatsapp", "status": "read", "message_id": wamid,
              "typing_indicator": {"type": "text"}}
    assert await post(meta, typing) == (200, {"success": True})
    status, answer = await post(meta, {**typing, "message_id": "wamid.unknown"})
    assert status == 400 and answer["error"]["code"] == 100
    assert meta.user(USER).typing == [wamid] and meta.user(USER).read == [wamid]


async def test_the_pair_limit_and_the_wait_after_it():
    async with GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET, pair_limit=RateBudget(rate=0.01, burst=2)) as meta:
        outcomes = [(await post(meta, text(str(i))))[0] for i in range(3)]
        assert outcomes == [200, 200, 400]
        assert (await post(meta, text("too soon")))[0] == 400  # sent within the 4 s after a 131056
        [violation] = meta.user(USER).violations
        assert violation.startswith("a send ") and violation.endswith("before the pair rate limit's wait ended")


async def test_every_call_is_recorded(meta):
    await post(meta, text("one"))
    await post(meta, text("two"), token="EAAwrongtoken")
    assert [(c.method, c.status, c.outcome.split(":")[0]) for c in meta.calls] == \
        [("POST", 200, "sent"), ("POST", 401, "190")]
    assert meta.calls[0].body["text"]["body"] == "one"


async def test_a_failed_lookup_answers_its_error_once_then_the_number_again(meta):
    meta.fail_lookup(2, status=503)
    url = f"{meta.base_url}/{PHONE_ID}"
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with http.get(url) as r:
            assert r.status == 503 and (await r.json())["error"]["code"] == 2
        async with http.get(url) as r:
            assert r.status == 200 and (await r.json())["id"] == PHONE_ID
