"""Photos sent at once are one message to the bot: one answer that sees them all (WhatsApp has no albums).

On the Graph API emulator: each photo is its own signed webhook delivery,
as Meta posts them; the screen shows what the person sees.
"""

from __future__ import annotations

from hermes_whatsapp import ROUTE, bursts
from test_whatsapp_inbound_media import png
from whatsapp_test_support import USER, eventually, gateway_for, webhook_url

WIDE, SQUARE, TALL = png(320, 200), png(150, 150), png(100, 180)


async def test_three_photos_sent_at_once_get_one_answer_that_sees_every_photo(meta):
    async with gateway_for(meta) as gateway:
        url = webhook_url(gateway)
        first = meta.media_message(USER, "image", WIDE, caption="describe: these three?")
        second, third = meta.media_message(USER, "image", SQUARE), meta.media_message(USER, "image", TALL)
        for payload in (first, second, third):
            assert await meta.deliver(url, payload) == 200
        assert await meta.deliver(url, second) == 200  # Meta delivers one again: still taken once
        await eventually(lambda: meta.screen(USER) != [], lambda: meta.calls, timeout=10)
        assert await meta.deliver(url, meta.text_message(USER, "echo: and now?")) == 200
        await eventually(lambda: len(meta.screen(USER)) == 2, lambda: meta.screen(USER))
    assert meta.screen(USER) == ["I see a PNG image of 320x200 pixels; a PNG image of 150x150 pixels; "
                                 "a PNG image of 100x180 pixels.", "and now?"]


async def test_a_text_after_a_photo_hands_the_photo_over_first_and_both_are_answered_together(meta, monkeypatch):
    monkeypatch.setattr(bursts, "QUIET", 30.0)  # only the text hands the photo over
    async with gateway_for(meta) as gateway:
        url = webhook_url(gateway)
        assert await meta.deliver(url, meta.media_message(USER, "image", SQUARE, caption="describe: this")) == 200
        assert await meta.deliver(url, meta.text_message(USER, "echo: and this")) == 200
        await eventually(lambda: meta.screen(USER) != [], lambda: meta.screen(USER))
        history = await gateway.history("whatsapp", USER)
    assert meta.screen(USER) == ["I see a PNG image of 150x150 pixels."]  # arriving together: one turn (the lane)
    said = history[0]["content"]
    text = said if isinstance(said, str) else " ".join(p.get("text", "") for p in said if isinstance(p, dict))
    assert text.index("describe: this") < text.index("echo: and this"), text


async def test_photos_still_gathering_when_the_gateway_stops_are_answered(meta, monkeypatch):
    monkeypatch.setattr(bursts, "QUIET", 30.0)
    async with gateway_for(meta, shutdown_grace=10.0) as gateway:
        url = webhook_url(gateway)
        assert await meta.deliver(url, meta.media_message(USER, "image", WIDE, caption="describe: quick")) == 200
        assert gateway.client("whatsapp").bursts._held
    assert meta.screen(USER) == ["I see a PNG image of 320x200 pixels."]
    assert ROUTE  # the webhook the photos came to
