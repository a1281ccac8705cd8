"""A reply's media: after its text, each item once, through the chat's budget, 429s and ambiguous timeouts;
whatever the platform cannot take becomes one line of text, never nothing."""

from __future__ import annotations

import asyncio
import os

import pytest
from delivery_helpers import feed_over, streaming, words

from hermes_gateway import Media, MediaLimits, RateBudget, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.delivery import Delivery, deliver_events
from hermes_gateway._core.events import TextDelta, TurnEnd
from hermes_gateway.testing import Fault, ReferencePlatform, run_virtual

PNG = b"\x89PNG\r\n\x1a\n" + b"p" * 100
LIMITS = MediaLimits(kinds={"image", "document"}, max_bytes={"image": 1_000, "document": 5_000}, caption_length=20)


def delivery_for(ref, tmp_path):
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    assert not plugins.problems
    return Delivery(plugins, parse_config({"media": {"directory": str(tmp_path / "media")}}, env={}))


def reply(ref, tmp_path, text, media, *, stream=False, chat="c"):
    async def main():
        session = delivery_for(ref, tmp_path).session(ref.platform.name, chat,
                                                      settings=streaming() if stream else None)
        if stream:
            await feed_over(session, words(text), 5)
        return await session.finish(text, media)
    return run_virtual(main())


def test_the_person_sees_the_text_then_each_item_in_order(tmp_path):
    ref = ReferencePlatform(media=LIMITS, budgets={"default": RateBudget(rate=1.0, burst=1)})
    report = reply(ref, tmp_path, "Here are your files.", [
        Media(data=PNG, filename="qr.png", caption="Scan me"),
        Media(data=b"%PDF-1.4", filename="notes.pdf"),
    ], stream=True)
    chat = ref.chat("c")
    assert chat.screen == ["Here are your files.", "[image: qr.png] Scan me", "[document: notes.pdf]"]
    assert chat.messages[1].media.data == PNG and chat.messages[1].media.mime == "image/png"
    assert report.delivered and len(report.media) == 2
    assert [r.message_id for r in report.media] == [m.id for m in chat.messages[1:]]
    # every upload came out of the chat's budget: the platform, enforcing 1/s, never had to say 429
    assert chat.violations == [] and chat.throttled == 0
    uploads = [c.at for c in chat.calls if c.kind == "upload"]
    assert uploads[1] - uploads[0] >= 1.0 - 1e-9


def test_a_429_on_an_upload_is_waited_out_and_the_item_sent_once(tmp_path):
    ref = ReferencePlatform(media=LIMITS, budgets={"default": RateBudget(rate=10.0, burst=5)})
    ref.chat("c").fail_next(Fault.rate_limited(7, on="upload"), times=2)
    report = reply(ref, tmp_path, "Done.", [Media(data=PNG, filename="qr.png")])
    chat = ref.chat("c")
    assert chat.screen == ["Done.", "[image: qr.png]"] and chat.violations == []
    assert report.rate_limited == 2 and len(report.media) == 1


def test_an_upload_that_timed_out_after_landing_is_never_sent_again(tmp_path):
    ref = ReferencePlatform(media=LIMITS, budgets={"default": RateBudget(rate=10.0, burst=5)})
    ref.chat("c").fail_next(Fault.timeout(landed=True, on="upload"))
    report = reply(ref, tmp_path, "Done.", [Media(data=PNG, filename="qr.png"), Media(data=b"x", filename="b.pdf")])
    chat = ref.chat("c")
    assert chat.screen == ["Done.", "[image: qr.png]", "[document: b.pdf]"]
    assert report.media_uncertain == 1 and len(report.media) == 1 and report.media_notes == []


def test_an_upload_that_timed_out_without_landing_is_not_repeated_either(tmp_path):
    # the core cannot tell the two apart: the person then has no attachment for it (and the log says so)
    ref = ReferencePlatform(media=LIMITS, budgets={"default": RateBudget(rate=10.0, burst=5)})
    ref.chat("c").fail_next(Fault.timeout(landed=False, on="upload"))
    report = reply(ref, tmp_path, "Done.", [Media(data=PNG, filename="qr.png")])
    assert ref.chat("c").screen == ["Done."] and report.media_uncertain == 1


def test_a_retryable_failure_is_retried_and_a_final_one_becomes_the_line(tmp_path):
    ref = ReferencePlatform(media=LIMITS, budgets={"default": RateBudget(rate=10.0, burst=5)})
    ref.chat("c").fail_next(Fault.error(retryable=True, on="upload"))
    ref.chat("c").schedule[3] = Fault.error(retryable=False, on="upload")  # the second item, for good
    report = reply(ref, tmp_path, "Done.", [Media(data=PNG, filename="a.png"), Media(data=PNG, filename="b.png",
                                                                                   caption="Second")])
    assert ref.chat("c").screen == ["Done.", "[image: a.png]", "📎 b.png — Second (could not be sent)"]
    assert report.media_notes == ["📎 b.png — Second (could not be sent)"] and len(report.media) == 2


