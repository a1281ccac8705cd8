"""A value that satisfies a JSON schema, so the demo model can play along with tools and structured output.

Covers what tool and ``response_format`` schemas use in practice (objects
with required properties, arrays with ``minItems``, enums, ``const``,
numeric bounds, string lengths, ``anyOf``/``oneOf``/``allOf``, local
``$ref`` into ``$defs``/``definitions``, nullable type lists). Depth and
size are bounded: a hostile schema (deeply nested, self-referencing,
enormous) yields a shallow value quickly instead of recursing forever.
"""

from __future__ import annotations

from typing import Any, Mapping

#: Deeper than this, a schema's value is cut short (null, or an empty object/array).
MAX_DEPTH = 24
#: At most this many nodes are visited per value (a budget shared by the whole value).
MAX_NODES = 5_000


class _Budget:
    __slots__ = ("left",)

    def __init__(self, nodes: int) -> None:
        self.left = nodes


def example_value(schema: Any, text: str = "example") -> Any:
    """A value valid against ``schema`` where the demo can tell; strings are ``text`` (cut to fit)."""
    root = schema if isinstance(schema, Mapping) else {}
    return _value(root, root, text, 0, _Budget(MAX_NODES))


def _value(schema: Any, root: Mapping[str, Any], text: str, depth: int, budget: _Budget) -> Any:
    budget.left -= 1
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH or budget.left <= 0:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _value(_resolve(ref, root), root, text, depth + 1, budget)
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for combinator in ("anyOf", "oneOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            preferred = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
            return _value((preferred or options)[0], root, text, depth + 1, budget)
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        merged: dict[str, Any] = {}
        for part in all_of[:16]:
            if isinstance(part, Mapping):
                merged = _merge(merged, part)
        return _value({**merged, **{k: v for k, v in schema.items() if k != "allOf"}}, root, text, depth + 1,
                      budget)
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if kinds else "null"
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        return _object(schema, root, text, depth, budget)
    if kind == "array":
        items = schema.get("items")
        count = schema.get("minItems")
        count = count if isinstance(count, int) and not isinstance(count, bool) and 0 < count <= 16 else 1
        return [_value(items if isinstance(items, Mapping) else {}, root, text, depth + 1, budget)
                for _ in range(count)]
    if kind == "string":
        return _string(schema, text)
    if kind == "integer":
        return int(_number(schema, integer=True))
    if kind == "number":
        return _number(schema, integer=False)
    if kind == "boolean":
        return True
    return None


def _object(schema: Mapping[str, Any], root: Mapping[str, Any], text: str, depth: int, budget: _Budget) -> Any:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    required = schema.get("required")
    if isinstance(required, list):
        names = [n for n in required if isinstance(n, str) and n in properties]
    else:  # nothing required: every property near the top, none deeper (a recursive schema ends)
        names = list(properties) if depth < 4 else []
    out: dict[str, Any] = {}
    for name in names:
        if budget.left <= 0:
            break
        out[str(name)] = _value(properties[name], root, text, depth + 1, budget)
    return out


def _string(schema: Mapping[str, Any], text: str) -> str:
    fmt = schema.get("format")
    if fmt == "date-time":
        return "2026-01-01T00:00:00Z"
    if fmt == "date":
        return "2026-01-01"
    if fmt == "email":
        return "demo@example.com"
    if fmt in ("uri", "url"):
        return "https://example.com/"
    minimum, maximum = schema.get("minLength"), schema.get("maxLength")
    value = text or "example"
    if isinstance(maximum, int) and not isinstance(maximum, bool) and maximum >= 0:
        value = value[:maximum]
    if isinstance(minimum, int) and not isinstance(minimum, bool) and 0 < minimum <= 10_000:
        value = value.ljust(minimum, ".")
    return value


def _number(schema: Mapping[str, Any], *, integer: bool) -> float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    value: float = 1
    if isinstance(low, (int, float)) and not isinstance(low, bool):
        value = low + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
    elif isinstance(high, (int, float)) and not isinstance(high, bool) and high < value:
        value = high - (1 if "exclusiveMaximum" in schema and "maximum" not in schema else 0)
    return int(value) if integer else value


def _resolve(ref: str, root: Mapping[str, Any]) -> Any:
    """A local ``#/a/b`` reference inside ``root`` (anything else resolves to an empty schema)."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return {}
    node: Any = root
    for key in ref[2:].split("/")[:32]:
        if not isinstance(node, Mapping):
            return {}
        node = node.get(key.replace("~1", "/").replace("~0", "~"))
    return node if isinstance(node, Mapping) else {}


def _merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        if key == "properties" and isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = {**out[key], **value}
        elif key == "required" and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = [*out[key], *value]
        else:
            out[key] = value
    return out
