"""The demo model's schema-satisfying values: valid where it can tell, bounded whatever the schema."""

from __future__ import annotations

import time

import jsonschema
import pytest
from hypothesis import given, settings, strategies as st

from hermes_gateway._core.demo.schema import MAX_DEPTH, example_value

SCHEMAS = [
    {"type": "object", "properties": {"a": {"type": "string", "minLength": 3, "maxLength": 5}}, "required": ["a"]},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 7}, "x": {"type": "number",
                                                                                    "exclusiveMinimum": 0.5}},
     "required": ["n", "x"], "additionalProperties": False},
    {"type": "array", "items": {"enum": ["red", "green"]}, "minItems": 3},
    {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
    {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
               {"properties": {"b": {"const": 4}}, "required": ["b"]}]},
    {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"},
                                      "site": {"type": "string", "format": "uri"}}, "required": ["when", "site"]},
    {"$defs": {"node": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/$defs/node"},
                                                                           {"type": "null"}]}}}},
     "$ref": "#/$defs/node"},
    {"type": ["string", "null"], "maxLength": 2},
    {"type": "object", "properties": {"v": {"type": "number", "maximum": -3}}, "required": ["v"]},
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_values_validate(schema):
    jsonschema.validate(example_value(schema, "hello world"), schema)


def test_strings_carry_the_given_text():
    assert example_value({"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]},
                         "it rains") == {"s": "it rains"}


def test_self_reference_and_depth_end():
    value = example_value({"$ref": "#"}, "x")  # a schema that is only a reference to itself
    assert value is None
    deep: dict = {"type": "string"}
    for _ in range(1000):
        deep = {"type": "object", "properties": {"x": deep}, "required": ["x"]}
    started = time.perf_counter()
    value = example_value(deep, "x")
    assert time.perf_counter() - started < 0.5
    depth = 0
    while isinstance(value, dict):
        value, depth = value["x"], depth + 1
    assert depth <= MAX_DEPTH + 1


def test_huge_schema_is_bounded():
    wide = {"type": "object", "properties": {f"p{i}": {"type": "array", "minItems": 16, "items": {
        "type": "array", "minItems": 16, "items": {"type": "string"}}} for i in range(2000)}}
    started = time.perf_counter()
    example_value(wide, "x")
    assert time.perf_counter() - started < 0.5


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=4), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_as_a_schema_never_raises(schema):
    example_value(schema, "x")