def test_what_the_platform_cannot_take_is_one_line_after_the_text(tmp_path):
    ref = ReferencePlatform(media=LIMITS, budgets={"default": RateBudget(rate=10.0, burst=5)})
    report = reply(ref, tmp_path, "Here.", [
        Media(data=b"v" * 10, filename="clip.mp4"),                    # a kind it does not send: as a file
        Media(data=PNG * 20, filename="big.png"),                      # over the image limit: as a file
        Media(data=b"d" * 6_000, filename="huge.pdf", caption="All of it"),  # over every limit
        Media(url="https://example.com/report.pdf", caption="The report"),  # a link it cannot pass on
    ])
    chat = ref.chat("c")
    assert chat.screen == [
        "Here.\n\n📎 huge.pdf — All of it (too large for reference)\n🔗 The report: https://example.com/report.pdf",
        "[document: clip.mp4]",
        "[document: big.png]",
    ]
    assert chat.violations == [] and len(report.media_notes) == 2


def test_a_kind_the_platform_cannot_send_even_as_a_file_is_a_line(tmp_path):
    ref = ReferencePlatform(media=MediaLimits(kinds={"image"}), budgets={"default": RateBudget(rate=10.0, burst=5)})
    reply(ref, tmp_path, "Here.", [Media(data=b"v" * 10, filename="clip.mp4"), Media(data=PNG, filename="a.png")])
    assert ref.chat("c").screen == ["Here.\n\n📎 clip.mp4 (reference cannot send videos)", "[image: a.png]"]


def test_a_caption_is_cut_to_the_platforms_length(tmp_path):
    ref = ReferencePlatform(media=LIMITS, budgets={"default": RateBudget(rate=10.0, burst=5)})
    reply(ref, tmp_path, "Here.", [Media(data=PNG, filename="a.png", caption="A caption much longer than twenty")])
    assert ref.chat("c").screen[1] == "[image: a.png] A caption much long…"
    assert ref.chat("c").violations == []


def test_a_platform_without_media_shows_every_item_as_a_line(tmp_path):
    ref = ReferencePlatform(supports_edit=False)
    report = reply(ref, tmp_path, "", [Media(data=PNG, filename="qr.png", caption="Scan"),
                                       Media(url="https://example.com/a.png")])
    assert ref.chat("c").screen == ["📎 qr.png — Scan\n🔗 https://example.com/a.png"]
    assert report.delivered and report.media == []


def test_a_file_outside_the_media_directory_is_never_sent(tmp_path, caplog):
    secret = tmp_path / "secret.png"
    secret.write_bytes(PNG)
    (tmp_path / "media").mkdir()
    os.symlink(secret, tmp_path / "media" / "link.png")
    ref = ReferencePlatform(media=LIMITS, budgets={"default": RateBudget(rate=10.0, burst=5)})
    reply(ref, tmp_path, "Here.", [Media(path=str(secret)), Media(path=str(tmp_path / "media" / "link.png")),
                                   Media(path=str(tmp_path / "media" / ".." / "secret.png"))])
    assert ref.chat("c").screen == ["Here.\n\n" + "\n".join(
        [f"📎 {n} (outside the media directory)" for n in ("secret.png", "link.png", "secret.png")])]
    assert "outside the media directory" in caplog.text


def test_an_interrupted_reply_sends_no_media(tmp_path):
    ref = ReferencePlatform(media=LIMITS)

    async def events():
        for word in words("Some words that were shown "):
            yield TextDelta(word)
            await asyncio.sleep(0.5)
        yield TurnEnd(reply="Some words that were shown", interrupted=True, media=(Media(data=PNG, filename="qr.png"),))

    async def main():
        return await deliver_events(events(), delivery_for(ref, tmp_path).session("reference", "c",
                                                                                  settings=streaming()))

    report = run_virtual(main())
    assert report.interrupted and all("qr.png" not in text for text in ref.chat("c").screen)


def test_a_platform_declaring_media_without_on_media_is_refused_at_load():
    import hermes_gateway

    class NoMedia:
        __name__ = "nomedia"

        @hermes_gateway.hookimpl
        def register_platforms(self, register):
            register(hermes_gateway.Platform(name="nomedia", media=MediaLimits()))

        @hermes_gateway.hookimpl
        async def on_stream_end(self, stream, message, text):
            return message

    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[NoMedia()])
    with pytest.raises(KeyError):
        plugins.platform("nomedia")
    assert "declares media but the plugin does not implement on_media" in str(plugins.problems[0])
