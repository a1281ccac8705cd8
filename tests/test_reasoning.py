"""The one reasoning filter: what it hides, how it splits, and that chunking never changes the text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from hermes_gateway._core.reasoning import (
    MAX_ATTRIBUTES,
    ReasoningFilter,
    postprocess_reply,
    split_reasoning,
    strip_thinking,
)


def stream(chunks, *, starts_open=False, use_split=False):
    """(reasoning, visible, retractions) of ``chunks`` fed one by one."""
    retractions: list[int] = []
    pieces: list[str] = []
    f = ReasoningFilter(starts_open=starts_open, on_retract=lambda: retractions.append(len(pieces)))
    reasoning = []
    for chunk in chunks:
        if use_split:
            r, v = f.split(chunk)
            reasoning.append(r)
        else:
            v = f.feed(chunk)
        pieces.append(v)
    r, v = f.finish()
    reasoning.append(r)
    pieces.append(v)
    return "".join(reasoning), pieces, retractions


def visible(chunks, **kw):
    return "".join(stream(chunks, **kw)[1])


# -- the tags ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw", [
    "<think>plan</think>Answer", "<THINK>plan</THINK>Answer", "<Thinking>plan</thinking>Answer",
    "<reasoning>plan</REASONING>Answer", '<think type="analysis">plan</think>Answer',
    "<think\ttype='a' id=2>plan</think >Answer", "<think/>Answer", '<think type="x"/>Answer',
])
def test_every_spelling_case_and_attribute_form_is_hidden(raw):
    assert postprocess_reply(raw) == "Answer"
    assert visible(list(raw)) == "Answer"


@pytest.mark.parametrize("text", [
    "a < b and c > d", "<b>bold</b>", "x <thinker> y", "< think> is not a tag", "<think-tank>", "</thinkers>",
    "if a<think_budget: go",
])
def test_text_that_only_looks_like_a_tag_is_kept(text):
    assert postprocess_reply(text) == text
    assert visible(list(text)) == text


def test_a_block_is_closed_by_its_own_spelling_only():
    assert postprocess_reply("<thinking>a </think> b</thinking>Answer") == "Answer"
    assert split_reasoning("<thinking>a </think> b</thinking>Answer") == ("a </think> b", "Answer")


def test_attributes_longer_than_the_limit_are_not_a_tag():
    long = "<think " + "a" * (MAX_ATTRIBUTES + 1) + ">x"
    assert postprocess_reply(long) == long
    short = "<think " + "a" * (MAX_ATTRIBUTES - 1) + ">x</think>y"
    assert postprocess_reply(short) == "y"


def test_an_unclosed_block_hides_the_rest_and_a_stray_closing_tag_is_dropped():
    assert postprocess_reply("Answer.<think>and then I was cut off") == "Answer."
    assert postprocess_reply("A <think>x</think> B </think> C") == "A B C"


def test_tags_cut_at_every_point_never_leak():
    raw = 'Hi <think type="a">secret</think> there'
    for cut in range(len(raw) + 1):
        assert visible([raw[:cut], raw[cut:]]) == "Hi there", cut


# -- a reply that opens inside reasoning ------------------------------------------------------------

def test_starts_open_hides_everything_before_the_first_closing_tag_from_the_first_chunk():
    chunks = ["Okay, the user", " wants a haiku.", "\n</th", "ink>\n\nHere", " it is."]
    reasoning, pieces, retractions = stream(chunks, starts_open=True, use_split=True)
    assert pieces[:3] == ["", "", ""]
    assert "".join(pieces) == "Here it is."
    assert reasoning == "Okay, the user wants a haiku.\n"
    assert retractions == []


def test_starts_open_any_spelling_closes_and_without_a_closing_tag_nothing_shows():
    assert postprocess_reply("plan</REASONING>Answer", starts_open=True) == "Answer"
    assert postprocess_reply("plan that never ends", starts_open=True) == ""


def test_without_the_flag_a_lone_closing_tag_ends_reasoning_in_the_final_text():
    assert postprocess_reply("reasoning from the template</think>\nAnswer") == "Answer"
    assert split_reasoning("plan\n</think>\n\nAnswer") == ("plan\n", "Answer")


def test_without_the_flag_a_stream_is_told_when_shown_text_turns_out_to_be_reasoning():
    reasoning, pieces, retractions = stream(["Let me think", " about it", "</think>", "\n\nAnswer"], use_split=True)
    assert pieces[:2] == ["Let me think", " about it"]  # nobody could know yet
    assert retractions == [2]  # told at the closing tag, once
    assert "".join(pieces[2:]) == "Answer" == postprocess_reply("Let me think about it</think>\n\nAnswer")


def test_no_retraction_when_nothing_was_shown_yet():
    _, pieces, retractions = stream(["  \n", "plan</think>Answer"])
    assert retractions == [] and "".join(pieces) == "Answer"


# -- whitespace ----------------------------------------------------------------------------------------

def test_whitespace_rules_leading_after_a_block_and_trailing():
    assert postprocess_reply("\n\n  Hello  \n") == "Hello"
    assert postprocess_reply("A <think>x</think> B") == "A B"
    assert postprocess_reply("First.\n\n<think>x</think>\n\nAnswer.  \n") == "First.\n\nAnswer."


def test_whitespace_waits_for_the_next_visible_character_so_emitted_text_is_a_prefix_of_the_final():
    _, pieces, _ = stream(["Hello", " ", "\n", "world", "  \n"])
    assert pieces == ["Hello", "", "", " \nworld", "", ""]


# -- any chunking, the same text ---------------------------------------------------------------------

FRAGMENTS = ["<think>", "</think>", "</THINK>", "<THINK>", '<think type="a">', "<thinking>", "</thinking>",
             "<reasoning>", "</reasoning>", "<think/>", "</think >", "<", "<thi", "</", ">", "nk>", "/",
             "< think>", "<b>", " ", "\n", "\n\n", "word", "a", "b c", "x<y"]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join)
cuts = st.lists(st.integers(1, 12), min_size=1, max_size=30)


def chunked(raw: str, sizes: list[int]) -> list[str]:
    out, i, n = [], 0, 0
    while i < len(raw):
        out.append(raw[i:i + sizes[n % len(sizes)]])
        i += sizes[n % len(sizes)]
        n += 1
    return out


@settings(max_examples=400)
@given(texts, cuts, st.booleans(), st.booleans(), st.booleans())
def test_any_chunking_gives_the_final_text(raw, sizes, starts_open, use_split, empties):
    chunks = chunked(raw, sizes)
    if empties:  # upstreams send empty deltas (role chunks, keep-alives)
        chunks = [c for chunk in chunks for c in ("", chunk, "")]
    reasoning, pieces, retractions = stream(chunks, starts_open=starts_open, use_split=use_split)
    final = postprocess_reply(raw, starts_open=starts_open)
    after = retractions[-1] if retractions else 0
    assert "".join(pieces[after:]) == final
    if not retractions:
        assert "".join(pieces) == final
        if use_split:
            assert reasoning == split_reasoning(raw, starts_open=starts_open)[0]
    else:
        assert not starts_open, "with the flag nothing shown is ever taken back"


@settings(max_examples=300)
@given(texts, cuts, st.booleans())
def test_what_was_emitted_is_always_a_prefix_of_the_final_text(raw, sizes, starts_open):
    chunks = chunked(raw, sizes)
    final = postprocess_reply(raw, starts_open=starts_open)
    _, pieces, retractions = stream(chunks, starts_open=starts_open)
    if retractions:
        return
    shown = ""
    for piece in pieces:
        shown += piece
        assert final.startswith(shown)


# -- the final post-processing of a whole reply (the same filter, fed the whole text) ------------------------

def test_closed_blocks_of_each_tag_are_removed_with_the_whitespace_after_them() -> None:
    for tag in ("think", "thinking", "reasoning", "THINK"):
        assert strip_thinking(f"<{tag}>secret\nplans</{tag}>\n\nAnswer") == "Answer"
    assert strip_thinking("A <think>x</think>B <reasoning>y</reasoning>C") == "A B C"


def test_orphan_closing_tag_drops_what_came_before_with_or_without_the_flag() -> None:
    assert strip_thinking("reasoning from the template</think>\nAnswer") == "Answer"
    assert postprocess_reply("reasoning from the template</think>\nAnswer", starts_open=True) == "Answer"


def test_text_without_tags_is_untouched() -> None:
    text = "a < b and c > d, <b>bold</b>, x <thinker> y"
    assert strip_thinking(text) == text


def test_postprocess_trims_leading_and_trailing_whitespace() -> None:
    assert postprocess_reply("\n\n  Indented code\n\n  ") == "Indented code"
    assert postprocess_reply("<think>t</think>\n\nAnswer \n") == "Answer"


def test_postprocess_is_the_filter_fed_the_whole_text() -> None:
    raw = "<think type='x'>plan</think>\n\nHello  <THINK>more</THINK> world \n"
    f = ReasoningFilter()
    assert postprocess_reply(raw) == f.feed(raw) + f.finish()[1] == "Hello  world"
    assert split_reasoning(raw) == ("planmore", "Hello  world")


def test_an_owners_bound_method_is_held_weakly_so_owner_and_filter_go_together():
    """The owner (a draft, the API server's reply text, the terminal's renderer) holds its filter; a strong
    ``on_retract`` back to it was a cycle that only a full collection freed (the soak's 18 MB)."""
    import gc
    import weakref

    class Owner:
        def __init__(self) -> None:
            self.retracted = 0
            self.filter = ReasoningFilter(on_retract=self.retract)

        def retract(self) -> None:
            self.retracted += 1

    owner = Owner()
    owner.filter.feed("shown ")
    owner.filter.feed("</think>after")
    assert owner.retracted == 1  # alive: still told
    gone = weakref.ref(owner)
    gc.disable()
    try:
        del owner
        assert gone() is None  # no cycle: freed at once, without the collector
    finally:
        gc.enable()
