"""Attachments on Slack: a tool's file shared in the reply's thread, through slack_sdk's files_upload_v2 and the emulator.

What is asserted is the thread as a person sees it (a shared file shows as
``[image: qr.png] comment`` after the reply's text) and the files Slack
received, bytes included.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

import aiohttp
import pytest

from hermes_gateway import Config, Media
from hermes_gateway.testing import builtin_tool
from hermes_slack.emulator import BOT_TOKEN
from hermes_slack.files import LIMITS, MAX_FILE_BYTES
from slack_test_support import CURSOR, eventually, gateway, runner

QR_REPLY = "The tool qr_code returned: A QR code for 5 characters of text.\n[image: qr.png attached]"
PNG = builtin_tool("qr_code").function("hello").media[0].data
SHARE = "files.completeUploadExternal"


def settled(api, channel, thread, count):
    screen = api.screen(channel, thread)
    return len(screen) >= count and not api.still_streaming() and not any(CURSOR.strip() in t for t in screen)


async def ask_for_a_qr_code(api, channel="C0TEAM"):
    async with gateway(api, api_timeout=1.0):
        await api.wait_connected()
        ts = await api.push_message(channel, '<@U0BOT> tool: qr_code {"text": "hello"}', kind="channel",
                                    user="U0BOB")
        await eventually(lambda: settled(api, channel, ts, 2), lambda: api.screen(channel), timeout=30)
        await asyncio.sleep(0.2)  # nothing more is on its way
    return ts


def delivery(slack, media_dir):
    """The delivery core sending through the runner's client, tools' files kept in ``media_dir``."""
    media_dir.mkdir(exist_ok=True)
    config = Config()
    return slack.delivery(dataclasses.replace(config, media=dataclasses.replace(config.media,
                                                                               directory=str(media_dir))))


# ---------------------------------------------------------------- end to end: the qr_code tool through the gateway

async def test_the_qr_code_is_shared_in_the_thread_after_the_reply_text(api):
    ts = await ask_for_a_qr_code(api)
    assert api.screen("C0TEAM", ts) == [QR_REPLY, "[image: qr.png] hello"]
    assert api.attachments("C0TEAM", ts) == [("qr.png", PNG)], "the file in the thread, bytes intact"
    assert api.screen("C0TEAM", None) == api.screen("C0TEAM", ts), "nothing outside the thread"
    [get_url] = api.calls_to("files.getUploadURLExternal")
    assert get_url.params["filename"] == "qr.png" and int(get_url.params["length"]) == len(PNG)
    [share] = api.calls_to(SHARE)
    assert (share.params["channel_id"], share.params["thread_ts"], share.params["initial_comment"]) == \
        ("C0TEAM", ts, "hello")
    assert not api.violations


async def test_the_qr_code_is_shared_once_after_a_429(api):
    api.inject_rate_limit(1, method=SHARE)
    ts = await ask_for_a_qr_code(api)
    assert api.screen("C0TEAM", ts) == [QR_REPLY, "[image: qr.png] hello"]
    assert api.attachments("C0TEAM", ts) == [("qr.png", PNG)]
    assert [c.status for c in api.calls_to(SHARE)] == [429, 200], "answered 429, then shared after the wait"
    gap = api.calls_to(SHARE)[1].at - api.calls_to(SHARE)[0].at
    assert gap >= 0.9, f"the retry came {gap:.2f}s after a Retry-After of 1 s"


async def test_the_qr_code_is_not_shared_twice_when_the_answer_to_the_share_is_lost(api):
    api.hang(SHARE, 1.5, landed=True)           # shared, but answered after the plugin's 1 s timeout
    ts = await ask_for_a_qr_code(api)
    assert api.screen("C0TEAM", ts) == [QR_REPLY, "[image: qr.png] hello"]
    assert api.attachments("C0TEAM", ts) == [("qr.png", PNG)]
    assert len(api.calls_to(SHARE)) == 1, "never shared again"


@pytest.mark.parametrize("trouble", ["a lost answer to getUploadURLExternal", "the upload URL answers 500"])
async def test_trouble_before_the_share_is_retried_and_shows_the_file_once(api, tmp_path, trouble):
    api.channel("C0FILES", "channel")
    if trouble.startswith("a lost"):
        api.hang("files.getUploadURLExternal", 1.5, landed=True)
    else:
        api.upload_failures.append(500)
    async with runner(api, api_timeout=1.0) as slack:
        report = await delivery(slack, tmp_path / "media").session("slack", "C0FILES").finish(
            "Your code:", [Media(data=PNG, filename="qr.png", caption="hello")])
    assert api.screen("C0FILES") == ["Your code:", "[image: qr.png] hello"]
    assert api.attachments("C0FILES") == [("qr.png", PNG)]
    assert len(api.calls_to("files.getUploadURLExternal")) == 2, "the whole upload started again"
    assert report.media_uncertain == 0 and len(report.media) == 1
    assert report.media[0].message_id == api.calls_to(SHARE)[0].answer["files"][0]["id"]


# ---------------------------------------------------------------- what goes how

async def test_any_file_is_shared_with_its_caption_and_a_long_caption_is_cut(api, tmp_path):
    api.channel("D0DM", "im")
    caption = "word " * 1000   # 5,000 characters: over the 4,000 the comment may have
    async with runner(api) as slack:
        report = await delivery(slack, tmp_path / "media").session("slack", "D0DM").finish("", [
            Media(data=b"%PDF-1.4", filename="report.pdf", caption="Q3"),
            Media(data=b"ID3", filename="song.mp3", caption=caption)])
    screen = api.screen("D0DM")
    assert screen[0] == "[file: report.pdf] Q3"
    assert screen[1].startswith("[audio: song.mp3] word word") and screen[1].endswith("…")
    assert len(api.calls_to(SHARE)[1].params["initial_comment"]) == 4000
    assert api.attachments("D0DM") == [("report.pdf", b"%PDF-1.4"), ("song.mp3", b"ID3")]
    assert report.media_notes == []


async def test_a_file_over_1_gb_is_one_line_after_the_text_and_never_uploaded(api, tmp_path):
    api.channel("D0DM", "im")
    (tmp_path / "media").mkdir()
    huge = tmp_path / "media" / "disk.img"
    with open(huge, "wb") as out:
        out.truncate(MAX_FILE_BYTES + 1)  # sparse
    async with runner(api) as slack:
        report = await delivery(slack, tmp_path / "media").session("slack", "D0DM").finish(
            "The image:", [Media(path=str(huge))])
    assert api.screen("D0DM") == ["The image:\n\n📎 disk.img (too large for slack)"]
    assert api.calls_to("files.getUploadURLExternal") == [] and api.attachments("D0DM") == []
    assert report.media_notes == ["📎 disk.img (too large for slack)"]


def test_the_declared_limits_are_slacks():
    assert LIMITS.kinds == {"image", "video", "audio", "document"}
    assert all(LIMITS.limit_for(kind) == 1024 ** 3 for kind in LIMITS.kinds)
    assert LIMITS.caption_length == 4000 and not LIMITS.urls


# ---------------------------------------------------------------- the emulator is as strict as Slack

async def call(api, method, **params):
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {BOT_TOKEN}"}) as http:
        async with http.post(api.base_url + method, data=params) as response:
            return await response.json()


async def put(url, data):
    async with aiohttp.ClientSession() as http:
        async with http.post(url, data=data) as response:
            return response.status


async def test_the_three_steps_are_checked_like_slack_does(api):
    api.channel("C0X", "channel")
    assert (await call(api, "files.getUploadURLExternal", filename="a.txt"))["error"] == "invalid_arguments"
    assert (await call(api, "files.getUploadURLExternal", filename="a.txt", length="0"))["error"] == \
        "missing_argument"
    assert (await call(api, "files.getUploadURLExternal", filename="a.txt", length=str(2 ** 31)))["error"] == \
        "file_upload_size_restricted"
    got = await call(api, "files.getUploadURLExternal", filename="a.txt", length="5")
    assert got["ok"] and got["upload_url"].startswith("http://127.0.0.1:")
    files = json.dumps([{"id": got["file_id"]}])
    assert (await call(api, SHARE, files=files, channel_id="C0X"))["error"] == "file_not_found", "not uploaded yet"
    assert await put(got["upload_url"], b"four") == 400, "four bytes for a declared length of five"
    assert await put(got["upload_url"], b"hello") == 200
    assert (await call(api, SHARE, files=files, channel_id="C0NOPE"))["error"] == "channel_not_found"
    assert (await call(api, SHARE, files=files, channel_id="C0X", thread_ts="1.2"))["error"] == "invalid_thread_ts"
    assert (await call(api, SHARE, files=files, channel_id="C0X", initial_comment="hi"))["ok"]
    assert (await call(api, SHARE, files=files, channel_id="C0X"))["error"] == "file_not_found", "shared once"
    assert api.screen("C0X") == ["[file: a.txt] hi"] and api.attachments("C0X") == [("a.txt", b"hello")]
