"""Every Python example in docs/plugins.md runs as written, and together they make a working plugin.

The guide's blocks are executed in order as one module, ``hermes_myplatform``
(the plugin a reader would write), against ``plugin_guide_sdk``, a stand-in
for the ``myplatform_sdk`` the guide imports. The last block (the
conformance test a reader would write) is executed on its own, importing
that module.
"""

from __future__ import annotations

import asyncio
import re
import sys
import types
from pathlib import Path

import aiohttp
import pytest

import plugin_guide_sdk as sdk
import hermes_gateway
from hermes_gateway import ConfigError, Platform, Stream, StreamSettings, make_plugins
from hermes_gateway._core.delivery.budget import ALL_CHATS
from hermes_gateway._core.messages.commands import Command
from hermes_gateway.testing import PlatformRunner, TestGateway, run_virtual
from hermes_gateway.testing.conformance import CHECKS

GUIDE = Path(__file__).parents[1] / "docs" / "plugins.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)


@pytest.fixture
def guide(monkeypatch):
    """The guide's plugin module, built from its examples."""
    monkeypatch.setitem(sys.modules, "myplatform_sdk", sdk)
    sdk.CLIENTS.clear()
    module = types.ModuleType("hermes_myplatform")
    monkeypatch.setitem(sys.modules, "hermes_myplatform", module)
    for block in python_blocks()[:-1]:
        exec(compile(block, str(GUIDE), "exec"), module.__dict__)
    return module


async def until(condition, what: str):
    """Wait (a bounded number of loop turns) for something the gateway does in the background."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def conformance_module(guide) -> dict:
    namespace: dict = {}
    exec(compile(python_blocks()[-1], str(GUIDE), "exec"), namespace)
    return namespace


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_the_conformance_example_passes_against_the_guide_plugin(guide, check, run_conformance):
    """The guide's last block is a real conformance test: every check runs and passes (or does not apply)."""
    namespace = conformance_module(guide)
    assert callable(namespace["test_conformance"])
    run_conformance(check, namespace["MyHarness"]())


def test_the_guide_plugin_loads_with_every_hook_it_needs(guide):
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[guide])
    assert plugins.problems == []
    platform = plugins.platform("myplatform").platform
    assert platform.max_message_length == 4096 and platform.bot_budget is not None
    assert platform.settings is guide.MySettings and platform.client is guide.MyClient
    assert [tool.name for tool, _ in plugins.collect("register_tools", hermes_gateway.Tool, "tool")] \
        == ["weather", "chart"]
    assert [c.name for c, _ in plugins.collect("register_commands", Command, "command")] == ["ping"]


def test_an_unconfigured_platform_builds_no_client(guide):
    """Not enabled: the gateway never calls the factory, so the SDK is not even imported."""
    async def main():
        async with TestGateway({"platforms": {"myplatform": {"enabled": False, "token": "t0ken"}}}, guide) as gw:
            assert gw.started_platforms == [] and gw.client("myplatform") is None
    asyncio.run(main())
    assert sdk.CLIENTS == []


@pytest.mark.parametrize("section, key", [({}, "token"), ({"token": "two words"}, "token"),
                                          ({"token": "t0ken", "pol": False}, "pol"),
                                          ({"token": "t0ken", "poll": "yes"}, "poll")])
def test_a_bad_section_is_one_clear_line(guide, section, key):
    with pytest.raises(ConfigError) as caught:
        PlatformRunner(guide, section, source="config.yaml").build()
    message = str(caught.value)
    assert message.startswith(f"config.yaml: platforms.myplatform.{key}: ") and "\n" not in message
    assert "two words" not in message, "a secret is never part of an error"


