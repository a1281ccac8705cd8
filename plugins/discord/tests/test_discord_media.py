"""A tool's media reaches the Discord channel as a message with the file attached, after the text, once.

Through discord.py and the Discord emulator (which reads the multipart
upload as Discord does, keeps each file's bytes and name, and shows it on
the channel's screen as ``[image: qr.png] caption``).
"""

from __future__ import annotations

import json
import logging

import aiohttp
import pytest

from discord_test_support import (SETTINGS, TOKEN, eventually, gateway_config, gateway_for, plugin_for_tests,
                                  runner_for)
from hermes_gateway import Media
from hermes_gateway.testing import plugins_for
from hermes_discord import DiscordPlugin
from hermes_discord.media import LIMITS, UPLOAD_LIMIT

QR_REPLY = "The tool qr_code returned: A QR code for 5 characters of text.\n[image: qr.png attached]"
PNG_1x1 = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                        "0000000b49444154789c6360000200000500017a5eab3f0000000049454e44ae426082")


def media_gateway(api, tmp_path, **tuning):
    """The whole gateway (its built-in tools included) on the emulator, media kept under ``tmp_path``."""
    config = {**gateway_config(api), "media": {"directory": str(tmp_path / "media")}}
    return gateway_for(api, config=config, plugin=plugin_for_tests(**tuning))


def media_runner(api, **tuning):
    """A sending client pointed at the emulator; ``delivery_with_media`` streams through it."""
    return runner_for(api, **tuning)


def delivery_with_media(runner, tmp_path):
    return runner.delivery({"media": {"directory": str(tmp_path / "media")}})


def media_file(tmp_path, name: str, data: bytes = b"", size: int | None = None) -> str:
    directory = tmp_path / "media"
    directory.mkdir(exist_ok=True)
    path = directory / name
    with open(path, "wb") as out:
        out.write(data)
        if size is not None:
            out.truncate(size)
    return str(path)


async def ask_for_a_qr_code(api, tmp_path, channel: str, **tuning) -> None:
    async with media_gateway(api, tmp_path, **tuning):
        await api.push_message(channel, 'tool: qr_code {"text": "hello"}')
        await eventually(lambda: len(api.screen(channel)) == 2, lambda: api.channel(channel).calls)


def uploads(api, channel: str) -> list[str]:
    return [c.outcome for c in api.channel(channel).calls if c.method == "upload"]


# -- through the gateway: the demo model's qr_code tool ------------------------------------------------------

async def test_the_qr_code_is_attached_after_the_reply_text(loose_api, tmp_path):
    api, dm = loose_api, loose_api.dm()
    await ask_for_a_qr_code(api, tmp_path, dm)
    channel = api.channel(dm)
    assert channel.screen == [QR_REPLY, "[image: qr.png] hello"]
    [image] = channel.uploads
    assert image.data.startswith(b"\x89PNG") and len(image.data) > len(PNG_1x1), "a real QR code, as uploaded"
    assert uploads(api, dm) == ["ok"] and not api.violations


async def test_the_qr_code_after_a_429_on_the_upload_is_attached_once(loose_api, tmp_path):
    api, dm = loose_api, loose_api.dm()
    api.uploads.rate_limit_next(dm, 0.5)
    await ask_for_a_qr_code(api, tmp_path, dm)
    assert api.screen(dm) == [QR_REPLY, "[image: qr.png] hello"]
    assert uploads(api, dm) == ["rate_limited", "ok"]
    assert not api.violations, "the second upload came inside the 429's window"


async def test_the_qr_code_after_a_timeout_that_landed_is_not_attached_again(loose_api, tmp_path, caplog):
    api, dm = loose_api, loose_api.dm()
    api.uploads.stall(dm, 1.0, landed=True)
    with caplog.at_level(logging.INFO, logger="hermes_gateway"):
        await ask_for_a_qr_code(api, tmp_path, dm, upload_timeout=0.3)
    assert api.screen(dm) == [QR_REPLY, "[image: qr.png] hello"]
    assert uploads(api, dm) == ["ok"], "a timeout after the upload: never again"
    assert "may have been sent" in caplog.text


# -- through the delivery core ------------------------------------------------------------------------------

async def test_a_timeout_that_did_not_land_leaves_nothing_and_counts_as_uncertain(loose_api, tmp_path):
    api, dm = loose_api, loose_api.dm()
    async with media_runner(api, upload_timeout=0.3) as runner:
        api.uploads.stall(dm, 1.0, landed=False)
        report = await delivery_with_media(runner, tmp_path).session("discord", dm, settings=SETTINGS).finish(
            "A picture:", [Media(data=PNG_1x1, filename="dot.png")])
    assert api.screen(dm) == ["A picture:"] and report.media_uncertain == 1


async def test_a_file_over_the_upload_limit_is_a_line_in_the_text(loose_api, tmp_path):
    api, dm = loose_api, loose_api.dm()
    async with media_runner(api) as runner:
        big = media_file(tmp_path, "dump.zip", size=UPLOAD_LIMIT + 1)
        report = await delivery_with_media(runner, tmp_path).session("discord", dm, settings=SETTINGS).finish(
            "The export:", [Media(path=big, caption="All rows")])
    assert api.screen(dm) == ["The export:\n\n📎 dump.zip — All rows (too large for discord)"]
    assert api.channel(dm).uploads == [] and uploads(api, dm) == []
    assert report.media_notes == ["📎 dump.zip — All rows (too large for discord)"]


