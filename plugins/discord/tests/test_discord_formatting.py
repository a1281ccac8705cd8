"""Markdown tables on Discord: an aligned grid in a code block when it fits a phone, else bold-key lines."""

from __future__ import annotations

import asyncio

import pytest

from discord_test_support import CURSOR, SETTINGS, runner_for
from hermes_discord.formatting import TABLE_WIDTH, render, rendered_length

FIVE_COLUMNS = ("Here are the libraries:\n\n"
                "| Name | Language | Stars | License | Last release |\n"
                "|------|:--------:|------:|---------|--------------|\n"
                "| requests | Python | 51k | Apache-2.0 | 2024-05-29 |\n"
                "| httpx | Python | 13k | BSD-3 | [2024-06](https://example.org/httpx) |\n\n"
                "Pick **one**.")
RECORDS = ("Here are the libraries:\n\n"
           "**Name**: requests\n**Language**: Python\n**Stars**: 51k\n**License**: Apache-2.0\n"
           "**Last release**: 2024-05-29\n\n"
           "**Name**: httpx\n**Language**: Python\n**Stars**: 13k\n**License**: BSD-3\n"
           "**Last release**: [2024-06](https://example.org/httpx)\n\n"
           "Pick **one**.")


def test_a_narrow_table_becomes_a_grid_in_a_code_block():
    assert render("| Item | Qty |\n|---|--:|\n| apples | 3 |") == "```\nItem    Qty\n──────  ───\napples    3\n```"
    assert TABLE_WIDTH >= len("Item    Qty")


def test_a_wide_table_becomes_bold_key_lines_and_a_preview_keeps_its_cursor_last():
    assert render(FIVE_COLUMNS) == RECORDS
    assert render(FIVE_COLUMNS + CURSOR, CURSOR) == RECORDS + CURSOR
    assert rendered_length(FIVE_COLUMNS) == len(RECORDS) > len(FIVE_COLUMNS), "Discord is sent the longer text"


def test_text_without_a_table_is_sent_as_written():
    text = "a | b and **bold** - not a table\n\n```\n| x | y |\n|---|---|\n```"
    assert render(text) == text


@pytest.fixture
async def runner(loose_api):
    async with runner_for(loose_api) as runner:
        yield runner


async def test_a_streamed_reply_with_a_five_column_table_shows_no_raw_pipes(loose_api, runner):
    session = runner.delivery().session("discord", str(loose_api.general), settings=SETTINGS)
    session.start()
    for start in range(0, len(FIVE_COLUMNS), 9):
        session.feed(FIVE_COLUMNS[start:start + 9])
        await asyncio.sleep(0.01)
    report = await session.finish()
    assert report.delivered, report.error
    assert loose_api.screen(loose_api.general) == [RECORDS]
    assert not loose_api.violations


async def test_a_table_that_renders_past_discords_limit_is_split_into_messages_it_accepts(loose_api, runner):
    rows = "".join(f"| row {i} | value {i} | more {i} | the {i} | end {i} |\n" for i in range(30))
    reply = "| First column | Second column | Third | Fourth | Fifth |\n|-|-|-|-|-|\n" + rows
    assert len(reply) < 2000 < len(render(reply)), "fits as Markdown, not as sent"
    session = runner.delivery().session("discord", str(loose_api.general), settings=SETTINGS)
    session.start()
    session.feed(reply)
    report = await session.finish()
    screen = loose_api.screen(loose_api.general)
    assert report.delivered, report.error
    assert len(screen) >= 2 and all(len(text) <= 2000 for text in screen) and not loose_api.violations
    assert all("|" not in text and text.startswith("**First column**: row ") for text in screen), \
        "every message repeats the table's head, so it too is laid out"
    assert "**Fifth**: end 29" in screen[-1]


async def test_a_long_reply_is_never_cut_inside_a_bold_phrase_or_a_link(loose_api, runner):
    phrase = "plain words here **a bold phrase of several words** then [a link text](https://example.org/x) "
    reply = (phrase * 60).strip()                                   # ~5,600 characters: three messages or more
    session = runner.delivery().session("discord", str(loose_api.general), settings=SETTINGS)
    session.start()
    for start in range(0, len(reply), 97):
        session.feed(reply[start:start + 97])
        await asyncio.sleep(0)
    report = await session.finish()
    screen = loose_api.screen(loose_api.general)
    assert report.delivered, report.error
    assert len(screen) >= 3 and all(len(text) <= 2000 for text in screen) and not loose_api.violations
    for text in screen:
        assert text.count("**") % 2 == 0 and text.count("[") == text.count("](https://example.org/x)"), text[-80:]
    assert " ".join(screen).split() == reply.split()
