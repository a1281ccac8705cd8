"""``Platform.keep_whole``: a split never cuts a range the platform renders as one piece of formatting.

The reference platform is given a tiny "renderer" of its own (``**bold**`` and
fenced code blocks), so the test can see what a person would: no message shows
half a bold phrase with its markers, and a code block that fits one message
is never cut.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from delivery_helpers import feed_over, make_delivery, streaming, words

from hermes_gateway import RateBudget
from hermes_gateway._core.delivery.measure import measure_for
from hermes_gateway._core.delivery.split import Whole, choose_cut, render, split_text
from hermes_gateway.testing import ReferencePlatform, reassemble, run_virtual

BOLD = re.compile(r"\*\*[^*\n]+?\*\*")
FENCED = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)


def bold_and_code(text: str) -> list[tuple[int, int]]:
    """What this test's platform renders as one unit: bold phrases and closed code blocks."""
    return [m.span() for m in BOLD.finditer(text)] + [m.span() for m in FENCED.finditer(text)]


def pieces(doc: str, limit: int, keep=bold_and_code) -> list[str]:
    return [render(doc, p) for p in split_text(doc, limit, measure_for("chars"), keep=keep)]


def test_a_bold_phrase_across_the_best_cut_moves_whole_into_the_next_message():
    doc = "Some words first. " * 3 + "**a bold phrase. It has two sentences** and then the rest of it."
    plain = pieces(doc, 80, keep=None)
    assert plain[0].count("**") == 1, "without keep_whole, the sentence boundary cuts the bold phrase"
    kept = pieces(doc, 80)
    assert all(m.count("**") % 2 == 0 for m in kept), kept
    assert kept[1].startswith("**a bold phrase."), kept
    assert "".join(kept) == doc


def test_a_code_block_that_fits_one_message_is_not_cut_even_when_it_starts_early():
    code = "".join(f"line_{i} = {i}\n" for i in range(12))          # ~150 characters
    doc = "Intro text that is short.\n\n```python\n" + code + "```\n\nAfter the code."
    plain = pieces(doc, 170, keep=None)
    assert plain[1].startswith("```python\n"), "without keep_whole, the block is cut and its fence reopened"
    kept = pieces(doc, 170)
    assert kept[0] == "Intro text that is short.\n\n"
    assert kept[1].startswith("```python\n" + code + "```"), kept
    assert reassemble(kept) == doc


def test_a_code_block_longer_than_a_message_is_still_cut_at_line_ends_with_its_fence_reopened():
    code = "".join(f"value_{i} = compute({i})\n" for i in range(40))  # ~1,000 characters
    doc = "Look:\n\n```python\n" + code + "```\nDone."
    out = pieces(doc, 300)
    assert len(out) > 3
    for message in out:
        assert len(message) <= 300 and message.count("```") % 2 == 0, message
    assert all(m.startswith("```python\n") for m in out[2:]), "every later message reopens the fence"
    assert reassemble(out) == doc


def test_ranges_are_asked_for_only_when_a_split_is_needed_and_a_range_longer_than_a_message_is_ignored():
    asked = []

    def keep(text):
        asked.append(text)
        return [(0, len(text))]          # "all of it": longer than any message, so no constraint

    assert pieces("short", 100, keep=keep) == ["short"] and asked == []
    doc = "word " * 60
    out = pieces(doc, 100, keep=keep)
    assert len(asked) == 1 and out == pieces(doc, 100, keep=None)


def test_a_cut_never_lands_inside_a_range_even_without_any_boundary_before_it():
    doc = "x" * 50 + "**" + "y" * 30 + "**" + "z" * 40
    whole = Whole([(50, 84)])
    cut = choose_cut(doc, 0, None, 70, measure_for("chars"), whole)
    assert cut == 50, "no boundary at all: the cut goes to the start of the range rather than inside it"


def test_a_streamed_reply_ends_with_no_half_bold_phrase_in_any_message():
    sentence = "This is **one bold. Two sentences** in a row. "
    reply = (sentence * 12).strip()
    ref = ReferencePlatform(max_message_length=120, budgets={"default": RateBudget(rate=50.0, burst=10)},
                            keep_whole=bold_and_code)

    async def main():
        session = make_delivery(ref).session("reference", "c", settings=streaming(edit_interval=0.5))
        await feed_over(session, words(reply), 10)
        return await session.finish()

    report = run_virtual(main())
    chat = ref.chat("c")
    assert report.delivered and not chat.violations
    assert len(chat.screen) > 3
    for shown in chat.screen:  # (a preview may show a bold phrase still being typed: it has not closed yet)
        assert shown.count("**") % 2 == 0, f"a bold phrase was cut: {shown!r}"
    assert " ".join(chat.screen).split() == reply.split()


bold_words = st.lists(st.text(alphabet="abc😀", min_size=1, max_size=5), min_size=1, max_size=8).map(
    lambda ws: "**" + " ".join(ws) + "**")        # at most 51 characters: each fits any message here
plain_words = st.lists(st.text(alphabet="abc😀", min_size=1, max_size=6), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(bold_words, plain_words), min_size=1, max_size=40), st.integers(min_value=100, max_value=200),
       st.sampled_from(["chars", "utf16"]))
def test_no_split_ever_cuts_a_bold_span_that_fits_a_message(parts, limit, unit):
    doc = " ".join(parts)
    measure = measure_for(unit)
    out = [render(doc, p) for p in split_text(doc, limit, measure, keep=bold_and_code)]
    assert all(measure(m) <= limit for m in out)
    assert "".join(out) == doc
    for message in out:
        assert message.count("**") % 2 == 0, f"a bold span was cut: {message!r}"
    assert [b for m in out for b in BOLD.findall(m)] == BOLD.findall(doc), "every bold span shows whole in one"
