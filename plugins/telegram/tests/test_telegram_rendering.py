"""Markdown replies streamed through the core: what the chat shows is formatted text, never raw markers."""

from __future__ import annotations

import asyncio
import re

import pytest

from hermes_gateway import utf16_length
from telegram_test_support import CURSOR, SETTINGS, delivery_for, fast_runner

REPLY = ("Here is the **plan** for *today*:\n\n"
         "- read the [release notes](https://example.org/notes)\n"
         "- run the tests\n\n"
         "```python\nimport this\nprint('ok')\n```\n\n"
         "That is **all**.")
SHOWN = "Here is the plan for today:\n\n• read the release notes\n• run the tests\n\nimport this\nprint('ok')\n\n" \
        "That is all."
MARKERS = re.compile(r"\*\*|```|\]\(|^- ", re.MULTILINE)


async def stream(tg, chat_id, reply, pieces=40, settings=SETTINGS):
    session = delivery_for(tg).session("telegram", str(chat_id), settings=settings)
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


async def test_the_final_message_shows_formatting_and_no_markdown_markers(api, tg):
    report = await stream(tg, 42, REPLY)
    chat = api.chat(42)
    assert report.delivered, report.error
    assert chat.screen == [SHOWN]
    assert chat.formatted() == [("bold", "plan"), ("italic", "today"), ("text_link", "release notes"),
                                ("pre", "import this\nprint('ok')"), ("bold", "all")]
    sent = [c for c in chat.calls if c.method in ("sendMessage", "editMessageText")]
    assert sent and all("parse_mode" not in c.params for c in sent), "entities, never parse_mode"
    assert not chat.violations


async def test_previews_render_what_has_closed_and_show_the_rest_as_typed(api, tg):
    await stream(tg, 43, REPLY, pieces=60)
    chat = api.chat(43)
    message = chat.messages[0]
    previews = message.history[:-1]
    assert len(previews) >= 3, previews
    for version, preview in enumerate(previews):
        assert preview.endswith(CURSOR.strip())
        assert "**plan**" not in preview, "a closed bold never shows its markers"
        assert "(https://example.org/notes)" not in preview, "a closed link never shows its URL"
        if "plan for" in preview:  # the bold has closed by this preview, so it renders
            assert ("bold", "plan") in chat.formatted(0, version)
    closed = [v for v, p in enumerate(previews) if "release notes" in p and "](https" not in p]
    assert closed, "some preview showed the finished link"
    assert ("text_link", "release notes") in chat.formatted(0, closed[-1])


async def test_a_code_block_mid_stream_is_already_code_and_the_cursor_stays_outside_it(api, tg):
    session = delivery_for(tg).session("telegram", "44", settings=SETTINGS)
    session.start()
    session.feed("Run this:\n\n```sh\nmake all\n")
    for word in ("make ", "test ", "again\n"):
        session.feed(word)
        await asyncio.sleep(0.1)
    chat = api.chat(44)
    assert chat.messages, "a preview was shown"
    preview = chat.messages[0].text
    assert preview.endswith(CURSOR.strip()) and "```" not in preview
    [(kind, code)] = chat.formatted()
    assert kind == "pre" and code.startswith("make all") and CURSOR.strip() not in code
    session.feed("```\nDone.")
    report = await session.finish()
    assert report.delivered
    assert chat.screen == ["Run this:\n\nmake all\nmake test again\nDone."]


async def test_a_long_reply_with_a_code_block_across_the_limit_arrives_as_three_valid_messages(api, tg):
    prose = " ".join(f"Sentence number {i} is **here**." for i in range(105))      # ~3,400 characters
    code = "\n".join(f"value_{i} = compute({i})  # step {i}" for i in range(60))  # ~2,300 characters
    reply = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert 8500 < len(reply) < 9500
    report = await stream(tg, 45, reply, pieces=80)
    chat = api.chat(45)
    assert report.delivered, report.error
    assert len(chat.screen) == 3
    assert all(utf16_length(text) <= 4096 for text in chat.screen)
    assert not chat.violations, "no 400 for length or entities"
    pres = [(i, code_text) for i in range(3) for kind, code_text in chat.formatted(i) if kind == "pre"]
    assert pres, "the code block renders as code"
    assert [i for i, _ in pres] == [1], "the block fits in one message, so it moved whole into the second"
    shown_code = "\n".join(code_text for _, code_text in pres)
    assert shown_code == code, "every line of code shown once, as code"
    for text in chat.screen:
        assert "**" not in text and "```" not in text


