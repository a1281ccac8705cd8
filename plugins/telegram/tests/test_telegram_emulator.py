"""The emulator answers like the Bot API: shapes, errors, limits, long polling (raw HTTP, no PTB)."""

from __future__ import annotations

import asyncio
import json

import aiohttp

from hermes_telegram.emulator import NOT_MODIFIED
from telegram_test_support import TOKEN


async def call(api, method, *, token=TOKEN, json_body=None, **form):
    url = f"{api.base_url}{token}/{method}"
    async with aiohttp.ClientSession() as session:
        kwargs = {"json": json_body} if json_body is not None else {"data": {k: str(v) for k, v in form.items()}}
        async with session.post(url, **kwargs) as response:
            return response.status, json.loads(await response.text())


async def test_get_me_and_a_wrong_token(api):
    status, body = await call(api, "getMe")
    assert status == 200 and body["ok"] is True
    assert body["result"]["is_bot"] is True and body["result"]["username"]
    assert await call(api, "getMe", token="123:wrong") == (401, {"ok": False, "error_code": 401,
                                                                 "description": "Unauthorized"})
    assert (await call(api, "noSuchMethod"))[0] == 404


async def test_send_and_edit_form_encoded_and_json(api):
    status, body = await call(api, "sendMessage", chat_id=42, text="  hello  ")
    assert status == 200 and body["ok"] is True
    message = body["result"]
    assert message["message_id"] == 1 and message["chat"]["id"] == 42 and message["text"] == "hello"
    status, body = await call(api, "editMessageText", json_body={"chat_id": 42, "message_id": 1, "text": "hi"})
    assert status == 200 and body["result"]["text"] == "hi" and "edit_date" in body["result"]
    assert api.chat(42).screen == ["hi"]
    assert api.chat(42).messages[0].history == ["hello", "hi"]


async def test_an_identical_edit_is_telegrams_not_modified_error(api):
    await call(api, "sendMessage", chat_id=5, text="same")
    assert await call(api, "editMessageText", chat_id=5, message_id=1, text="same") == (
        400, {"ok": False, "error_code": 400, "description": NOT_MODIFIED})
    assert (await call(api, "editMessageText", chat_id=5, message_id=99, text="x"))[1]["description"] == \
        "Bad Request: message to edit not found"


async def test_text_limits_count_utf16_units(api):
    assert (await call(api, "sendMessage", chat_id=1, text="😀" * 2048))[0] == 200      # 4096 units
    status, body = await call(api, "sendMessage", chat_id=1, text="😀" * 2048 + "a")   # 4097 units
    assert (status, body["description"]) == (400, "Bad Request: message is too long")
    assert (await call(api, "sendMessage", chat_id=1, text=" \n "))[1]["description"] == \
        "Bad Request: message text is empty"
    assert api.chat(1).screen == ["😀" * 2048]


async def test_an_injected_429_has_telegrams_shape_and_no_effect(api):
    api.inject_rate_limit(3, 9)
    status, body = await call(api, "sendMessage", chat_id=3, text="too soon")
    assert (status, body) == (429, {"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 9",
                                    "parameters": {"retry_after": 9}})
    assert api.chat(3).screen == []
    await call(api, "sendMessage", chat_id=3, text="still too soon")
    assert api.chat(3).violations, "a call before retry_after ended is recorded"


async def test_a_rate_limit_answers_429_with_whole_seconds():
    from hermes_gateway import RateBudget
    from hermes_telegram.emulator import BotApiEmulator

    async with BotApiEmulator(TOKEN, rate_limit=RateBudget(rate=0.5, burst=2)) as api:
        assert (await call(api, "sendMessage", chat_id=8, text="a"))[0] == 200
        assert (await call(api, "sendMessage", chat_id=8, text="b"))[0] == 200
        status, body = await call(api, "sendMessage", chat_id=8, text="c")
        assert status == 429 and body["parameters"]["retry_after"] in (1, 2)
        assert (await call(api, "sendMessage", chat_id=9, text="other chat"))[0] == 200  # per chat


