"""The console in a real headless Chromium: sign in, watch a reply stream, stop one, a tool's image, no injection.

Debian's ``chromium`` through Playwright's Python client; the whole module
skips in one line without one (``.ci/run`` installs it under CI).
"""

from __future__ import annotations

import asyncio

import pytest

from browser_helpers import CHROMIUM, RECORD_STEPS, launch_args
from web_helpers import config, running

if CHROMIUM is None:
    pytest.skip("no chromium on this machine (apt-get install chromium)", allow_module_level=True)
async_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed (the test extra)")

PASSWORD = "browser-test-password"
STREAMED = "hello, this reply grows in the browser one word after another until it ends here"


async def open_chat(browser, url: str):
    page = await browser.new_page()
    await page.goto(f"{url}/ui")
    await page.wait_for_selector("body[data-ready='1']")
    return page


async def say(page, text: str) -> None:
    await page.fill("#text", text)
    await page.press("#text", "Enter")


async def bot_texts(page) -> list[str]:
    return await page.eval_on_selector_all(".msg.bot", "nodes => nodes.map(n => n.textContent)")


async def test_sign_in_then_a_reply_grows_in_at_least_three_steps(browser):
    async with running(config({"password": PASSWORD}, tokens_per_second=15)) as gateway:
        page = await browser.new_page()
        await page.goto(f"{gateway.url}/ui")
        assert page.url.endswith("/ui/login")  # no session: the sign-in page
        await page.fill("#secret", "not the password")
        await page.click("button[type=submit]")
        await page.wait_for_selector("#error:has-text('wrong password')")
        await page.fill("#secret", PASSWORD)
        await page.click("button[type=submit]")
        await page.wait_for_url(f"{gateway.url}/ui")
        await page.wait_for_selector("body[data-ready='1']")
        await page.evaluate(RECORD_STEPS)
        await say(page, f"echo: {STREAMED}")
        await page.wait_for_function("() => document.querySelector('.msg.bot[data-final=\"1\"]')", timeout=30_000)
        steps = await page.evaluate("() => window.__steps")
        growing = [s.removesuffix(" ▌") for s in steps if s]
        assert len(growing) >= 4, steps  # at least three steps before the final text
        assert all(STREAMED.startswith(a) and b.startswith(a) for a, b in zip(growing, growing[1:])), steps
        assert await bot_texts(page) == [STREAMED]
        assert await page.is_hidden("#stop")


async def test_stop_cuts_a_long_reply_and_what_was_shown_stays(browser):
    long_text = " ".join(f"word{i}" for i in range(300))
    async with running(config(tokens_per_second=15)) as gateway:
        page = await open_chat(browser, gateway.url)
        await say(page, f"echo: {long_text}")
        await page.wait_for_function("() => (document.querySelector('.msg.bot')?.textContent || '').length > 20")
        await page.click("#stop")
        await page.wait_for_selector("#stop", state="hidden", timeout=30_000)
        first = await bot_texts(page)
        await asyncio.sleep(1.0)  # 15 more words would have come by now
        assert await bot_texts(page) == first
        cut = first[0]
        assert cut.startswith("word0 word1") and "▌" not in cut and len(cut) < len(long_text)
        assert first[-1] == "⏹ Stopped."


async def test_a_tools_image_shows_inline(browser):
    async with running(config()) as gateway:
        page = await open_chat(browser, gateway.url)
        await say(page, 'tool: qr_code {"text": "https://example.org"}')
        image = await page.wait_for_selector(".msg.media img", timeout=30_000)
        await page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image)
        assert await image.get_attribute("alt")


async def test_html_in_a_reply_renders_as_text_and_never_runs(browser):
    hostile = ('<script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2"> '
               '[click me](javascript:window.pwned=3) **bold** `<b>code</b>`')
    async with running(config()) as gateway:
        page = await open_chat(browser, gateway.url)
        await say(page, f"echo: {hostile}")
        await page.wait_for_selector(".msg.bot[data-final='1']", timeout=30_000)
        reply = await page.query_selector(".msg.bot")
        text = await reply.text_content()
        assert "<script>window.pwned = 1</script>" in text and '<img src=x onerror="window.pwned = 2">' in text
        assert "[click me](javascript:window.pwned=3)" in text  # refused as a link: shown as written
        assert await reply.query_selector_all("script, img, b, a") == []
        assert await reply.eval_on_selector("strong", "n => n.textContent") == "bold"
        assert await reply.eval_on_selector("code", "n => n.textContent") == "<b>code</b>"
        await asyncio.sleep(0.3)
        assert await page.evaluate("() => window.pwned") is None