async def test_if_conversion_fails_the_message_is_sent_as_plain_text(api, tg, monkeypatch):
    from hermes_telegram import formatting

    def broken(markdown):
        raise ValueError("converter bug")
    monkeypatch.setattr(formatting, "_convert", broken)  # what every conversion goes through
    report = await stream(tg, 46, REPLY)
    assert report.delivered
    assert api.chat(46).screen == [REPLY] and api.chat(46).formatted() == []


async def test_entities_telegram_refuses_are_resent_as_plain_text(api, tg, monkeypatch):
    from hermes_telegram import formatting

    monkeypatch.setattr(formatting, "convert_blocks",
                        lambda md: (md, [formatting.Entity("bold", 0, utf16_length(md) + 5)]))  # beyond the end
    report = await stream(tg, 47, "short **reply**", pieces=1)
    chat = api.chat(47)
    assert report.delivered
    assert chat.screen == ["short **reply**"]
    assert [c.outcome for c in chat.calls if c.method == "sendMessage"][0].startswith("Bad Request: can't parse")


async def test_a_split_never_cuts_formatting_so_no_message_shows_markdown_markers(api, tg):
    # every sentence boundary lies inside a bold or a link: the core's favourite cuts would all break one
    unit = ("Point: **this is bold. It goes on. And on** and [a link. with dots](https://example.org/x) "
            "and `code. too` end. ")
    reply = (unit * 60).strip()                                          # ~7,000 characters
    report = await stream(tg, 48, reply, pieces=120)
    chat = api.chat(48)
    assert report.delivered, report.error
    assert len(chat.screen) == 2 and not chat.violations
    for index, text in enumerate(chat.screen):
        assert "**" not in text and "](" not in text and "`" not in text, f"markers in message {index}"
        kinds = {kind for kind, _ in chat.formatted(index)}
        assert kinds == {"bold", "text_link", "code"}
        assert all(covered in ("this is bold. It goes on. And on", "a link. with dots", "code. too")
                   for _, covered in chat.formatted(index)), "every entity whole"
    from hermes_telegram.formatting import to_entities

    assert " ".join(chat.screen).split() == to_entities(reply)[0].split(), "every word once, in order"


async def test_a_code_block_that_fits_one_message_moves_whole_even_when_it_starts_early(api, tg):
    prose = "Intro sentence. " * 40                                     # ~640 characters
    code = "\n".join(f"    line_{i} = compute({i})" for i in range(140))  # ~3,700 characters, first line indented
    reply = f"{prose.strip()}\n\n```python\n{code}\n```\n\nAfter it."
    assert len(reply) > 4096 and len(code) < 4000
    report = await stream(tg, 49, reply, pieces=60)
    chat = api.chat(49)
    assert report.delivered and not chat.violations
    assert len(chat.screen) == 2
    assert chat.formatted(0) == [], "the first message is the prose alone"
    [(kind, shown)] = chat.formatted(1)
    assert kind == "pre" and shown.strip() == code.strip(), "the whole block in one message, as code"


async def test_messages_are_filled_by_what_telegram_counts_not_by_the_length_of_the_markdown(api, tg):
    unit = "see [the page](https://example.org/a/very/long/path/to/a/page/that/takes/room/in/markdown) now. "
    short = (unit * 70).strip()                          # ~7,000 characters of Markdown, ~1,300 shown
    report = await stream(tg, 50, short, pieces=40)
    chat = api.chat(50)
    assert report.delivered and not chat.violations
    assert len(chat.screen) == 1 and len(chat.formatted(0)) == 70, "one message: the URLs do not count"
    long = (unit * 300).strip()                          # ~30,000 characters of Markdown, ~5,400 shown
    report = await stream(tg, 51, long, pieces=60)
    chat = api.chat(51)
    assert report.delivered and not chat.violations, chat.violations
    assert len(chat.screen) == 2 and utf16_length(chat.screen[0]) > 3900, [len(t) for t in chat.screen]
    assert sum(len(chat.formatted(i)) for i in range(2)) == 300, "every link whole, as a link"


async def test_a_code_block_continued_at_the_top_of_a_message_keeps_its_first_lines_indentation(api, tg):
    body = "".join(f"    value_{i} = compute({i})  # step {i}\n" for i in range(160))     # ~6,000 characters
    reply = "The function:\n\n```python\ndef run():\n" + body + "```\n\nThat is it."
    report = await stream(tg, 49, reply, pieces=30)
    chat = api.chat(49)
    assert report.delivered, report.error
    assert len(chat.screen) >= 2 and not chat.violations
    for index in range(1, len(chat.screen)):
        code = [covered for kind, covered in chat.formatted(index) if kind == "pre"]
        assert code and code[0].startswith("\u00a0" * 4 + "value_"), code[:1]
