"""The text that goes on the wire: think blocks split out, whitespace trimmed, resets reconciled."""

import pytest
from hypothesis import given, strategies as st

from hermes_gateway._core.api_server.reply_text import RETRACTED_GAP, Diverged, ReplyText


def run(deltas, resets_before=(), starts_open=False):
    reply = ReplyText(starts_open=starts_open)
    reasoning, visible = [], []
    for i, d in enumerate(deltas):
        if i in resets_before:
            reply.reset()
        r, v = reply.feed(d)
        reasoning.append(r)
        visible.append(v)
    r, v = reply.finish()
    reasoning.append(r)
    visible.append(v)
    return "".join(reasoning), [v for v in visible if v]


def test_think_block_split_across_deltas_goes_to_reasoning():
    reasoning, visible = run(["<th", "ink>plan it", "</thi", "nk>\n\nHello", " world"])
    assert reasoning == "plan it"
    assert "".join(visible) == "Hello world"


def test_less_than_sign_that_is_not_a_tag_is_kept():
    assert "".join(run(["a < b", " and x<y", "<"])[1]) == "a < b and x<y<"


def test_leading_and_trailing_whitespace_never_sent_but_inner_whitespace_is():
    _, visible = run(["\n\n", "Hello", " ", "\n", "world", "  \n"])
    assert "".join(visible) == "Hello \nworld"
    assert visible[0] == "Hello"  # sent the moment it arrived, whitespace held for the next word


def test_reset_with_a_retry_that_repeats_the_sent_text_sends_only_the_rest():
    # "Hello wor" was sent, then the upstream failed; the retry says the whole reply again.
    _, visible = run(["Hello", " wor", "Hello world", ", friend"], resets_before={2})
    assert "".join(visible) == "Hello world, friend"


def test_reset_before_any_text_is_harmless():
    _, visible = run(["<think>x</think>", "Fine."], resets_before={1})
    assert "".join(visible) == "Fine."


def test_reset_with_a_different_retry_diverges():
    reply = ReplyText()
    reply.feed("Paris is")
    reply.reset()
    with pytest.raises(Diverged):
        reply.feed("Lyon is")


def test_reset_with_a_shorter_retry_diverges_at_the_end():
    reply = ReplyText()
    reply.feed("Hello world")
    reply.reset()
    reply.feed("Hello")
    with pytest.raises(Diverged):
        reply.finish()


@given(st.text(alphabet="ab <>/thinkg\n ", max_size=60), st.lists(st.integers(0, 60), max_size=8), st.booleans())
def test_any_split_gives_the_same_result_as_one_piece(text, cuts, starts_open):
    cuts = sorted(set(c for c in cuts if c <= len(text)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    whole = run([text], starts_open=starts_open)
    split = run(pieces, starts_open=starts_open)
    if "".join(split[1]) == "".join(whole[1]):
        assert split[0] == whole[0]
    else:  # only a lone closing tag after text already sent (no starts_open) may change the wire
        assert not starts_open and RETRACTED_GAP in "".join(split[1])


def test_a_dangling_partial_tag_is_flushed_as_text_at_the_end():
    _, visible = run(["end <thi"])
    assert visible == ["end", " <thi"]


plain = st.text(alphabet="ab <\n\t", max_size=12)
block = st.builds(lambda inner, tag: f"<{tag}>{inner}</{tag}>", plain, st.sampled_from(["think", "thinking"]))
replies = st.lists(plain | block, max_size=5).map("".join)


@given(replies, st.lists(st.integers(0, 80), max_size=10))
def test_streamed_text_joins_to_exactly_the_final_reply(text, cuts):
    """What a streaming client accumulates equals what a non-streaming client gets."""
    from hermes_gateway._core.reasoning import postprocess_reply

    cuts = sorted(set(c for c in cuts if c <= len(text)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    assert "".join(run(pieces)[1]) == postprocess_reply(text)
