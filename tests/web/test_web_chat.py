"""The web chat over HTTP, as the page's script uses it: a real gateway, the demo model, the SSE feed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermes_gateway._core.store.base import ConversationKey
from web_helpers import browser_session, config, csrf_of, open_feed, running

SENTENCE = "one two three four five six seven eight nine ten"


def texts(events, final: bool | None = None) -> list[str]:
    return [e["text"] for e in events if e["type"] == "text" and (final is None or e["final"] is final)]


async def send(session, url: str, text: str, csrf: str) -> int:
    async with session.post(f"{url}/ui/api/chat/send", json={"text": text}, headers={"X-CSRF-Token": csrf}) as r:
        return r.status


async def test_a_reply_streams_token_by_token_and_is_kept_in_the_store_as_platform_web(tmp_path):
    db = tmp_path / "store.db"
    cfg = config(tokens_per_second=40, store={"path": str(db)})
    async with running(cfg) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        assert await send(browser, url, f"echo: {SENTENCE}", csrf) == 202
        events = await feed.until(lambda ev: any(e["type"] == "idle" for e in ev))
        feed.close()
        previews = texts(events, final=False)
        assert len(previews) >= 3, previews  # the text grows in steps, each a longer prefix
        shown = [p.removesuffix(" ▌") for p in previews]
        assert all(a != b and SENTENCE.startswith(a) and b.startswith(a) for a, b in zip(shown, shown[1:])), shown
        assert texts(events, final=True) == [SENTENCE]
        assert [e["type"] for e in events][0] == "busy" and events[-1]["type"] == "idle"
        chats = [c for c in await gateway.store.list_conversations() if c.platform == "web"]
        assert len(chats) == 1 and chats[0].first_text == f"echo: {SENTENCE}"
        chat_id = chats[0].chat_id
        async with browser.get(f"{url}/ui/api/chat/history") as r:
            assert (await r.json())["messages"] == [{"role": "user", "text": f"echo: {SENTENCE}"},
                                                    {"role": "assistant", "text": SENTENCE}]
    cfg_file = tmp_path / "config.yaml"
    cfg_file.write_text(f"store:\n  path: {db}\n")
    listed = subprocess.run([sys.executable, "-m", "hermes_gateway", "history", "--config", str(cfg_file)],
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if chat_id in line)
    assert row.split()[3:5] == ["web", chat_id] and "echo: one two" in row


async def test_stop_cuts_the_reply_and_what_was_shown_stays():
    long_text = " ".join(f"word{i}" for i in range(200))
    async with running(config(tokens_per_second=20)) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        assert await send(browser, url, f"echo: {long_text}", csrf) == 202
        await feed.until(lambda ev: len(texts(ev, final=False)) >= 3)
        async with browser.post(f"{url}/ui/api/chat/stop", headers={"X-CSRF-Token": csrf}) as r:
            assert r.status == 202
        events = await feed.until(lambda ev: any(e["type"] == "idle" for e in ev), timeout=15)
        feed.close()
        cut, note = texts(events, final=True)
        assert "▌" not in cut and cut.startswith("word0 word1") and len(cut) < len(long_text)  # cut, not finished
        assert note == "⏹ Stopped."  # the same note as on every platform


async def test_new_starts_a_fresh_conversation_as_on_any_platform():
    async with running(config()) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        await send(browser, url, "echo: remember me", csrf)
        await feed.until(lambda ev: sum(e["type"] == "idle" for e in ev) == 1)
        await send(browser, url, "/new", csrf)
        events = await feed.until(lambda ev: sum(e["type"] == "idle" for e in ev) == 2)
        feed.close()
        assert len(texts(events, final=True)) == 2  # the reply, then the command's answer
        chats = [c for c in await gateway.store.list_conversations() if c.platform == "web"]
        async with browser.get(f"{url}/ui/api/chat/history") as r:
            assert (await r.json())["messages"] == []
        assert len(chats) >= 1 and await gateway.store.history(ConversationKey("web", chats[0].chat_id)) == []


async def test_a_tools_image_is_served_to_its_own_session_only():
    async with running(config()) as gateway, browser_session() as browser, browser_session() as other:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        await send(browser, url, 'tool: qr_code {"text": "https://example.org"}', csrf)
        events = await feed.until(lambda ev: any(e["type"] == "idle" for e in ev))
        feed.close()
        # tool progress, as on every platform (a first send has no cursor: it shows once the store holds it)
        assert any(t.startswith("🔧 qr_code…") for t in texts(events, final=False))
        media = next(e for e in events if e["type"] == "media")
        assert media["kind"] == "image" and media["filename"] == "qr.png"
        async with browser.get(url + media["url"]) as r:
            assert r.status == 200 and r.headers["Content-Type"] == "image/png"
            assert (await r.read()).startswith(b"\x89PNG")
        await csrf_of(other, url)  # another browser, signed in on its own
        async with other.get(url + media["url"]) as r:
            assert r.status == 404


async def test_two_browsers_have_two_chats():
    async with running(config()) as gateway, browser_session() as one, browser_session() as two:
        url = gateway.url
        csrf_one, _ = await csrf_of(one, url), await csrf_of(two, url)
        feed_one, feed_two = await open_feed(one, url), await open_feed(two, url)
        await send(one, url, "echo: for one only", csrf_one)
        await feed_one.until(lambda ev: any(e["type"] == "idle" for e in ev))
        feed_one.close()
        feed_two.close()
        assert texts(feed_two.events) == []


@pytest.mark.parametrize("body, status", [
    (b"", 400), (b"nope", 400), (b"[]", 400), (b'{"text": 3}', 400), (b'{"text": "   "}', 400),
    (b'{"text": "a\\u0000b"}', 400), (b'{"text": "' + b"x" * 32_001 + b'"}', 413), (b"x" * 200_000, 413),
    (b'{"text": "\\ud800"}', 400),
])
async def test_a_malformed_message_is_a_4xx_and_the_chat_goes_on(body, status):
    async with running(config()) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        headers = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
        async with browser.post(f"{url}/ui/api/chat/send", data=body, headers=headers) as r:
            assert r.status == status, await r.text()
            assert (await r.json())["error"]["message"]
        feed = await open_feed(browser, url)
        assert await send(browser, url, "echo: still here", csrf) == 202
        events = await feed.until(lambda ev: any(e["type"] == "idle" for e in ev))
        feed.close()
        assert texts(events, final=True) == ["still here"]


async def test_a_risky_tool_is_asked_about_with_buttons_and_allowed_by_typing_the_answer():
    cfg = config(tools={"approval": {"require": ["qr_code"], "timeout": 30}})
    async with running(cfg) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        await send(browser, url, 'tool: qr_code {"text": "x"}', csrf)
        events = await feed.until(lambda ev: any(e["type"] == "choice" for e in ev))
        question = next(e for e in events if e["type"] == "choice")  # buttons (test_web_choices); typing works too
        assert question["text"].startswith("🔐 Approve running the tool qr_code?")
        question_id = question["options"][0]["payload"].split(":")[1]
        await send(browser, url, f"/allow {question_id}", csrf)
        events = await feed.until(lambda ev: any(e["type"] == "media" for e in ev))
        assert "✅ Approved." in texts(events, final=True)
        events = await feed.until(lambda ev: ev[-1] == {"type": "idle"})
        feed.close()
        idles = [i for i, e in enumerate(events) if e == {"type": "idle"}]
        media = next(i for i, e in enumerate(events) if e["type"] == "media")
        assert idles == [len(events) - 1] and media < idles[0]  # Stop stays until the reply is over


async def test_a_tools_progress_shows_as_the_terminals_lines_beside_the_reply():
    """``🔧 calling NAME`` when the call starts, ``✓ NAME: summary`` when it ran (as the terminal's chat)."""
    async with running(config()) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        await send(browser, url, 'tool: qr_code {"text": "https://example.org"}', csrf)
        events = await feed.until(lambda ev: bool(ev) and ev[-1] == {"type": "idle"})
        feed.close()
        notes = [e["text"] for e in events if e["type"] == "note"]
        assert notes[0] == "🔧 calling qr_code" and notes[1].startswith("✓ qr_code"), notes
        assert len(notes) == 2
        assert not any("calling" in t for t in texts(events, final=True))  # notes, never the reply's text
