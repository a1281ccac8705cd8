"""The compact encoder writes exactly ``json.dumps``'s text, and refuses what it refuses."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, strategies as st

from hermes_gateway._core.json_compact import compact_encoder, dumps, json_string

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


@given(VALUES)
def test_the_text_is_json_dumps_compact_and_unescaped(value) -> None:
    assert dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@given(VALUES)
def test_without_nan_the_text_is_the_same_or_the_same_error(value) -> None:
    strict = compact_encoder(allow_nan=False)
    try:
        expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        with pytest.raises(ValueError):
            strict(value)
    else:
        assert strict(value) == expected


@given(st.text())
def test_a_string_is_its_json_literal(text) -> None:
    assert json_string(text) == dumps(text) == json.dumps(text, ensure_ascii=False)


def test_what_json_cannot_write_is_a_type_error_naming_the_type() -> None:
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        dumps({"a": {1}})
    assert dumps({"n": math.inf, 1: True}) == '{"n":Infinity,"1":true}'