async def test_messages_come_in_by_polling_and_by_webhook_and_replies_go_out(guide):
    config = {"model": {"demo": {"tokens_per_second": 200}},
              "platforms": {"myplatform": {"token": "t0ken", "webhook_secret": "hook-secret-1"}}}
    async with TestGateway(config, guide) as gateway:  # the factory, the listener, start()
        client = gateway.client("myplatform").sdk
        assert client.token == "t0ken" and gateway.started_platforms == ["myplatform"]
        client.inbox.put_nowait(sdk.Update(1, chat_id=7, user_id=70, message_id=1, text="echo: hello from polling"))
        await until(lambda: client.screen("7") == ["hello from polling"], "the polled message's reply")
        client.inbox.put_nowait(sdk.Update(2, chat_id=7, user_id=70, message_id=2, text="/ping"))
        await until(lambda: client.screen("7")[-1:] == ["pong (myplatform)"], "the plugin's /ping command")
        async with aiohttp.ClientSession() as http:
            event = {"chat_id": 8, "user_id": 80, "event_id": "e1", "text": "echo: hi by webhook"}
            async with http.post(f"{gateway.url}/webhooks/myplatform", json=event) as response:
                assert response.status == 401, "no secret: refused before parsing"
            async with http.post(f"{gateway.url}/webhooks/myplatform", json=event,
                                 headers={"X-Myplatform-Secret": "hook-secret-1"}) as response:
                assert response.status == 200 and await response.text() == "ok"
        await until(lambda: client.screen("8") == ["hi by webhook"], "the webhook message's reply")
    assert client.closed  # close() after the replies


async def test_the_guide_plugin_reports_its_connection_as_polls_answer_and_fail(guide):
    runner = PlatformRunner(guide, {"token": "t0ken", "poll": True})
    async with runner:
        client, context = runner.client.sdk, runner.context
        assert context.connection is None, "nothing reported before the platform answered"
        client.inbox.put_nowait(sdk.Update(1, chat_id=7, user_id=70, message_id=1, text="hello"))
        await until(lambda: context.connection == "connected", "connected once a poll answered")
        client.inbox.put_nowait(sdk.ApiError(503))
        await until(lambda: context.connection == "disconnected", "disconnected when a poll failed")
        assert "polling failed" in context.connection_error
        client.inbox.put_nowait(sdk.Update(2, chat_id=7, user_id=70, message_id=2, text="again"))
        await until(lambda: context.connection == "connected", "connected again after the retry")
    assert [m.text for m in runner.received] == ["hello", "again"]


def test_the_guide_plugin_translates_failures_and_the_reply_still_lands(guide):
    runner = PlatformRunner(guide, {"token": "t0ken", "poll": False})
    client = runner.build().sdk
    client.failures = [sdk.TooManyRequests(3, is_global=True), sdk.Timeout(), sdk.ApiError(502)]
    delivery = runner.delivery()
    reply = "One two three four five six seven eight nine ten."

    async def main():
        session = delivery.session("myplatform", "9", settings=StreamSettings(enabled=True, edit_interval=1.0,
                                                                              min_tokens=1))
        for word in reply.split(" "):
            session.feed(word + " ")
            await asyncio.sleep(0.5)
        return await session.finish()

    report = run_virtual(main())
    assert report.delivered and client.screen("9") == [reply]
    assert report.rate_limited == 1
    assert delivery.budgets._by_chat[("myplatform", ALL_CHATS)].rate_limited == 1  # the 429 was bot-wide


def test_the_append_only_example_appends_and_repairs(guide):
    client = sdk.Client("t0ken")
    stream = Stream(platform=Platform(name="myplatform", append_only=True), chat_id="5")

    async def main():
        ref = await guide.show_appending(client, stream, None, "Hello", final=False)
        await guide.show_appending(client, stream, ref, "Hello wor", final=False)
        await guide.show_appending(client, stream, ref, "Hello world.", final=True)
        shown = client.screen("5")
        await guide.show_appending(client, stream, ref, "Goodbye.", final=True)  # the text was replaced: a repair
        return shown

    first = run_virtual(main())
    assert first == ["Hello world."] and client.screen("5") == ["Goodbye."]


