"""The plugin conformance suite, run against the reference platform and the example notebook plugin."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hermes_gateway import DeliveryError, MediaLimits, RateBudget, hookimpl
from hermes_gateway.testing import Fault, ReferencePlatform
from hermes_gateway.testing.conformance import (CHECKS, Harness, check_an_attachment_arrives_once_after_the_text,
                                                check_an_identical_edit_is_success,
                                                check_an_upload_that_may_have_landed_is_not_repeated,
                                                check_every_message_ends_with_on_stream_end,
                                                check_the_plugin_implements_the_stream_hooks_it_needs, run_check)

sys.path.insert(0, str(Path(__file__).parents[2] / "plugins" / "notebook"))
import hermes_notebook  # noqa: E402
from hermes_gateway.testing import PlatformRunner  # noqa: E402


class ReferenceHarness(Harness):
    platform = "reference"

    def __init__(self, **kw):
        self.plugin = ReferencePlatform(budgets={"default": RateBudget(rate=100, burst=10)},
                                        max_message_length=200, **kw)

    async def screen(self, chat_id):
        return self.plugin.chat(chat_id).screen

    async def inject_rate_limit(self, chat_id, retry_after):
        self.plugin.chat(chat_id).fail_next(Fault.rate_limited(retry_after))

    async def inject_edit_failure(self, chat_id):
        self.plugin.chat(chat_id).fail_next(Fault.error(retryable=False, on="edit"))

    def attachments(self, chat_id):
        return [(m.media.filename, m.media.data) for m in self.plugin.chat(chat_id).messages if m.media]

    async def inject_upload_timeout(self, chat_id, landed):
        self.plugin.chat(chat_id).fail_next(Fault.timeout(landed=landed, on="upload"))


class NotebookHarness(Harness):
    """A plugin with a client: the checks send through the client the kit builds, as the gateway would."""

    platform = "notebook"

    async def start(self):
        self.runner = PlatformRunner(hermes_notebook, {"title": "conformance"})
        await self.runner.__aenter__()

    async def stop(self):
        await self.runner.__aexit__(None, None, None)

    async def screen(self, chat_id):
        return list(self.runner.client.pages.get(chat_id, []))


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_the_reference_platform_conforms(check):
    async with ReferenceHarness() as harness:
        await run_check(check, harness)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_a_platform_that_sends_media_conforms(check):
    limits = MediaLimits(kinds={"image", "document"}, max_bytes={"image": 5_000_000, "document": 20_000_000})
    async with ReferenceHarness(media=limits) as harness:
        await run_check(check, harness)


async def test_a_plugin_that_uploads_twice_fails_the_suite():
    class Stutter(ReferencePlatform):
        @hookimpl
        async def on_media(self, stream, media):  # retries by itself after a timeout: the person gets two
            try:
                return self._upload(stream, media)
            except DeliveryError:
                return self._upload(stream, media)

    harness = ReferenceHarness()
    harness.plugin = Stutter(budgets={"default": RateBudget(rate=100, burst=10)}, media=MediaLimits())
    with pytest.raises(AssertionError, match="conformance.png"):
        await run_check(check_an_upload_that_may_have_landed_is_not_repeated, harness)


async def test_a_media_plugin_whose_harness_cannot_show_attachments_fails_the_suite():
    class Blind(ReferenceHarness):
        attachments = Harness.attachments

    with pytest.raises(AssertionError, match="must implement attachments"):
        async with Blind(media=MediaLimits()) as harness:
            await run_check(check_an_attachment_arrives_once_after_the_text, harness)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_a_platform_without_edits_conforms(check):
    async with ReferenceHarness(supports_edit=False) as harness:
        await run_check(check, harness)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_the_example_notebook_plugin_conforms(check):
    async with NotebookHarness() as harness:
        await run_check(check, harness)


async def test_a_plugin_that_breaks_a_promise_fails_the_suite():
    class Forgetful(ReferencePlatform):
        @hookimpl
        async def on_delta(self, stream, message, text):  # forgets to return the MessageRef
            ReferencePlatform._show(self, stream, message, text, "on_delta")
            return None

    harness = ReferenceHarness()
    harness.plugin = Forgetful(budgets={"default": RateBudget(rate=100, burst=10)})
    with pytest.raises(AssertionError, match="not a MessageRef"):
        await run_check(check_an_identical_edit_is_success, harness)


async def test_a_plugin_without_on_stream_end_fails_the_suite():
    class Tailless:  # previews only: the reply's tail would never be shown
        __name__ = "tailless"
        plugin = ReferencePlatform(budgets={"default": RateBudget(rate=100, burst=10)})

        @hookimpl
        def register_platforms(self, register):
            register(self.plugin.platform)

        @hookimpl
        async def on_delta(self, stream, message, text):
            return await self.plugin.on_delta(stream, message, text)

    harness = ReferenceHarness()
    harness.plugin = Tailless()
    with pytest.raises(AssertionError, match="does not implement on_stream_end"):
        await run_check(check_the_plugin_implements_the_stream_hooks_it_needs, harness)


async def test_a_plugin_whose_on_stream_end_does_not_show_the_text_fails_the_suite():
    class Finaliser(ReferencePlatform):  # "stops the stream" but never writes the final text
        @hookimpl
        async def on_stream_end(self, stream, message, text):
            if message is None:
                return ReferencePlatform._show(self, stream, message, text, "on_stream_end")
            return message

    harness = ReferenceHarness()
    harness.plugin = Finaliser(budgets={"default": RateBudget(rate=100, burst=10)}, max_message_length=200)
    with pytest.raises(AssertionError, match="not what the message shows"):
        await run_check(check_every_message_ends_with_on_stream_end, harness)


class _Line:
    """A pretend platform connection for :class:`LineClient`: up or down, as the harness sets it."""

    up = True


def _line_plugin(line, *, notices_outage=True, lies=False):
    """A platform whose client reports its connection: it checks ``line`` every 20 ms (like a poll loop)."""
    import asyncio
    from dataclasses import dataclass

    from hermes_gateway import MessageRef, Platform, PlatformClient

    @dataclass(frozen=True)
    class LineSettings:
        name: str = "line"

    class LineClient(PlatformClient):
        async def start(self):
            self.task = asyncio.get_running_loop().create_task(self.watch())

        async def stop(self):
            self.task.cancel()

        async def watch(self):
            while True:
                seen = line.up or not notices_outage
                if lies:
                    self.context.report_disconnected("pretends to be down")
                elif seen:
                    self.context.report_connected()
                else:
                    self.context.report_disconnected("the line is down")
                await asyncio.sleep(0.02)

        async def on_stream_end(self, stream, message, text):
            return MessageRef(stream.chat_id, "1")

    class LinePlugin:
        @hookimpl
        def register_platforms(self, register):
            register(Platform(name="line", max_message_length=100, settings=LineSettings, client=LineClient))

    return LinePlugin()


class LineHarness(Harness):
    platform = "line"

    def __init__(self, **kw):
        self.line = _Line()
        self.plugin = _line_plugin(self.line, **kw)

    async def start(self):
        self.runner = PlatformRunner(self.plugin, {})
        await self.runner.__aenter__()

    async def stop(self):
        await self.runner.__aexit__(None, None, None)

    async def break_connection(self):
        self.line.up = False

    async def restore_connection(self):
        self.line.up = True


async def test_a_client_that_reports_its_connection_truly_passes():
    from hermes_gateway.testing.conformance import check_a_started_client_reports_its_connection

    async with LineHarness() as harness:
        await check_a_started_client_reports_its_connection(harness)
        assert harness.runner.context.connection == "connected"


@pytest.mark.parametrize("kw", [{"notices_outage": False}, {"lies": True}], ids=["misses-an-outage", "lies"])
async def test_a_client_whose_report_is_wrong_fails_the_check(kw, monkeypatch):
    from hermes_gateway.testing import conformance

    monkeypatch.setattr(conformance, "CONNECTION_WAIT", 0.5)
    async with LineHarness(**kw) as harness:
        with pytest.raises(AssertionError):
            await conformance.check_a_started_client_reports_its_connection(harness)


async def test_a_client_that_reports_nothing_is_not_applicable(monkeypatch):
    from hermes_gateway.testing import conformance

    monkeypatch.setattr(conformance, "FIRST_REPORT_WAIT", 0.2)
    async with NotebookHarness() as harness:
        with pytest.raises(conformance.NotApplicable, match="reports nothing"):
            await conformance.check_a_started_client_reports_its_connection(harness)


class RoomHarness(ReferenceHarness):
    """A harness whose server chooses the chat ids (as a Matrix homeserver names rooms ``!id:server``)."""

    async def make_chat(self, purpose):
        made = self.__dict__.setdefault("made", [])
        room = f"!r{len(made)}x{purpose}:example.org"
        made.append(room)
        return room


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_the_checks_use_the_chats_the_harness_made_and_no_invented_id(check):
    limits = MediaLimits(kinds={"image", "document"}, max_bytes={"image": 5_000_000, "document": 20_000_000})
    async with RoomHarness(media=limits) as harness:
        await run_check(check, harness)
        used = set(harness.plugin.chats)
        assert used <= set(getattr(harness, "made", [])), f"chats the server never made: {used}"
        made = getattr(harness, "made", [])
        assert len(set(made)) == len(made), "a purpose's chat is made once per harness"


async def test_a_harness_with_a_sync_screen_still_works_with_a_deprecation_warning():
    class OldStyle(ReferenceHarness):
        def screen(self, chat_id):  # how a harness for the previous kit was written
            return self.plugin.chat(chat_id).screen

    async with OldStyle() as harness:
        with pytest.warns(DeprecationWarning, match=r"OldStyle.screen\(\) is a plain function: define it as "
                                                    r"`async def screen"):
            await run_check(check_an_identical_edit_is_success, harness)
