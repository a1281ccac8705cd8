"""An album (several photos sent at once) is one message to the bot: one answer that sees every photo.

Through python-telegram-bot and the Bot API emulator, by long polling and
by webhook; and an album still arriving when the gateway stops is not
lost: Telegram was never told it arrived, and sends it again whole.
"""

from __future__ import annotations


import pytest

from hermes_telegram import albums
from telegram_test_support import eventually, gateway_for, spy_on_receive, webhook_gateway
from test_telegram_inbound_media import png

WIDE, SQUARE, TALL = png(320, 200), png(150, 150), png(100, 180)
SEEN_ALL = ("I see a PNG image of 320x200 pixels; a PNG image of 150x150 pixels; "
            "a PNG image of 100x180 pixels.")


async def test_an_album_is_answered_once_and_the_model_sees_every_photo(api):
    async with gateway_for(api.base_url) as gateway:
        seen, _ = spy_on_receive(gateway)
        await api.push_album(42, [WIDE, SQUARE, TALL], caption="describe: these three?")
        await eventually(lambda: api.screen(42) != [], lambda: api.chat(42).messages)
        await api.push_message(42, "echo: and now?")
        await eventually(lambda: len(api.screen(42)) == 2, lambda: api.screen(42))
    assert api.screen(42) == [SEEN_ALL, "and now?"]
    assert [m.text for m in seen] == ["describe: these three?", "echo: and now?"]
    assert [a.kind for a in seen[0].attachments] == ["image", "image", "image"]


async def test_an_album_still_arriving_at_stop_is_sent_again_by_telegram_and_answered_once(api, monkeypatch):
    monkeypatch.setattr(albums, "QUIET", 30.0)  # the album never completes in the first run
    async with gateway_for(api.base_url) as gateway:
        seen, _ = spy_on_receive(gateway)
        await api.push_message(42, "echo: before")
        await eventually(lambda: api.screen(42) == ["before"], lambda: api.screen(42))
        await api.push_album(42, [WIDE, SQUARE], caption="describe: both?")
        await eventually(lambda: gateway.client("telegram").albums.first_held() is not None, lambda: seen)
    assert api.screen(42) == ["before"] and len(seen) == 1
    assert api.pending_updates == 2, "the album's updates were not confirmed"
    monkeypatch.setattr(albums, "QUIET", 0.3)
    async with gateway_for(api.base_url):
        await eventually(lambda: len(api.screen(42)) == 2, lambda: api.screen(42))
    assert api.screen(42) == ["before", "I see a PNG image of 320x200 pixels; a PNG image of 150x150 pixels."]
    assert api.pending_updates == 0


async def test_by_webhook_an_album_is_answered_once(api):
    gateway = webhook_gateway(api.base_url)
    async with gateway:
        update_ids = await api.push_album(42, [WIDE, SQUARE, TALL], caption="describe: by webhook")
        await eventually(lambda: api.screen(42) != [], lambda: api.chat(42).messages)
        assert await api.deliver_again(update_ids[1]) == 200  # a part delivered twice: still one album, answered
        await api.push_message(42, "echo: done")
        await eventually(lambda: api.screen(42)[-1:] == ["done"], lambda: api.chat(42).messages)
    assert api.screen(42) == [SEEN_ALL, "done"]


@pytest.mark.parametrize("count", [albums.MAX_PARTS])
async def test_a_full_album_is_handed_over_without_waiting(api, monkeypatch, count):
    monkeypatch.setattr(albums, "QUIET", 30.0)
    async with gateway_for(api.base_url) as gateway:
        seen, _ = spy_on_receive(gateway)
        await api.push_album(42, [SQUARE] * count)
        await eventually(lambda: len(seen) == 1, lambda: seen, timeout=10)
    assert len(seen[0].attachments) == count and seen[0].text == ""


def test_the_parts_are_merged_in_the_order_sent_with_every_caption():
    from hermes_gateway import Incoming

    parts = [Incoming("telegram", "42", "second caption", update_id="8", message_id="11"),
             Incoming("telegram", "42", "", update_id="9", message_id="12", mentioned=True),
             Incoming("telegram", "42", "first caption", update_id="7", message_id="10")]
    one = albums.merged(parts)
    assert (one.text, one.message_id, one.update_id, one.mentioned) == (
        "first caption\n\nsecond caption", "10", "7", True)