async def test_the_markdown_renderer_builds_only_text_nodes_from_model_text(browser):
    """The renderer alone (unit level, in the browser that runs it): hostile Markdown in, inert DOM out."""
    cases = {
        "<script>alert(1)</script>": [],
        "<img src=x onerror=alert(1)>": [],
        "[x](javascript:alert(1))": [],
        "[x](JaVaScRiPt:alert(1))": [],
        "[x](data:text/html,<script>alert(1)</script>)": [],
        "[ok](https://example.org/a?b=<c>)": ["A"],
        "```html\n<script>alert(1)</script>\n```": ["PRE", "CODE"],
        "**<i>bold</i>** _it_ `x`": ["STRONG", "EM", "CODE"],
        "# <h1>title</h1>\n- <li>item</li>\n> <q>": ["H3", "UL", "LI", "BLOCKQUOTE"],
    }
    async with running(config()) as gateway:
        page = await open_chat(browser, gateway.url)
        for source, tags in cases.items():
            made = await page.evaluate("""source => {
                const box = document.createElement('div');
                box.appendChild(Markdown.render(source));
                const links = [...box.querySelectorAll('a')].map(a => a.getAttribute('href'));
                return {tags: [...box.querySelectorAll('*')].map(n => n.tagName).filter(t => !['P', 'BR'].includes(t)),
                        text: box.textContent, links};
            }""", source)
            assert made["tags"] == tags, (source, made)
            assert all(link.startswith("https://") for link in made["links"]), (source, made)
            if "<" in source and "```" not in source and not made["links"]:
                assert "<" in made["text"], (source, made)  # the markup is shown, as text


async def test_approve_a_tool_with_the_button_and_see_its_result(browser):
    async with running(config(tools={"approval": {"require": ["qr_code"], "timeout": 30}})) as gateway:
        page = await open_chat(browser, gateway.url)
        await say(page, 'tool: qr_code {"text": "https://example.org"}')
        approve = await page.wait_for_selector(".msg.bot.choice button:has-text('Approve')", timeout=30_000)
        question = await page.eval_on_selector(".msg.bot.choice", "n => n.textContent")
        assert "Approve running the tool qr_code" in question
        assert await page.is_visible(".msg.bot.choice button:has-text('Deny')")
        notes = await page.eval_on_selector_all(".note.tool", "nodes => nodes.map(n => n.textContent)")
        assert notes == ["🔧 calling qr_code"], notes
        await page.reload()  # the question still waits: a page that opens shows its buttons again
        await page.wait_for_selector("body[data-ready='1']")
        approve = await page.wait_for_selector(".msg.bot.choice button:has-text('Approve')", timeout=30_000)
        await approve.click()
        image = await page.wait_for_selector(".msg.media img", timeout=30_000)
        await page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image)
        texts = await bot_texts(page)
        assert any(t.startswith("✅ Approved: running qr_code") for t in texts), texts
        assert await page.query_selector_all(".msg.bot button") == []  # the question lost its buttons
        notes = await page.eval_on_selector_all(".note.tool", "nodes => nodes.map(n => n.textContent)")
        assert len(notes) == 1 and notes[0].startswith("✓ qr_code: A QR code"), notes  # (the page was reloaded)
        await page.set_viewport_size({"width": 700, "height": 260})  # a log taller than the window: nothing squashed
        heights = await page.eval_on_selector_all("#log > *", "nodes => nodes.map(n => n.getBoundingClientRect().height)")
        assert all(h >= 10 for h in heights), heights


async def test_upload_an_image_and_the_demo_model_describes_it(browser, tmp_path):
    from files_helpers import image_bytes

    photo = tmp_path / "photo.png"
    photo.write_bytes(image_bytes(64, 48))
    async with running(config(media={"directory": str(tmp_path / "media")})) as gateway:
        page = await open_chat(browser, gateway.url)
        async with page.expect_file_chooser() as chooser:
            await page.click("#attach")
        await (await chooser.value).set_files(str(photo))
        await page.wait_for_selector("#attached .chip:has-text('photo.png')")
        await say(page, "describe")
        thumb = await page.wait_for_selector(".msg.user img.thumb")
        await page.wait_for_function("img => img.complete && img.naturalWidth === 64", arg=thumb)
        await page.wait_for_selector(".msg.bot[data-final='1']", timeout=30_000)
        assert await bot_texts(page) == ["I see a PNG image of 64x48 pixels."]
        assert await page.is_hidden("#attached")
        await page.reload()  # the stored conversation: the person's message still shows its image
        await page.wait_for_selector("body[data-ready='1']")
        thumb = await page.wait_for_selector(".msg.user img.thumb")
        await page.wait_for_function("img => img.complete && img.naturalWidth === 64", arg=thumb)
        assert await page.eval_on_selector(".msg.user", "n => n.textContent") == "describe"