def test_the_guide_plugin_sends_a_tools_media_after_the_text_once_each(guide, tmp_path):
    runner = PlatformRunner(guide, {"token": "t0ken", "poll": False})
    client = runner.build().sdk
    delivery = runner.delivery({"media": {"directory": str(tmp_path / "media")}})
    (tmp_path / "media").mkdir()
    with open(tmp_path / "media" / "huge.pdf", "wb") as huge:
        huge.truncate(50_000_001)  # one byte over the guide's document limit (a sparse file)
    media = list(guide.chart([1, 2, 3]).media) + [
        hermes_gateway.Media(data=b"a,b\n", filename="table.csv"),
        hermes_gateway.Media(data=b"%PDF", filename="notes.pdf"),
        hermes_gateway.Media(path=str(tmp_path / "media" / "huge.pdf")),
    ]
    client.failures = [None,                                 # the text lands
                       sdk.TooManyRequests(2), sdk.ApiError(502), None,   # the chart, at the third try
                       sdk.ApiError(403), None,              # the table is refused for good: its line instead
                       sdk.TimeoutAfterLanding()]            # the notes land, but the call times out

    async def main():
        return await delivery.session("myplatform", "4").finish("Here is your chart.", media)

    report = run_virtual(main())
    assert report.delivered and client.failures == []
    shown = client.chats["4"]
    assert [(m.text, m.kind, m.filename) for m in shown] == [
        ("Here is your chart.\n\n📎 huge.pdf (too large for myplatform)", "", ""),
        ("Your numbers", "photo", "chart.png"),
        ("📎 table.csv (could not be sent)", "", ""),
        ("", "file", "notes.pdf"),                           # once: a send that may have landed is not repeated
    ]
    assert shown[1].file == guide.PIXEL_PNG
    assert report.rate_limited == 1 and report.media_uncertain == 1
    assert report.media == [hermes_gateway.MessageRef("4", str(m.id)) for m in shown[1:3]]
    assert report.media_notes == ["📎 table.csv (could not be sent)", "📎 huge.pdf (too large for myplatform)"]


async def test_the_guides_file_attachment_downloads_within_the_declared_size(guide):
    """The guide's ``stream_download`` example fetches a file whole, and refuses one larger than declared."""
    from aiohttp import web

    from hermes_gateway.testing import serve_locally

    app = web.Application()
    app.router.add_get("/f/{n}", lambda request: web.Response(body=b"p" * int(request.match_info["n"])))
    runner = await serve_locally(app)
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        async with aiohttp.ClientSession() as session:
            fine = guide.file_attachment(session, {"url": f"{base}/f/3000", "size": 3000, "name": "a.pdf"})
            assert (fine.kind, fine.size, fine.filename) == ("document", 3000, "a.pdf")
            assert b"".join([chunk async for chunk in fine.fetch()]) == b"p" * 3000
            liar = guide.file_attachment(session, {"url": f"{base}/f/3000", "size": 100, "name": "b.pdf"})
            with pytest.raises(hermes_gateway.FetchError, match="myplatform: the file 'b.pdf' is 3000 bytes"):
                [chunk async for chunk in liar.fetch()]
            gone = guide.file_attachment(session, {"url": f"{base}/nothing", "size": 1, "name": "c.pdf"})
            with pytest.raises(hermes_gateway.FetchError, match=r"HTTP 404 \(its link expired\)"):
                [chunk async for chunk in gone.fetch()]
    finally:
        await runner.cleanup()


def test_the_guide_names_the_chat_kinds_the_core_reads():
    """The valid ``chat_kind`` values are written down: each one-person word the core knows, and what others mean."""
    from hermes_gateway._core.messages.incoming import DIRECT_KINDS

    guide = GUIDE.read_text(encoding="utf-8")
    section = guide[guide.index("### Chat kinds"):]
    section = section[:section.index("\n### ", 5)]
    for kind in sorted(DIRECT_KINDS):
        assert f"`{kind}`" in section, kind
    assert "chat_kind: group" in section and 'budgets["default"]' in section and "rate_limits" in section


def test_the_guide_shows_what_a_platform_may_declare_and_keep():
    guide = GUIDE.read_text(encoding="utf-8")
    for needle in ('"bytes"', "command_prefix=", "rate_limits", "set_value", "get_value", "delete_value",
                   "make_chat", "async def screen"):
        assert needle in guide, needle
