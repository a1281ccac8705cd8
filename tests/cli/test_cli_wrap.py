"""Word wrapping of streamed text: words stay whole, code stays as written, any split gives the same lines."""

from hypothesis import given, strategies as st

from hermes_gateway._core.cli.wrap import StreamWrapper


def wrap(pieces, width=20):
    wrapper = StreamWrapper(lambda: width)
    return "".join(wrapper.feed(p) for p in pieces) + wrapper.flush()


def test_a_word_that_does_not_fit_moves_to_the_next_line():
    assert wrap(["the quick brown fox jumps over the lazy dog"]) == "the quick brown fox\njumps over the lazy\ndog"


def test_existing_line_breaks_are_kept():
    assert wrap(["short\n\nlines here"]) == "short\n\nlines here"


def test_the_last_word_waits_for_the_space_that_ends_it():
    wrapper = StreamWrapper(lambda: 20)
    assert wrapper.feed("hello wor") == "hello"
    assert wrapper.feed("ld and") == " world"
    assert wrapper.flush() == " and"


def test_a_word_longer_than_the_line_is_cut():
    assert wrap(["see https://example.com/a/very/long/path ok"]) == \
        "see\nhttps://example.com/\na/very/long/path ok"


def test_code_fences_are_not_wrapped():
    code = "```\nx = 'a long line of code that must stay one line'\n```\n"
    assert wrap([code + "after the fence words wrap again"]) == code + "after the fence\nwords wrap again"


def test_wide_characters_count_as_two_cells():
    assert wrap(["日本語 日本語 日本語 日本語"], width=15) == "日本語 日本語\n日本語 日本語"


words = st.lists(st.text("abcdefghij", min_size=1, max_size=12), min_size=1, max_size=30)


@given(words=words, cuts=st.lists(st.integers(0, 400), max_size=10), width=st.integers(12, 40))
def test_lines_fit_words_stay_whole_and_any_split_gives_the_same_result(words, cuts, width):
    text = " ".join(words)
    bounds = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    whole = wrap([text], width)
    assert wrap(pieces, width) == whole
    assert all(len(line) <= width for line in whole.split("\n"))
    assert whole.replace("\n", " ") == text  # every break replaced exactly one space
