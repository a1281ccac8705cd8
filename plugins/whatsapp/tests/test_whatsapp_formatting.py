"""Markdown tables on WhatsApp: a monospace grid when it fits a phone, else ``*key*: value`` lines."""

from __future__ import annotations

import asyncio

from hermes_gateway import StreamSettings
from hermes_whatsapp.emulator import GraphApiEmulator
from hermes_whatsapp.formatting import render, rendered_length
from whatsapp_test_support import APP_SECRET, FAST, PHONE_ID, TOKEN, USER, runner_for

FIVE_COLUMNS = ("Here are the libraries:\n\n"
                "| Name | Language | Stars | License | Last release |\n"
                "|------|:--------:|------:|---------|--------------|\n"
                "| requests | Python | 51k | Apache-2.0 | 2024-05-29 |\n"
                "| httpx | Python | 13k | BSD-3 | 2024-06-14 |\n\n"
                "Pick one.")
RECORDS = ("Here are the libraries:\n\n"
           "*Name*: requests\n*Language*: Python\n*Stars*: 51k\n*License*: Apache-2.0\n*Last release*: 2024-05-29\n\n"
           "*Name*: httpx\n*Language*: Python\n*Stars*: 13k\n*License*: BSD-3\n*Last release*: 2024-06-14\n\n"
           "Pick one.")


def test_a_narrow_table_becomes_a_monospace_grid_and_a_wide_one_bold_key_lines():
    assert render("| Item | Qty |\n|---|--:|\n| apples | 3 |") == "```Item    Qty\n──────  ───\napples    3```"
    assert render(FIVE_COLUMNS) == RECORDS
    assert rendered_length(FIVE_COLUMNS) == len(RECORDS)


async def deliver(reply: str, streaming: bool) -> tuple[list[str], list[str]]:
    async with GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET) as meta:
        runner = runner_for(meta, limits={"budgets": FAST})
        runner.build()
        try:
            session = runner.delivery().session("whatsapp", USER, settings=StreamSettings(
                enabled=streaming, edit_interval=0.01, min_tokens=1))
            session.start()
            for start in range(0, len(reply), 97):
                session.feed(reply[start:start + 97])
                await asyncio.sleep(0)
            await session.finish()
        finally:
            await runner.client.close()
        return meta.screen(USER), meta.user(USER).violations


def test_a_reply_with_a_five_column_table_reaches_the_phone_without_raw_pipes():
    screen, violations = asyncio.run(deliver(FIVE_COLUMNS, streaming=True))
    assert screen == [RECORDS] and not violations


def test_a_table_that_renders_past_the_limit_is_split_into_bodies_whatsapp_accepts():
    rows = "".join(f"| row {i} | value {i} | more {i} | the {i} | end {i} |\n" for i in range(60))
    reply = "| First column | Second column | Third | Fourth | Fifth |\n|-|-|-|-|-|\n" + rows
    assert len(reply) < 4096 < len(render(reply))
    screen, violations = asyncio.run(deliver(reply, streaming=False))
    assert len(screen) >= 2 and all(len(text) <= 4096 for text in screen) and not violations
    assert all("|" not in text and text.startswith("*First column*: row ") for text in screen)
    assert "*Fifth*: end 59" in screen[-1]