async def test_get_updates_long_polls_and_confirms_by_offset(api):
    waiting = asyncio.create_task(call(api, "getUpdates", timeout=10))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    update_id = await api.push_message(42, "hello", chat_type="supergroup", thread_id=7)
    status, body = await asyncio.wait_for(waiting, 10)
    [update] = body["result"]
    assert update["update_id"] == update_id
    assert update["message"]["text"] == "hello" and update["message"]["chat"]["type"] == "supergroup"
    assert update["message"]["message_thread_id"] == 7 and update["message"]["is_topic_message"] is True
    assert (await call(api, "getUpdates", offset=update_id))[1]["result"] == [update]   # not confirmed yet
    assert (await call(api, "getUpdates", offset=update_id + 1))[1]["result"] == []
    assert api.pending_updates == 0


async def test_a_second_poller_ends_the_first_with_409(api):
    first = asyncio.create_task(call(api, "getUpdates", timeout=10))
    await asyncio.sleep(0.05)
    second = asyncio.create_task(call(api, "getUpdates", timeout=10))
    status, body = await asyncio.wait_for(first, 10)
    assert status == 409 and body["description"].startswith("Conflict")
    await api.push_message(1, "x")
    assert (await asyncio.wait_for(second, 10))[0] == 200



async def test_get_updates_answers_409_while_a_webhook_is_set(api):
    hook = "http://127.0.0.1:9/webhooks/telegram"  # http:// is accepted, as by a local Bot API server
    assert await call(api, "setWebhook", url=hook, secret_token="abc_DEF-1") == (200, {"ok": True, "result": True})
    status, body = await call(api, "getUpdates", timeout=0)
    assert status == 409 and "webhook is active" in body["description"]
    status, body = await call(api, "setWebhook", url=hook, secret_token="no spaces allowed")
    assert status == 400 and "secret token" in body["description"]
    status, body = await call(api, "setWebhook", url="ftp://127.0.0.1:9/x")
    assert status == 400 and "bad webhook" in body["description"]
    assert (await call(api, "getWebhookInfo"))[1]["result"]["url"] == hook
    assert (await call(api, "deleteWebhook"))[0] == 200
    assert await call(api, "getUpdates", timeout=0) == (200, {"ok": True, "result": []})


async def test_entities_are_checked_as_strictly_as_telegram_does(api):
    def send(text, entities):
        return call(api, "sendMessage", chat_id=5, text=text, entities=json.dumps(entities))

    status, body = await send("hello", [{"type": "bold", "offset": 2, "length": 4}])
    assert status == 400 and "can't parse entities" in body["description"], "an entity past the end"
    status, body = await send("a😀b", [{"type": "bold", "offset": 2, "length": 1}])
    assert status == 400 and "splits a character" in body["description"]
    status, body = await send("link", [{"type": "text_link", "offset": 0, "length": 4}])
    assert status == 400
    status, body = await send("x", [{"type": "sparkles", "offset": 0, "length": 1}])
    assert status == 400
    assert api.chat(5).screen == [], "a refused message shows nothing"
    status, body = await send("  a😀 **b**", [{"type": "bold", "offset": 5, "length": 6}])
    assert status == 200 and body["result"]["entities"] == [{"type": "bold", "offset": 4, "length": 5}]
    assert api.chat(5).formatted() == [("bold", "**b**")], \
        "trimming moves entities with the text, and the space that began the entity out of it (tdlib)"


async def test_whitespace_at_the_start_of_an_entity_is_moved_out_of_it_so_a_first_code_line_loses_its_indent(api):
    """tdlib's fix_formatted_text: an entity's leading spaces/newlines leave it; the text is then trimmed
    up to the first entity. Telegram shows an indented first code line without its indentation."""
    text = "Run:\n\n    indented()\n    more()"
    status, body = await call(api, "sendMessage", chat_id=6, text=text,
                              entities=json.dumps([{"type": "pre", "offset": 6, "length": 25}]))
    assert status == 200 and api.chat(6).formatted() == [("pre", "indented()\n    more()")]
    status, body = await call(api, "sendMessage", chat_id=6, text="    indented()\n    more()",
                              entities=json.dumps([{"type": "pre", "offset": 0, "length": 25}]))
    assert status == 200 and api.chat(6).screen[-1] == "indented()\n    more()"
    assert api.chat(6).formatted(1) == [("pre", "indented()\n    more()")]
    status, body = await call(api, "sendMessage", chat_id=6, text=" go ",
                              entities=json.dumps([{"type": "text_link", "offset": 0, "length": 3,
                                                    "url": "https://example.org"}]))
    assert status == 200 and api.chat(6).screen[-1] == " go", "a text link keeps its leading space"
