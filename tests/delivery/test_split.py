from hypothesis import given, settings, strategies as st

from hermes_gateway._core.delivery.measure import measure_for, utf16_length
from hermes_gateway._core.delivery.split import reassemble, render, split_text


def messages(doc, limit, unit="chars"):
    return [render(doc, p) for p in split_text(doc, limit, measure_for(unit))]


def test_short_text_is_one_message():
    assert messages("hello", 100) == ["hello"]


def test_prefers_a_paragraph_break():
    doc = "First paragraph is here.\n\nSecond one follows and is long enough to overflow."
    out = messages(doc, 60)
    assert out[0] == "First paragraph is here.\n\n"
    assert "".join(out) == doc


def test_falls_back_to_a_sentence_then_a_word():
    doc = "One sentence here. Another sentence that is quite a bit longer than the limit allows"
    out = messages(doc, 40)
    assert out[0] == "One sentence here. "
    assert all(len(m) <= 40 for m in out)
    assert "".join(out) == doc


def test_a_cut_inside_a_code_fence_closes_and_reopens_it():
    code = "".join(f"x = {i}\n" for i in range(20))
    doc = f"Look:\n```python\n{code}```\nDone."
    out = messages(doc, 60)
    assert len(out) > 2
    for m in out:
        assert len(m) <= 60
        assert m.count("```") % 2 == 0, m
    assert out[1].startswith("```python\n")
    assert reassemble(out) == doc


def test_limits_count_utf16_units():
    doc = "😀" * 30
    out = messages(doc, 20, "utf16")
    assert all(utf16_length(m) <= 20 for m in out)
    assert "".join(out) == doc


def test_limits_count_utf8_bytes_and_never_cut_a_character():
    doc = "Grüße aus Köln 😀 " * 12 + "中文字符" * 10
    out = messages(doc, 40, "bytes")
    assert len(out) > 5 and all(len(m.encode("utf-8")) <= 40 for m in out)
    assert "".join(out) == doc  # each message is whole characters: the pieces decode and join back exactly
    one_word = "😀" * 30  # no place to cut but between characters: 4 bytes each, 10 a message
    out = messages(one_word, 40, "bytes")
    assert "".join(out) == one_word and all(len(m.encode("utf-8")) <= 40 and m for m in out)


def test_a_table_cut_between_rows_repeats_its_head_in_the_next_message():
    head = "| name | qty |\n|------|----:|\n"
    rows = "".join(f"| item {i} | {i} |\n" for i in range(30))
    doc = "Stock:\n\n" + head + rows + "\nThat is all."
    out = messages(doc, 120)
    assert len(out) > 3 and all(len(m) <= 120 for m in out)
    assert all(m.startswith(head) for m in out[1:-1]), "every message inside the table is a table of its own"
    assert reassemble(out) == doc


prose = st.text(alphabet=st.sampled_from(list("abc de.\n😀é中")), min_size=0, max_size=400)
cell = st.text(alphabet="xy z", min_size=1, max_size=2)  # a head of at most 22: a repeated head + a row fits 30
table = st.builds(lambda header, rows: "| " + " | ".join(header) + " |\n" + "|---" * len(header) + "|\n"
                  + "".join("| " + " | ".join(row) + " |\n" for row in rows),
                  st.lists(cell, min_size=1, max_size=2), st.lists(st.lists(cell, min_size=1, max_size=2), max_size=12))


@settings(max_examples=200)
@given(st.lists(st.one_of(prose, table, st.builds(lambda lines: "```py\n" + "\n".join(lines) + "\n```\n",
                                                     st.lists(st.text(alphabet="xy =", max_size=12), max_size=10))),
                max_size=6),
       st.integers(min_value=30, max_value=120), st.sampled_from(["chars", "utf16", "bytes"]))
def test_every_message_fits_and_the_text_comes_back(parts, limit, unit):
    # code lines stay shorter than a message: only a longer line forces a mid-line cut (see reassemble)
    doc = "\n".join(parts)
    measure = measure_for(unit)
    pieces = split_text(doc, limit, measure)
    out = [render(doc, p) for p in pieces]
    assert all(measure(render(doc, p, limit=limit, measure=measure)) <= limit for p in pieces)
    assert all(measure(m) <= limit for m in out)
    assert all(m.count("```") % 2 == 0 for m in out if "```" in doc)
    assert reassemble(out) == doc


def test_a_long_run_of_whitespace_never_becomes_a_message_of_its_own():
    doc = "start" + " " * 300 + "end of it"
    out = [render(doc, p, limit=50, measure=len) for p in split_text(doc, 50, len)]
    assert all(m.strip() for m in out), out
    assert all(len(m) <= 50 for m in out)
    assert " ".join(out).split() == ["start", "end", "of", "it"]
