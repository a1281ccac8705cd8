"""``markdown_keep_whole``: the ranges a split must not cut on a platform that renders Markdown itself."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_gateway import markdown_keep_whole
from hermes_gateway._core.delivery.measure import measure_for
from hermes_gateway._core.delivery.split import render, split_text


def kept(text: str) -> list[str]:
    return [text[a:b] for a, b in sorted(markdown_keep_whole(text))]


def test_inline_spans_are_found_whole_and_word_inner_markers_are_not():
    text = ("Say **bold one** and *it* and [a link](https://x.y/(a)) and `code` ~~s~~ __u__ _i_ "
            "snake_case_name 2*3*4 <https://auto.link/x>.")
    assert kept(text) == ["**bold one**", "*it*", "[a link](https://x.y/(a))", "`code`", "~~s~~", "__u__", "_i_",
                          "<https://auto.link/x>"]


def test_a_span_may_cross_a_line_but_not_a_blank_line():
    assert kept("x **across\nline** y") == ["**across\nline**"]
    assert kept("x **not\n\nacross** y") == []


def test_code_blocks_and_tables_are_whole_and_nothing_inside_a_code_block_counts():
    text = "Intro\n\n```py\n**not bold**\n```\n\n| a | b |\n|---|---|\n| **1** | 2 |\n\nEnd"
    assert kept(text) == ["```py\n**not bold**\n```", "| a | b |\n|---|---|\n| **1** | 2 |", "**1**"]


def test_an_unclosed_code_block_or_span_is_no_range():
    assert kept("```py\nx = 1\n") == [] and kept("an **open span") == []


words = st.lists(st.text(alphabet="abcé😀", min_size=1, max_size=6), min_size=1, max_size=8).map(" ".join)
part = st.one_of(words, words.map(lambda w: f"**{w}**"), words.map(lambda w: f"*{w}*"),
                 words.map(lambda w: f"[{w}](https://example.org/p)"), words.map(lambda w: f"~~{w}~~"))


@settings(max_examples=200, deadline=None)
@given(st.lists(part, min_size=1, max_size=60), st.integers(min_value=120, max_value=300))
def test_a_reply_split_with_these_ranges_never_shows_half_a_span(parts, limit):
    doc = " ".join(parts)
    measure = measure_for("utf16")
    out = [render(doc, p) for p in split_text(doc, limit, measure, keep=markdown_keep_whole)]
    assert "".join(out) == doc and all(measure(m) <= limit for m in out)
    for message in out:
        assert message.count("**") % 2 == 0 and message.count("~~") % 2 == 0, message
        assert message.count("[") == message.count("](") and message.count("*") % 2 == 0, message
