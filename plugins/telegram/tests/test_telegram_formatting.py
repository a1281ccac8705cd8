"""Markdown → Telegram text + entities: what renders, what stays as typed, and that text never grows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_gateway import has_table
from hermes_telegram.formatting import convert_blocks, convert_or_plain, to_entities, utf16_units


def rendered(markdown: str) -> tuple[str, list[tuple[str, str]]]:
    """The text, and each entity as (type, the text it covers): what a person sees formatted."""
    text, entities = to_entities(markdown)
    encoded = text.encode("utf-16-le")
    return text, [(e.type, encoded[2 * e.offset:2 * (e.offset + e.length)].decode("utf-16-le")) for e in entities]


def test_every_supported_construct_renders_without_its_markers():
    markdown = ("## Results\n\nThe **build** is *green*, ~~red~~ no more; run `make test`.\n"
                "See [the docs](https://example.org/docs).\n\n"
                "- first\n- second\n  - nested\n\n1. one\n2. two\n\n> quoted\n> twice\n\n"
                "```python\nprint('hi')\n```\n\n---\nThe end.")
    text, spans = rendered(markdown)
    assert text == ("Results\n\nThe build is green, red no more; run make test.\nSee the docs.\n\n"
                    "• first\n• second\n  • nested\n\n1. one\n2. two\n\nquoted\ntwice\n\nprint('hi')\n\n———\nThe end.")
    assert spans == [("bold", "Results"), ("bold", "build"), ("italic", "green"), ("strikethrough", "red"),
                     ("code", "make test"), ("text_link", "the docs"), ("blockquote", "quoted\ntwice"),
                     ("pre", "print('hi')")]
    _, entities = to_entities(markdown)
    assert [e.url for e in entities if e.type == "text_link"] == ["https://example.org/docs"]
    assert [e.language for e in entities if e.type == "pre"] == ["python"]


def test_half_written_markup_stays_as_typed_until_it_closes():
    for partial in ("Some **bold and", "a `code", "[the docs](https://exa", "~~gone", "*it"):
        assert rendered(partial) == (partial, []), partial
    assert rendered("Some **bold** and *it") == ("Some bold and *it", [("bold", "bold")])


def test_an_open_code_fence_is_already_code():
    assert rendered("Look:\n```sh\nls -l") == ("Look:\nls -l", [("pre", "ls -l")])


def test_offsets_count_utf16_units():
    text, spans = rendered("🎉 **party 🎉** time")
    assert text == "🎉 party 🎉 time" and spans == [("bold", "party 🎉")]
    assert to_entities("🎉 **party 🎉** time")[1][0].offset == 3  # the emoji before counts 2, the space 1


def test_links_telegram_would_refuse_stay_plain_text():
    assert rendered("[x](ftp://h/f) and [y](/relative)") == ("x and y", [])


def test_list_numbers_are_kept_as_written():
    assert rendered("1. a\n1. b\n1. c")[0] == "1. a\n1. b\n1. c"
    assert rendered("7) seven\n8) eight")[0] == "7) seven\n8) eight"


def test_a_failing_conversion_falls_back_to_plain_text(monkeypatch):
    from hermes_telegram import formatting

    def broken(markdown):
        raise RecursionError("deeply nested")
    monkeypatch.setattr(formatting, "_convert", broken)
    assert convert_or_plain("**x**") == ("**x**", [])
    assert convert_or_plain("# one\n\n**two**") == ("# one\n\n**two**", [])


# ------------------------------------------------------------------ the length claim, for any input

PIECES = ["**", "*", "_", "__", "~~", "`", "```", "```py", "#", "## ", "> ", "- ", "* ", "+ ", "1. ", "10) ",
          "[", "]", "(", ")", "](https://x.io)", "<https://a.b>", "![alt](i.png)", "\\", "&amp;", "&#128512;",
          "---", "***", "===", "    ", "\t", " ", "  ", "\n", "\n\n", "\n\n\n", "word", "longer words",
          "😀", "語", "é", "<b>", "|", "a|b", "\r\n"]
markdown_ish = st.lists(st.sampled_from(PIECES), max_size=80).map("".join)


@settings(max_examples=400, deadline=None)
@given(markdown_ish)
def test_converted_text_is_never_longer_than_its_markdown_and_every_entity_is_inside_it(markdown):
    for convert in (to_entities, convert_blocks):
        text, entities = convert(markdown)
        assert utf16_units(text) <= utf16_units(markdown)
        size = utf16_units(text)
        for e in entities:
            assert e.length > 0 and 0 <= e.offset and e.offset + e.length <= size, (e, text)


words = st.lists(st.sampled_from(["word", "**bold**", "*it*", "`code`", "[link](https://x.io)", "~~s~~", "😀",
                                  "é", "a_b"]), min_size=1, max_size=8).map(" ".join)
lines_of = st.lists(words, min_size=1, max_size=4)
block = st.one_of(
    words,
    words.map(lambda w: "## " + w),
    lines_of.map(lambda ws: "\n".join("- " + w for w in ws)),
    lines_of.map(lambda ws: "\n".join(f"{i + 1}. " + w for i, w in enumerate(ws))),
    lines_of.map(lambda ws: "\n".join("> " + w for w in ws)),
    st.lists(st.sampled_from(["x = 1", "", "  indented", "# comment"]), min_size=1, max_size=5).map(
        lambda ls: "```py\n" + "\n".join(ls) + "\n```"),
    st.just("---"),
    lines_of.map(lambda ws: "- " + ws[0] + "\n\n  " + "\n  ".join(ws[1:] or ["more"])),  # a loose item
)
document = st.lists(st.tuples(block, st.sampled_from(["\n\n", "\n\n\n", "\n"])), min_size=1, max_size=10).map(
    lambda pairs: "".join(b + sep for b, sep in pairs))


@settings(max_examples=300, deadline=None)
@given(document)
def test_converting_block_by_block_gives_what_converting_whole_gives(markdown):
    """Previews convert unchanged leading blocks from a cache: it must never change what is shown."""
    assert convert_blocks(markdown) == to_entities(markdown)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_at_all_converts_within_its_length(markdown):
    text, _ = to_entities(markdown)
    assert utf16_units(text) <= utf16_units(markdown) or has_table(markdown), "only a laid-out table may grow"


def test_text_and_entities_are_what_telegram_keeps_so_an_indented_first_code_line_keeps_its_indent():
    """Telegram (tdlib) moves the whitespace that starts an entity out of it and trims before the first one;
    the converter does the same, so what the plugin sends is exactly what the chat shows; a code block's
    first-line indentation is written with no-break spaces, which Telegram keeps."""
    from hermes_telegram.emulator import telegram_trim

    for markdown in ("Run:\n\n```\n    indented()\n    more()\n```", "```\n    indented()\n    more()\n```",
                     "**  spaced bold** and *x*", "- a\n\n  ```\n\n  x\n  ```"):
        text, entities = to_entities(markdown)
        dicts = [e.to_dict() for e in entities]
        assert telegram_trim(text, dicts) == (text, dicts), markdown
    nbsp = "\u00a0" * 4
    assert rendered("Run:\n\n```\n    indented()\n    more()\n```")[1] == [("pre", nbsp + "indented()\n    more()")]
    assert rendered("```py\n\tx = 1\n```")[1] == [("pre", "\u00a0x = 1")], "a tab too: no-break, one each"
    assert rendered("```\n\n  x\n```")[1] == [("pre", "\u00a0\u00a0x")], "after a blank first line too"


def test_keep_whole_names_every_range_that_renders_as_one_entity_in_the_markdown():
    from hermes_telegram.formatting import keep_whole

    markdown = ("# A heading. Two sentences\n\n"
                "> quoted **bold\n> still** and \\*not\\* and [link](http://a.b/(c)) ok\n\n"
                "1. item `code` here\n   continued ~~strike~~ &amp; *em* &#65; __b__\n\n"
                "    more of the item, not code\n\n"
                "```py\nx = 1\n\ny = 2\n```\n"
                "tail **still open and `more")
    assert [markdown[a:b] for a, b in keep_whole(markdown)] == [
        "# A heading. Two sentences", "**bold\n> still**", "[link](http://a.b/(c))", "`code`", "~~strike~~",
        "*em*", "__b__", "```py\nx = 1\n\ny = 2\n```", "**still open and `more"]


def test_an_unclosed_delimiter_is_kept_whole_to_the_end_of_its_paragraph_not_of_the_text():
    """Emphasis and inline code never close in a later paragraph: a stray ``**`` that never closes does not
    hold every cut after it (the first message then ended before its paragraph, 2,457 of 4,096 characters)."""
    from hermes_gateway import split_markdown
    from hermes_telegram.formatting import keep_whole
    from hermes_telegram.measure import keep_whole_ranges, rendered_length

    markdown = "One ** stray\nstill it.\n\nTwo ~~ and ` too.\n\nThree **open"
    assert [markdown[a:b] for a, b in keep_whole(markdown)] == ["** stray\nstill it.", "~~ and ` too.", "**open"]
    prose = [" ".join(f"p{j}w{i}" for i in range(60)) for j in range(13)]
    text = "\n\n".join(prose[:7] + ["A stray ** that never closes."] + prose[7:])
    messages = split_markdown(text, 4096, measure=rendered_length, keep_whole=keep_whole_ranges)
    assert len(messages) == 2 and len(messages[0]) > 3800, [len(m) for m in messages]
    assert "".join(messages) == text  # nothing lost between them


LINK_BEING_TYPED = ["[the docs", "[the docs\nstill", "[the docs]", "[the docs](", "[the docs](https://exa",
                    "[the docs](https://a.b/(c", "[the [1] docs](https://exa", "[the docs][ref", "\\\\[the docs"]


@pytest.mark.parametrize("partial", LINK_BEING_TYPED)
def test_keep_whole_keeps_a_link_still_being_typed_whole_to_the_end_of_its_paragraph(partial):
    """Mid-stream ``[text](https://exa`` is not a link yet (markdown-it reads it as text), but a preview cut
    inside it freezes: the finished link then showed cut in two, its ``](url)`` as text (the property test
    below, seed 283). Like an unclosed ``**``, it is kept whole from its ``[`` (or ``![``) on."""
    from hermes_telegram.formatting import keep_whole

    markdown = f"Intro **b** words\n\nSee [1] and {partial}"
    start = markdown.index(partial.lstrip("\\"))
    assert (start, len(markdown)) in keep_whole(markdown), partial
    assert keep_whole("See ![a picture](https://exa") == [(4, 28)], "an image from its !"
    closed = "See [1], [x] and [the docs](https://a.b) and \\[not a link\n\n[y] (z) [w]: next"
    assert [closed[a:b] for a, b in keep_whole(closed)] == ["[the docs](https://a.b)"]


@pytest.mark.parametrize("partial", ["*it is", "_it is", "*it\nstill", "_it *and", "*`code` and", "*it ** is"])
def test_keep_whole_keeps_italic_still_being_typed_whole_to_the_end_of_its_paragraph(partial):
    """A single ``*`` or ``_`` that can open emphasis, left as text mid-stream: the same freeze as a link's."""
    from hermes_telegram.formatting import keep_whole

    markdown = f"Intro **b** words\n\nSee 2 * 3, snake_case and \\*not* and {partial}"
    start = markdown.index(partial)
    assert (start, len(markdown)) in keep_whole(markdown), partial
    plain = "See 2 * 3, a* b, snake_case_name, \\*not\\* and *done*, [in *a link](https://a.b)\n\nNext"
    assert [plain[a:b] for a, b in keep_whole(plain)] == ["*done*", "[in *a link](https://a.b)"]


def test_a_reply_cut_while_a_link_or_italic_is_being_typed_never_cuts_it():
    """What the preview sends just before the link's ``)`` (the italic's ``*``) arrives: it moves whole into the
    next message."""
    from hermes_gateway import split_markdown
    from hermes_telegram.measure import keep_whole_ranges, rendered_length

    link = "[" + " ".join(f"link{i}" for i in range(40)) + "](https://example.org/page"
    streamed = " ".join(f"word{i}" for i in range(500)) + " " + link
    messages = split_markdown(streamed, 4096, measure=rendered_length, keep_whole=keep_whole_ranges)
    assert len(messages) == 2 and messages[1] == link
    italic = "*" + " ".join(f"ital{i}" for i in range(40))
    streamed = " ".join(f"word{i}" for i in range(510)) + " " + italic
    messages = split_markdown(streamed, 4096, measure=rendered_length, keep_whole=keep_whole_ranges)
    assert len(messages) == 2 and messages[1] == italic


@pytest.mark.parametrize("markdown", ["*\t\t*", "- \t\tcode", "1.\t\t\tx", "> -\t\tx"])
def test_a_tab_stop_never_makes_the_text_longer_than_its_markdown(markdown):
    """``*\t\t*`` is a list item holding an indented code block whose tab expands to more spaces than the
    source has characters (found by the property test above): such a text goes out as typed instead."""
    for convert in (to_entities, convert_blocks):
        text, entities = convert(markdown)
        assert utf16_units(text) <= utf16_units(markdown)
    assert to_entities("*\t\t*") == ("*\t\t*", [])


# ------------------------------------------------------------------ plain prose without the parser (issue 39)

#: Prose, and what makes a line's start or end matter (block markers, indentation, odd whitespace) ...
PROSE = ["word", "Word", "w1", "a.", ", ", "!", "?", "'", '"', ": ", ";", "(x)", " ", "  ", "\n", "\n\n",
         "\n\n\n", "é", "😀", "語", "\u00a0", "\x01", "\x1c", "\t", "-", "1.", "2)", "#", ">", "=", "+", "3 ",
         "- ", "> ", "= ", "\x0b", "\u2028", "\x85"]
#: ... and, now and then, markup anywhere in a line
MARKUP = ["*", "_", "&amp;", "\\", "`", "|", "[a]", "<b>", "\r", "~~"]
prose_ish = st.lists(st.sampled_from(PROSE * 6 + MARKUP), max_size=40).map("".join)
#: Lines of words (a few of them block markers or markup), most of which the shortcut takes
prose_words = st.sampled_from(["word", "Word", "w1", "a.", "b,", "c!", "d?", "'q'", '"q"', "x:", "y;", "(x)", "é",
                               "😀", "語", "a\u00a0b", "e\x01", "in-line", "a=b", "C#", "a>b", "1+1"] * 3
                              + ["-", "1.", "2)", "3", "#", ">", "=", "+", "*a*", "_", "`c`", "&amp;", "[l]"])
line_ends = st.sampled_from(["\n"] * 4 + ["\n\n"] * 4 + ["\n\n\n", " \n", "\n ", "\n    ", "\t\n", "\u00a0\n"])
prose_lines = st.lists(st.tuples(st.lists(prose_words, min_size=1, max_size=8).map(" ".join), line_ends),
                       max_size=8).map(lambda lines: "".join(line + end for line, end in lines))


@settings(max_examples=500, deadline=None)
@given(st.one_of(prose_ish, prose_lines))
def test_text_without_markdown_renders_as_the_parser_renders_it(markdown):
    """The shortcut for plain prose (no markdown-it parse) must show exactly what the parser's way shows."""
    from hermes_telegram import formatting

    assert formatting._convert(markdown) == formatting._convert_parsed(markdown)


def test_a_long_plain_reply_takes_the_shortcut_and_reads_as_written():
    from hermes_telegram import formatting

    assert formatting.render("One line,\ntwo lines.\n\n\nA paragraph!\n") == ("One line,\ntwo lines.\n\nA paragraph!", [])
    reply = ("Sure! Here is what I found, in short.\nIt is 300 words long, more or less.\n\n\n"
             "Second paragraph: a. b, c? (yes) \u00e9 \U0001F600 - done.\n") * 20
    assert formatting._plain_paragraphs(reply) is not None  # the shortcut, not the parser
    parsed = formatting._trimmed(*formatting._convert_parsed(reply))
    assert formatting.render(reply) == parsed
    assert formatting.render(reply + "▌", "▌") == (parsed[0] + "▌", [])
