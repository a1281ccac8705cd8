"""Markdown tables on Telegram: a monospace grid when it fits a phone, else bold-key records; never raw pipes."""

from __future__ import annotations

import asyncio

import pytest

from hermes_gateway import utf16_length
from hermes_telegram.formatting import TABLE_WIDTH, keep_whole, render
from hermes_telegram.measure import rendered_length
from telegram_test_support import SETTINGS, delivery_for, fast_runner

FIVE_COLUMNS = ("Here are the libraries:\n\n"
                "| Name | Language | Stars | License | Last release |\n"
                "|------|:--------:|------:|---------|--------------|\n"
                "| requests | Python | 51k | Apache-2.0 | 2024-05-29 |\n"
                "| **httpx** | Python | 13k | BSD-3 | [2024-06](https://example.org/httpx) |\n"
                "| reqwest | Rust | 10k | MIT | 2024-07-01 |\n\n"
                "Pick **one**.")
RECORDS = ("Here are the libraries:\n\n"
           "Name: requests\nLanguage: Python\nStars: 51k\nLicense: Apache-2.0\nLast release: 2024-05-29\n\n"
           "Name: httpx\nLanguage: Python\nStars: 13k\nLicense: BSD-3\nLast release: 2024-06\n\n"
           "Name: reqwest\nLanguage: Rust\nStars: 10k\nLicense: MIT\nLast release: 2024-07-01\n\n"
           "Pick one.")


def covered(text, entities):
    return [(e.type, text[e.offset:e.offset + e.length]) for e in entities]


def test_a_narrow_table_is_a_pre_grid_with_aligned_columns_and_plain_cells():
    text, entities = render("Totals:\n\n| Item | **Qty** |\n|---|--:|\n| apples | 3 |\n| kiwis | 12 |")
    grid = "Item    Qty\n──────  ───\napples    3\nkiwis    12"  # Qty is right-aligned (--:)
    assert text == "Totals:\n\n" + grid
    assert covered(text, entities) == [("pre", grid)]
    assert max(len(line) for line in grid.splitlines()) <= TABLE_WIDTH


def test_a_wide_table_is_one_block_of_bold_keys_per_row_with_the_values_formatting_kept():
    text, entities = render(FIVE_COLUMNS)
    assert text == RECORDS and "|" not in text
    shown = covered(text, entities)
    assert shown[:5] == [("bold", k) for k in ("Name", "Language", "Stars", "License", "Last release")]
    assert ("bold", "httpx") in shown and ("text_link", "2024-06") in shown
    assert shown[-1] == ("bold", "one")


def test_the_length_telegram_counts_is_that_of_the_laid_out_table_even_when_longer_than_the_markdown():
    rows = "".join(f"| row {i} | value {i} | more {i} | the {i} | end {i} |\n" for i in range(40))
    markdown = "| First column | Second column | Third | Fourth | Fifth |\n|-|-|-|-|-|\n" + rows
    shown, _ = render(markdown)
    assert utf16_length(shown) > utf16_length(markdown), "repeated headers: longer than the Markdown"
    assert rendered_length(markdown) == utf16_length(shown)


def test_a_table_is_one_range_a_split_keeps_whole():
    start = FIVE_COLUMNS.index("| Name")
    end = FIVE_COLUMNS.index("\n\nPick")
    assert (start, end) in keep_whole(FIVE_COLUMNS)


async def stream(tg, chat_id, reply, pieces=30):
    session = delivery_for(tg).session("telegram", str(chat_id), settings=SETTINGS)
    session.start()
    step = max(1, len(reply) // pieces)
    for start in range(0, len(reply), step):
        session.feed(reply[start:start + step])
        await asyncio.sleep(0.01)
    return await session.finish()


@pytest.fixture
async def tg(api):
    tg = fast_runner(api.base_url)
    yield tg
    await tg.client.close()


async def test_a_streamed_reply_with_a_five_column_table_shows_no_raw_pipes_on_the_chat(api, tg):
    report = await stream(tg, 42, FIVE_COLUMNS)
    chat = api.chat(42)
    assert report.delivered, report.error
    assert chat.screen == [RECORDS]
    assert ("bold", "Last release") in chat.formatted()
    assert not chat.violations


async def test_a_long_table_is_split_into_messages_telegram_accepts_though_it_renders_longer(api, tg):
    rows = "".join(f"| row {i} | value {i} | more {i} | the {i} | end {i} |\n" for i in range(60))
    reply = "Data:\n\n| First column | Second column | Third | Fourth | Fifth |\n|-|-|-|-|-|\n" + rows + "\nDone."
    assert utf16_length(reply) < 4096 < utf16_length(render(reply)[0]), "fits as Markdown, not as shown"
    report = await stream(tg, 43, reply, pieces=20)
    chat = api.chat(43)
    assert report.delivered, report.error
    assert not chat.violations
    assert len(chat.screen) >= 2 and all(utf16_length(text) <= 4096 for text in chat.screen)
    assert "First column: row 0" in chat.screen[0] and chat.screen[-1].endswith("Done.")
    assert "Fifth: end 59" in "\n".join(chat.screen)
