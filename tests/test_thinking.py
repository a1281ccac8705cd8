"""``hermes_gateway._core.thinking`` keeps its import path: the final post-processing is the shared filter's."""

from hermes_gateway._core.reasoning import ReasoningFilter
from hermes_gateway._core.thinking import postprocess_reply, split_reasoning, strip_thinking


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
