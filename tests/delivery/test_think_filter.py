from hypothesis import given, strategies as st

from hermes_gateway.delivery.think_filter import ThinkScrubber, strip_think
from hermes_gateway.thinking import postprocess_reply


def scrub(chunks):
    s = ThinkScrubber()
    return "".join(s.feed(c) for c in chunks) + s.flush()


def test_think_block_is_removed():
    assert strip_think("<think>plan it</think>Hello") == "Hello"


def test_all_three_tag_names_and_case_are_recognised():
    text = "a<THINK>x</THINK>b<thinking>y</thinking>c<reasoning>z</reasoning>d"
    assert strip_think(text) == "abcd"


def test_tags_split_across_chunks_never_leak():
    chunks = ["Hi <th", "ink>secret", " plan</thi", "nk> there"]
    assert scrub(chunks) == "Hi there"


def test_a_lone_angle_bracket_is_kept_once_it_cannot_be_a_tag():
    assert scrub(["1 <", " 2 and a<b"]) == "1 < 2 and a<b"


def test_unclosed_block_hides_the_rest():
    assert scrub(["ok <think>never shown"]) == "ok "


def test_whitespace_after_a_block_goes_with_it_as_in_the_final_reply():
    raw = "First.\n\n<think>x</think>\n\nAnswer.  \n"
    assert scrub(list(raw)) == postprocess_reply(raw) + "  \n"


text_piece = st.text(alphabet=st.sampled_from(list("ab .\n<>")), max_size=8)
block = st.builds(lambda tag, body: f"<{tag}>{body}</{tag}>", st.sampled_from(["think", "thinking", "reasoning"]),
                  st.text(alphabet=st.sampled_from(list("xy \n<")), max_size=8))


@given(st.lists(st.one_of(text_piece, block), max_size=8), st.integers(min_value=1, max_value=9))
def test_the_scrubbed_stream_matches_the_final_reply(pieces, size):
    raw = "".join(pieces)
    chunks = [raw[i:i + size] for i in range(0, len(raw), size)]
    assert scrub(chunks).strip() == postprocess_reply(raw).strip()


@given(st.lists(st.sampled_from(["<think>", "</think>", "<thi", "nk>", "a", " ", "<", "b>", "</", "think", ">"]),
                max_size=30),
       st.integers(min_value=1, max_value=7))
def test_any_chunking_gives_the_same_text(tokens, size):
    text = "".join(tokens)
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    assert scrub(chunks) == strip_think(text)