async def test_upload_a_pdf_and_a_text_file_and_their_text_is_used(browser, tmp_path):
    from files_helpers import pdf_bytes

    memo, notes = tmp_path / "memo.pdf", tmp_path / "notes.txt"
    memo.write_bytes(pdf_bytes("Lunch moved to Thursday"))
    notes.write_text("Buy milk and bread before noon")
    async with running(config(media={"directory": str(tmp_path / "media")})) as gateway:
        page = await open_chat(browser, gateway.url)
        await page.set_input_files("#file", [str(memo), str(notes)])
        await page.click("#send")
        await page.wait_for_selector(".msg.bot[data-final='1']", timeout=30_000)
        mine = await page.eval_on_selector(".msg.user", "n => n.textContent")
        assert "memo.pdf" in mine and "notes.txt" in mine
        (reply,) = await bot_texts(page)
        assert '"Lunch moved to Thursday"' in reply and '"Buy milk and bread before noon"' in reply, reply


async def test_an_oversized_upload_is_refused_in_the_persons_own_message(browser, tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * 4096)
    cfg = config(media={"directory": str(tmp_path / "media"), "inbound_max_bytes": {"document": "1 KB"}})
    async with running(cfg) as gateway:
        page = await open_chat(browser, gateway.url)
        await page.set_input_files("#file", str(big))
        await page.click("#send")
        error = await page.wait_for_selector(".msg.user .error", timeout=30_000)
        assert "big.txt: too large" in await error.text_content()
        await asyncio.sleep(0.5)
        assert await bot_texts(page) == []


async def test_a_dropped_file_and_a_pasted_image_are_attached(browser):
    async with running(config()) as gateway:
        page = await open_chat(browser, gateway.url)
        await page.evaluate("""() => {
            const dropped = new DataTransfer();
            dropped.items.add(new File(["hello"], "dropped.txt", {type: "text/plain"}));
            document.getElementById('log').dispatchEvent(new DragEvent('drop', {dataTransfer: dropped, bubbles: true, cancelable: true}));
            const pasted = new DataTransfer();
            pasted.items.add(new File([new Uint8Array([137, 80, 78, 71])], "image.png", {type: "image/png"}));
            document.getElementById('text').dispatchEvent(new ClipboardEvent('paste', {clipboardData: pasted, bubbles: true, cancelable: true}));
        }""")
        chips = await page.eval_on_selector_all("#attached .chip", "nodes => nodes.map(n => n.textContent)")
        assert [c.split(" ")[1] for c in chips] == ["dropped.txt", "image.png"], chips
        await page.click("#attached .chip button")  # removed again before sending
        chips = await page.eval_on_selector_all("#attached .chip", "nodes => nodes.map(n => n.textContent)")
        assert [c.split(" ")[1] for c in chips] == ["image.png"], chips


async def test_record_a_voice_note_and_the_model_hears_its_transcript(tmp_path):
    """Chromium's fake microphone (a beep) records a real WebM/Opus note; the transcription API hears it."""
    from hermes_gateway.testing.audio import AudioApiServer

    async with async_api.async_playwright() as playwright, \
            AudioApiServer(transcribe=lambda data: "call Ada at noon") as speech:
        chromium = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=launch_args() + ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"])
        try:
            cfg = config(media={"directory": str(tmp_path)},
                         voice={"transcription": {"base_url": speech.base_url, "model": "whisper-1"}})
            async with running(cfg) as gateway:
                page = await open_chat(chromium, gateway.url)
                assert await page.is_visible("#record")
                await page.click("#record")
                await page.wait_for_selector("#record.recording")
                await asyncio.sleep(1.5)
                await page.click("#record")
                await page.wait_for_selector(".msg.user:has-text('voice note')")
                await page.wait_for_selector(".msg.bot[data-final='1']", timeout=30_000)
                assert await bot_texts(page) == ['I heard: "call Ada at noon".']
                (heard,) = speech.uploads
                assert heard.filename.endswith(".webm") and heard.seconds > 0.5, heard
        finally:
            await chromium.close()


async def test_signed_in_with_an_api_key_the_chat_works_and_the_dashboard_is_not_offered(browser):
    key = "sk-browser-test-key-0001"
    async with running(config({"password": PASSWORD}, api={"api_keys": [key]}, tokens_per_second=0)) as gateway:
        page = await browser.new_page()
        await page.goto(f"{gateway.url}/ui/login")
        await page.fill("#secret", key)
        await page.click("button[type=submit]")
        await page.wait_for_url(f"{gateway.url}/ui")
        await page.wait_for_selector("body[data-ready='1']")
        await page.wait_for_selector("nav a[href='/ui/dashboard']", state="hidden")
        assert await page.is_visible("nav a[href='/ui']")
        await say(page, "echo: a user's chat")
        await page.wait_for_function("() => document.querySelector('.msg.bot[data-final=\"1\"]')", timeout=30_000)
        assert await bot_texts(page) == ["a user's chat"]
        response = await page.goto(f"{gateway.url}/ui/dashboard")
        assert response.status == 403 and "operator" in await page.content()
