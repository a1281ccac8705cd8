"""The demo model's schema-satisfying values: valid where it can tell, bounded whatever the schema."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import jsonschema
import pytest
from hypothesis import given, settings, strategies as st

from hermes_gateway._core.demo import schema as schema_module
from hermes_gateway._core.demo.schema import MAX_DEPTH, MAX_NODES, example_value

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
    with counted_visits() as visits:
        value = example_value(deep, "x")
    assert visits[0] <= MAX_DEPTH + 2, "the nodes past MAX_DEPTH are never visited"
    depth = 0
    while isinstance(value, dict):
        value, depth = value["x"], depth + 1
    assert depth <= MAX_DEPTH + 1


def test_huge_schema_is_bounded():
    """Unbounded, this schema's value is 2000 x 16 x 16 strings; the work is counted, not timed (a timed check
    failed on a machine loaded by the parallel suite: 0.76 s for what takes milliseconds)."""
    wide = {"type": "object", "properties": {f"p{i}": {"type": "array", "minItems": 16, "items": {
        "type": "array", "minItems": 16, "items": {"type": "string"}}} for i in range(2000)}}
    with counted_visits() as visits:
        value = example_value(wide, "x")
    assert visits[0] <= MAX_NODES + MAX_DEPTH, visits
    assert nodes(value) <= MAX_NODES + MAX_DEPTH, "the value holds what was visited, no more"


@contextmanager
def counted_visits() -> Iterator[list[int]]:
    """How many schema nodes the value is built from: every visit is a call of ``schema._value`` (it recurses
    through the module's global name, so the count sees every level)."""
    visits = [0]
    real = schema_module._value

    def counting(*args: Any) -> Any:
        visits[0] += 1
        return real(*args)

    schema_module._value = counting
    try:
        yield visits
    finally:
        schema_module._value = real


def nodes(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(nodes(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(nodes(v) for v in value)
    return 1


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=4), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_as_a_schema_never_raises(schema):
    example_value(schema, "x")
