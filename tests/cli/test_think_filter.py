"""Think blocks never reach the terminal, however the model's text is cut into deltas."""

import re

from hypothesis import given, strategies as st

from hermes_gateway.cli.think_filter import ThinkFilter


def run(pieces):
    f = ThinkFilter()
    return "".join(f.feed(p) for p in pieces) + f.finish()


def test_a_block_in_one_delta_is_removed():
    assert run(["<think>secret plan</think>Hello"]) == "Hello"


def test_a_tag_split_across_deltas_is_still_removed():
    assert run(["Hi <th", "ink>sec", "ret</thi", "nk> there"]) == "Hi  there"


def test_tags_are_matched_without_regard_to_case_and_in_all_spellings():
    assert run(["<THINK>a</Think>b<thinking>c</thinking>d<reasoning>e</reasoning>f"]) == "bdf"


def test_text_that_only_looks_like_a_tag_start_is_released():
    f = ThinkFilter()
    assert f.feed("a <thi") == "a "       # held back: it might be a tag
    assert f.feed("s is html") == "<this is html"
    assert f.finish() == ""


def test_a_held_back_prefix_at_the_very_end_is_plain_text():
    assert run(["1 < 2 and x <thin"]) == "1 < 2 and x <thin"


def test_an_unclosed_block_stays_hidden():
    assert run(["Answer<think>and then the model was cut off"]) == "Answer"


def test_nothing_is_held_back_when_no_tag_can_follow():
    f = ThinkFilter()
    assert f.feed("plain words ") == "plain words "
    assert f.feed("more") == "more"


THOUGHT = re.compile(r"<think>.*?</think>", re.DOTALL)


@given(
    parts=st.lists(st.one_of(st.text("ab <>/thinkTHINK\n", max_size=12),
                             st.text("xyz ", max_size=5).map(lambda t: f"<think>{t}</think>")),
                   max_size=8),
    cuts=st.lists(st.integers(0, 200), max_size=12),
)
def test_any_split_shows_the_same_text_as_the_whole(parts, cuts):
    whole = "".join(parts)
    if re.search(r"(?i)<think|<thinking|<reasoning", THOUGHT.sub("", whole)):
        return  # stray opening tags: covered by the unclosed-block test
    bounds = sorted({c % (len(whole) + 1) for c in cuts} | {0, len(whole)})
    pieces = [whole[a:b] for a, b in zip(bounds, bounds[1:])]
    expected = THOUGHT.sub("", whole)
    assert run(pieces) == expected
    assert "<think>" not in expected.lower()
