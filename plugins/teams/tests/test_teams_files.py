"""Files people send reach the core as attachments, downloaded only when it asks, with the bot's token only
where Teams wants it (an inline image on the Bot Connector), never on a shared file's pre-authenticated link
or another host."""

from __future__ import annotations

import pytest

from hermes_gateway import FetchError
from hermes_gateway.testing import samples
from hermes_teams.emulator import TeamsEmulator
from teams_test_support import connect, runner


async def read(attachment) -> bytes:
    return b"".join([chunk async for chunk in attachment.fetch()])


async def test_a_shared_file_and_an_inline_image_are_fetched_when_asked_with_the_token_only_inline(api):
    pdf, png = samples.pdf("quarterly numbers"), samples.png(2, 2, (255, 0, 0))
    async with runner(api) as running:
        connect(api, running.url)
        shared = api.share_file(pdf, "report.pdf")
        inline = api.share_file(png, "photo.png", inline=True)
        await api.send("a:files", "have a look", attachments=[shared, inline])
        [incoming] = running.received
        assert api.downloads == [], "nothing is downloaded before the core asks"
        document, image = incoming.attachments
        assert (document.kind, document.filename, image.kind) == ("document", "report.pdf", "image")
        assert await read(document) == pdf and await read(image) == png
        (_, shared_auth), (_, inline_auth) = api.downloads
        assert shared_auth is None, "a pre-authenticated download link gets no token"
        assert inline_auth is not None and inline_auth.removeprefix("Bearer ") in api.tokens


async def test_an_inline_image_on_another_host_gets_no_token_and_a_refusal_is_one_fetch_error(api):
    async with TeamsEmulator() as elsewhere, runner(api) as running:
        connect(api, running.url)
        foreign = elsewhere.share_file(samples.png(1, 1, (0, 0, 0)), "x.png", inline=True)
        await api.send("a:files2", "and this", attachments=[foreign])
        [image] = running.received[-1].attachments
        with pytest.raises(FetchError) as refused:
            await read(image)
        assert elsewhere.downloads[0][1] is None, "the bot's token never leaves its own service URL"
        assert "x.png" in str(refused.value) and "Bearer" not in str(refused.value)
