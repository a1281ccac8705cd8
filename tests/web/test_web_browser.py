"""The console in a real headless Chromium: sign in, watch a reply stream, stop one, a tool's image, no injection.

Debian's ``chromium`` through Playwright's Python client; the whole module
skips in one line without one (``.ci/run`` installs it under CI).
"""

from __future__ import annotations

import asyncio

import pytest

from browser_helpers import CHROMIUM, RECORD_STEPS, launch
from web_helpers import config, running

if CHROMIUM is None:
    pytest.skip("no chromium on this machine (apt-get install chromium)", allow_module_level=True)
async_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed (the test extra)")

PASSWORD = "browser-test-password"
STREAMED = "hello, this reply grows in the browser one word after another until it ends here"


@pytest.fixture
async def browser():
    async with async_api.async_playwright() as playwright:
        chromium = await launch(playwright)
        try:
            yield chromium
        finally:
            await chromium.close()


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
