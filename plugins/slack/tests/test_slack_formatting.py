"""Markdown tables on Slack: the final text lays them out (a grid in a code block, or bold-key lines)."""

from __future__ import annotations

import asyncio

import pytest

from hermes_slack.formatting import render, rendered_length
from slack_test_support import CURSOR, SETTINGS, runner

THREAD = "1700000000.000100"
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


def test_tables_become_a_grid_in_a_code_block_or_bold_key_lines():
    assert render("| Item | Qty |\n|---|--:|\n| apples | 3 |") == "```\nItem    Qty\n──────  ───\napples    3\n```"
    assert render(FIVE_COLUMNS) == RECORDS and rendered_length(FIVE_COLUMNS) == len(RECORDS)


@pytest.fixture
async def slack(api):
    async with runner(api) as slack:
        yield slack


@pytest.mark.parametrize("thread", [THREAD, None], ids=["native-stream", "post-and-update"])
async def test_a_streamed_reply_with_a_five_column_table_ends_without_raw_pipes(api, slack, thread):
    api.channel("D0TABLE", "im")
    session = slack.delivery().session("slack", "D0TABLE", settings=SETTINGS, thread_id=thread, chat_kind="im")
    session.start()
    for start in range(0, len(FIVE_COLUMNS), 9):
        session.feed(FIVE_COLUMNS[start:start + 9])
        await asyncio.sleep(0.01)
    report = await session.finish()
    assert report.delivered, report.error
    screen = api.screen("D0TABLE", thread) if thread else api.screen("D0TABLE")
    assert screen == [RECORDS]
    assert not api.still_streaming() and not api.violations
    assert not any(CURSOR.strip() in text for text in screen)
