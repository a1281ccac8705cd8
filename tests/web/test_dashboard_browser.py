"""The dashboard in a real headless Chromium, on a gateway whose Telegram platform polls the Bot API emulator.

What an operator sees without reloading: Telegram **connected**, a **reply in
flight** while a slow demo reply streams (then gone), a pairing request that
**Approve** lets in (the person is then answered), and chat text holding
HTML shown as text. Debian's ``chromium`` through Playwright's Python
client; the module skips in one line without one.
"""

from __future__ import annotations

import re

import pytest

from browser_helpers import CHROMIUM
from dashboard_support import CONSOLE, TOKEN, telegram_gateway
from hermes_gateway.testing import eventually

if CHROMIUM is None:
    pytest.skip("no chromium on this machine (apt-get install chromium)", allow_module_level=True)
async_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed (the test extra)")
pytest.importorskip("hermes_telegram")
from hermes_telegram.emulator import BotApiEmulator  # noqa: E402

HOSTILE = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\"> hi"


@pytest.fixture
async def api():
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator


async def open_dashboard(browser, url: str):
    page = await browser.new_page()
    await page.goto(f"{url}/ui/dashboard")
    await page.wait_for_selector("#live[data-state='live']")
    return page


async def test_telegram_connected_and_a_reply_in_flight_while_it_runs(browser, api):
    words = " ".join(f"word{i}" for i in range(40))
    async with telegram_gateway(api.base_url, builtins=CONSOLE, tokens_per_second=8) as gateway:  # ~5 s of words
        page = await open_dashboard(browser, gateway.url)
        row = page.locator("#platforms tr[data-platform='telegram']")
        await row.locator(".badge.connected").wait_for()
        assert (await row.locator("td").nth(2).text_content()) == "polling"
        await api.push_message(42, f"echo: {words}")
        flight = page.locator("#in-flight tbody tr")
        await flight.first.wait_for(timeout=30_000)  # live: no reload
        cells = await flight.first.locator("td").all_text_contents()
        # (the row may show before the reply's first call, the typing indicator, has answered: 0 calls then)
        assert cells[0] == "telegram:42" and int(cells[2]) >= 0
        await page.wait_for_function("() => Number(document.querySelector('#in-flight tbody tr td:nth-child(3)')"
                                     "?.textContent) >= 3", timeout=30_000)  # the calls go up while it streams
        await eventually(lambda: api.screen(42) == [words], lambda: api.screen(42), timeout=30)
        await page.wait_for_selector("#in-flight tbody tr", state="detached", timeout=30_000)
        said = page.locator("#conversations li .said")
        await said.nth(1).wait_for()
        assert await said.all_text_contents() == [f"person: echo: {words}", f"bot: {words}"]


async def test_approve_a_pairing_request_and_the_person_can_talk(browser, api):
    async with telegram_gateway(api.base_url, builtins=CONSOLE, access={"unknown_users": "pair"}) as gateway:
        page = await open_dashboard(browser, gateway.url)
        await api.push_message(70, "hello? may I?", user_id=700)
        await eventually(lambda: "pairing code" in " ".join(api.screen(70)), lambda: api.screen(70))
        request = page.locator("#pairing li[data-user='telegram:700']")
        await request.wait_for(timeout=30_000)
        code = re.search(r"[A-Z0-9]{4}-[A-Z0-9]{4}", api.screen(70)[-1]).group(0)
        assert code not in (await request.text_content()) and code.replace("-", "") not in (
            await request.text_content())  # the code the person was given is not shown
        await request.get_by_role("button", name="Approve").click()
        # "approved" shows on the row until the next snapshot removes it; on a busy machine that snapshot can
        # come first, so either is the approval seen (the store is asked below)
        await page.wait_for_function("() => { const row = document.querySelector(\"#pairing li[data-user='telegram:700']\");"
                                     " return !row || row.textContent.includes('approved'); }", timeout=30_000)
        await page.wait_for_selector("#pairing li", state="detached", timeout=30_000)  # the next snapshot
        assert await gateway.store.is_approved("telegram", "700")
        await api.push_message(70, "echo: thanks, I am in", user_id=700)
        await eventually(lambda: api.screen(70)[-1:] == ["thanks, I am in"], lambda: api.screen(70))


async def test_html_in_a_chat_is_shown_as_text_in_the_list_and_the_conversation(browser, api):
    async with telegram_gateway(api.base_url, builtins=CONSOLE) as gateway:
        page = await open_dashboard(browser, gateway.url)
        await api.push_message(80, f"echo: {HOSTILE}")
        said = page.locator("#conversations li .said")
        await said.nth(1).wait_for(timeout=30_000)
        assert await said.all_text_contents() == [f"person: echo: {HOSTILE}", f"bot: {HOSTILE}"]
        await page.locator("#conversations a.open", has_text="telegram:80").click()
        transcript = page.locator("#chat-messages li")
        await transcript.nth(1).wait_for()
        assert (await transcript.nth(1).text_content()).endswith(HOSTILE)
        assert await page.evaluate("() => window.__pwned") is None
        assert await page.locator("#dashboard script, #dashboard img").count() == 0


async def test_a_failing_poll_shows_disconnected_with_its_error_then_connected_again(browser, api):
    async with telegram_gateway(api.base_url, builtins=CONSOLE) as gateway:
        page = await open_dashboard(browser, gateway.url)
        row = page.locator("#platforms tr[data-platform='telegram']")
        await row.locator(".badge.connected").wait_for()
        api.fail_method("getUpdates", 502, "Bad Gateway <b>down</b>", times=2)  # markup in the error: text only
        badge = row.locator(".badge.disconnected")
        await badge.wait_for(timeout=30_000)  # live: no reload
        assert await badge.text_content() == "disconnected"
        assert "Bad Gateway <b>down</b>" in (await badge.get_attribute("title") or "")
        assert "Bad Gateway <b>down</b>" in (await row.locator("td").nth(4).text_content() or "")
        assert await row.locator("b").count() == 0, "the error was shown as text, never parsed"
        await row.locator(".badge.connected").wait_for(timeout=30_000)  # the poll loop got through again
