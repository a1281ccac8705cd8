"""Think blocks never reach a person: the final reply is cleaned of every reasoning form."""

from hermes_gateway.thinking import postprocess_reply, strip_thinking


def test_closed_blocks_of_each_tag_are_removed_with_the_whitespace_after_them() -> None:
    for tag in ("think", "thinking", "reasoning", "THINK"):
        assert strip_thinking(f"<{tag}>secret\nplans</{tag}>\n\nAnswer") == "Answer"
    assert strip_thinking("A <think>x</think>B <reasoning>y</reasoning>C") == "A B C"


def test_unclosed_block_at_the_end_is_removed() -> None:
    assert strip_thinking("Answer.<think>and then I was cut off") == "Answer."


def test_orphan_closing_tag_drops_what_came_before() -> None:
    assert strip_thinking("reasoning from the template</think>\nAnswer") == "Answer"


def test_text_without_tags_is_untouched() -> None:
    text = "a < b and c > d, <b>bold</b>, x <thinker> y"
    assert strip_thinking(text) == text


def test_postprocess_trims_trailing_whitespace_and_leading_blank_lines() -> None:
    assert postprocess_reply("\n\n  Indented code\n\n  ") == "  Indented code"
    assert postprocess_reply("<think>t</think>\n\nAnswer \n") == "Answer"
    assert postprocess_reply("\n\nHello  \n") == "Hello"