async def test_a_413_from_discord_is_final_and_the_line_follows(loose_api, tmp_path):
    """A channel whose limit is lower than declared: 413 code 40005, not retried, the item's line instead."""
    api, dm = loose_api, loose_api.dm()
    async with media_runner(api) as runner:
        api.uploads.upload_limit = 4096
        path = media_file(tmp_path, "notes.txt", b"x" * 10_000)
        await delivery_with_media(runner, tmp_path).session("discord", dm, settings=SETTINGS).finish(
            "Notes:", [Media(path=path, caption="Meeting notes")])
    assert api.screen(dm) == ["Notes:", "📎 notes.txt — Meeting notes (could not be sent)"]
    assert uploads(api, dm) == ["Request entity too large"]


async def test_every_kind_is_a_file_in_order_with_its_bytes(loose_api, tmp_path):
    api, dm = loose_api, loose_api.dm()
    async with media_runner(api) as runner:
        items = [Media(data=PNG_1x1, filename="a.png"), Media(data=b"\x00" * 64, filename="b.mp4", caption="Clip"),
                 Media(data=b"ID3" + b"\x00" * 61, filename="c.mp3"), Media(data=b"%PDF-1.4", filename="d.pdf")]
        report = await delivery_with_media(runner, tmp_path).session("discord", dm, settings=SETTINGS).finish(
            "Four files:", items)
    assert api.screen(dm) == ["Four files:", "[image: a.png]", "[video: b.mp4] Clip", "[audio: c.mp3]",
                              "[file: d.pdf]"]
    assert [(u.filename, u.data) for u in api.channel(dm).uploads] == [(m.filename, m.data) for m in items]
    assert [r.message_id for r in report.media] == [m.id for m in api.channel(dm).messages[1:]]
    assert not api.violations, "every upload with allowed_mentions none"


async def test_a_long_caption_is_cut_to_2000_characters(loose_api, tmp_path):
    api, dm = loose_api, loose_api.dm()
    async with media_runner(api) as runner:
        caption = "word " * 500
        await delivery_with_media(runner, tmp_path).session("discord", dm, settings=SETTINGS).finish(
            "", [Media(data=PNG_1x1, filename="a.png", caption=caption)])
    [sent] = api.channel(dm).uploads
    assert len(sent.caption) <= 2000 and sent.caption.endswith("…") and caption.startswith(sent.caption[:-1])
    assert not api.violations


async def test_a_caption_that_mentions_everyone_pings_nobody(loose_api, tmp_path):
    api = loose_api
    async with media_runner(api) as runner:
        await delivery_with_media(runner, tmp_path).session("discord", api.general, settings=SETTINGS).finish(
            "", [Media(data=PNG_1x1, filename="a.png", caption="@everyone look <@2001>")])
    assert api.screen(api.general) == ["[image: a.png] @everyone look <@2001>"] and not api.violations


def test_a_bot_in_boosted_servers_can_declare_a_higher_limit(loose_api):
    assert LIMITS.limit_for("image") == 10 * 1024 * 1024 and LIMITS.caption_length == 2000
    platform = plugins_for(DiscordPlugin(upload_limit=50 * 1024 * 1024)).platform("discord").platform
    assert platform.media.limit_for("document") == 50 * 1024 * 1024


# -- the emulator reads uploads as strictly as Discord -------------------------------------------------------

def multipart(payload: dict | None, files: dict[str, bytes]) -> aiohttp.FormData:
    form = aiohttp.FormData(quote_fields=False)
    if payload is not None:
        form.add_field("payload_json", json.dumps(payload), content_type="application/json")
    for name, data in files.items():
        form.add_field(name, data, filename="x.png", content_type="application/octet-stream")
    return form


NONE = {"parse": []}


@pytest.mark.parametrize("payload,files,answer", [
    ({"content": "hi", "allowed_mentions": NONE, "attachments": [{"id": 0, "filename": "x.png"}]},
     {"file": PNG_1x1}, (400, 50035)),
    ({"content": "hi", "allowed_mentions": NONE, "attachments": [{"id": 1, "filename": "x.png"}]},
     {"files[0]": PNG_1x1}, (400, 50035)),
    (None, {"files[0]": PNG_1x1}, (400, 50035)),
    ({"allowed_mentions": NONE, "attachments": [{"id": 0, "filename": "x.png"}]}, {"files[0]": b""}, (400, 50006)),
    ({"allowed_mentions": NONE, "attachments": [{"id": 0, "filename": "x.png"}]},
     {"files[0]": b"x" * (UPLOAD_LIMIT + 1)}, (413, 40005)),
])
async def test_the_emulator_refuses_uploads_as_discord_does(loose_api, payload, files, answer):
    api, dm = loose_api, loose_api.dm()
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{api.api_base_url}/channels/{dm}/messages", data=multipart(payload, files),
                             headers={"Authorization": f"Bot {TOKEN}"}) as resp:
            body = await resp.json()
    assert (resp.status, body["code"]) == answer and api.channel(dm).uploads == [] and api.screen(dm) == []
