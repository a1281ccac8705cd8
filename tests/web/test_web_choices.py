"""Buttons in the web chat: a tool under ``tools.approval.require`` asks with Approve/Deny, a press answers it."""

from __future__ import annotations

import json

from hermes_gateway._core.messages.choice import Choice, ChoiceOption
from hermes_gateway._core.platform import MessageRef, Stream
from hermes_gateway._core.platform_context import PlatformContext
from hermes_gateway._core.web.chat_client import WEB_PLATFORM, WebChatClient
from web_helpers import browser_session, config, csrf_of, open_feed, running

QR = 'tool: qr_code {"text": "https://example.org"}'
APPROVAL = {"tools": {"approval": {"require": ["qr_code"], "timeout": 30}}}


def choice_event(events):
    return next(e for e in events if e["type"] == "choice")


async def press(session, url: str, payload, csrf: str | None) -> tuple[int, dict]:
    headers = {"X-CSRF-Token": csrf} if csrf else {}
    async with session.post(f"{url}/ui/api/chat/choose", json={"payload": payload}, headers=headers) as r:
        return r.status, await r.json()


async def test_offer_choice_is_a_question_event_with_buttons_and_close_choice_replaces_it():
    client = WebChatClient(None, PlatformContext("web", receive=lambda incoming: None))
    stream = Stream(WEB_PLATFORM, "w1")
    choice = Choice("k3f9a2", "Run qr_code?", (ChoiceOption("approve", "Approve", "primary"),
                                               ChoiceOption("deny", "Deny", "danger")))
    ref = await client.offer_choice(stream, choice)
    assert isinstance(ref, MessageRef) and ref.chat_id == "w1"
    await client.close_choice(stream, ref, "✅ Approved: running qr_code.")
    events = [json.loads(e.data) for e in client.feed("w1").events]
    assert events == [
        {"type": "choice", "id": ref.message_id, "text": "Run qr_code?",
         "options": [{"label": "Approve", "style": "primary", "payload": "hgc:k3f9a2:approve"},
                     {"label": "Deny", "style": "danger", "payload": "hgc:k3f9a2:deny"}]},
        {"type": "text", "id": ref.message_id, "text": "✅ Approved: running qr_code.", "final": True}]


async def test_approve_with_the_button_runs_the_tool_and_its_image_arrives():
    async with running(config(**APPROVAL)) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        async with browser.post(f"{url}/ui/api/chat/send", json={"text": QR}, headers={"X-CSRF-Token": csrf}) as r:
            assert r.status == 202
        asked = choice_event(await feed.until(lambda ev: any(e["type"] == "choice" for e in ev)))
        assert "qr_code" in asked["text"] and [o["label"] for o in asked["options"]] == ["Approve", "Deny"]
        approve = asked["options"][0]["payload"]
        status, body = await press(browser, url, approve, None)
        assert status == 403 and body["error"]["code"] == "csrf"  # no CSRF header: nothing decided
        status, body = await press(browser, url, approve, csrf)
        assert status == 200 and "pprove" in (body["line"] or ""), body
        events = await feed.until(lambda ev: any(e["type"] == "media" for e in ev) and ev[-1]["type"] == "idle")
        feed.close()
        closed = [e for e in events if e["type"] == "text" and e["id"] == asked["id"]]
        assert closed and closed[-1]["final"] and closed[-1]["text"].startswith("✅ Approved")
        assert [e["kind"] for e in events if e["type"] == "media"] == ["image"]
        status, body = await press(browser, url, approve, csrf)  # a second press changes nothing
        assert status == 200 and "no longer" in (body["line"] or "").lower(), body


async def test_deny_with_the_button_and_the_tool_does_not_run():
    async with running(config(**APPROVAL)) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        async with browser.post(f"{url}/ui/api/chat/send", json={"text": QR}, headers={"X-CSRF-Token": csrf}) as r:
            assert r.status == 202
        asked = choice_event(await feed.until(lambda ev: any(e["type"] == "choice" for e in ev)))
        status, body = await press(browser, url, asked["options"][1]["payload"], csrf)
        assert status == 200
        events = await feed.until(lambda ev: ev[-1]["type"] == "idle" and any(
            e["type"] == "text" and e["id"] == asked["id"] for e in ev))
        assert not any(e["type"] == "media" for e in events)
        assert any(e["type"] == "text" and e["text"].startswith("❌ Denied") for e in events)
        feed.close()


async def test_a_press_with_a_bad_payload_is_a_400_and_another_chats_question_is_not_answered():
    async with running(config(**APPROVAL)) as gateway, browser_session() as browser, \
            browser_session() as other:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        other_csrf = await csrf_of(other, url)
        for payload in ("", "approve", "hgc::approve", 7, None, "x" * 2000):
            status, body = await press(browser, url, payload, csrf)
            assert status in (400, 413) and body["error"], (payload, status)
        feed = await open_feed(browser, url)
        async with browser.post(f"{url}/ui/api/chat/send", json={"text": QR}, headers={"X-CSRF-Token": csrf}) as r:
            assert r.status == 202
        asked = choice_event(await feed.until(lambda ev: any(e["type"] == "choice" for e in ev)))
        status, body = await press(other, url, asked["options"][0]["payload"], other_csrf)
        assert status == 200 and "no longer" in (body["line"] or "").lower(), body  # not its chat's question
        status, body = await press(browser, url, asked["options"][1]["payload"], csrf)
        assert status == 200
        events = await feed.until(lambda ev: any(e["type"] == "text" and e["id"] == asked["id"] for e in ev))
        feed.close()
        assert not any(e["type"] == "media" for e in events)


async def test_a_page_that_opens_while_a_question_waits_shows_its_buttons_again():
    async with running(config(**APPROVAL)) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        async with browser.post(f"{url}/ui/api/chat/send", json={"text": QR}, headers={"X-CSRF-Token": csrf}) as r:
            assert r.status == 202
        asked = choice_event(await feed.until(lambda ev: any(e["type"] == "choice" for e in ev)))
        feed.close()
        reopened = await open_feed(browser, url)  # a reload: no Last-Event-ID
        assert choice_event(await reopened.until(lambda ev: any(e["type"] == "choice" for e in ev))) == asked
        status, _ = await press(browser, url, asked["options"][0]["payload"], csrf)
        assert status == 200
        await reopened.until(lambda ev: any(e["type"] == "media" for e in ev))
        reopened.close()
        again = await open_feed(browser, url)  # answered: nothing to ask any more
        async with browser.post(f"{url}/ui/api/chat/send", json={"text": "echo: hi"},
                                headers={"X-CSRF-Token": csrf}) as r:
            assert r.status == 202
        events = await again.until(lambda ev: any(e["type"] == "text" and e["final"] for e in ev))
        again.close()
        assert not any(e["type"] == "choice" for e in events)
