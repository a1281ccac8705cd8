"""A hook's prompt filled in one pass: fields found or empty, nothing a payload carries read as a field."""

from __future__ import annotations

import json

from hermes_gateway._core.outbound.hooks.template import BODY_CHARS, render


def test_fields_by_key_and_index_missing_ones_empty_and_other_braces_left_as_written():
    data = {"repository": {"full_name": "acme/app"}, "commits": [{"id": "abc"}, {"id": "def"}], "ok": False,
            "n": 3, "labels": ["a", "b"]}
    body = json.dumps(data).encode()
    out = render("{json.repository.full_name} {json.commits.1.id} {json.ok} {json.n} {json.labels} "
                 "[{json.nope.deeper}] [{json.commits.9.id}] {0.__class__} {body.__class__} {other}", body, data)
    assert out == 'acme/app def false 3 ["a","b"] [] [] {0.__class__} {body.__class__} {other}'


def test_values_are_not_read_again_as_fields():
    data = {"title": "{body} and {json.secret}", "secret": "s3"}
    assert render("T: {json.title}", json.dumps(data).encode(), data) == "T: {body} and {json.secret}"


def test_the_body_is_text_and_bounded():
    assert render("<{body}>", b"caf\xc3\xa9 \xff", None) == "<café \ufffd>"
    long = render("{body}", b"x" * (BODY_CHARS + 10), None)
    assert long.startswith("x" * BODY_CHARS) and long.endswith("characters in all)") and len(long) < BODY_CHARS + 60
