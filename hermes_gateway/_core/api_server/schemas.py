"""JSON schemas a client sends (tool parameters, structured-output formats): checked to be sane, not interpreted.

The upstream model interprets a schema; the gateway only makes sure one
is a JSON object of bounded depth and size, so nothing downstream (the
upstream request encoder, the demo model's example builder, the store) is
handed a structure that takes unbounded time or stack. Each check walks
iteratively (no recursion), whatever the nesting.
"""

from __future__ import annotations

import re
from typing import Any

from ..http.errors import bad_request
from .shown import kind_of, shown

#: Deeper nesting than this is refused: OpenAI allows 10 levels of nested properties in a strict schema;
#: 64 JSON levels leave room for ``anyOf``/``items``/``$defs`` wrappers around them.
MAX_DEPTH = 64
#: At most this many JSON values in one schema.
MAX_NODES = 20_000
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def check_schema(schema: Any, where: str) -> dict[str, Any]:
    """``schema`` if it is an object within :data:`MAX_DEPTH` and :data:`MAX_NODES`; else a 400 naming ``where``."""
    if not isinstance(schema, dict):
        raise bad_request(f"{where} must be a JSON schema object, got {kind_of(schema)}.", where)
    nodes = 0
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise bad_request(f"{where} is too large (more than {MAX_NODES} JSON values).", where, "schema_too_large")
        if depth > MAX_DEPTH:
            raise bad_request(f"{where} is nested too deeply (more than {MAX_DEPTH} levels).", where,
                              "schema_too_deep")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return schema


def check_schema_name(name: Any, where: str) -> str:
    """A tool or schema name: 1-64 letters, digits, ``_`` or ``-`` (OpenAI's rule)."""
    if not isinstance(name, str) or NAME.fullmatch(name) is None:
        raise bad_request(f"{where} must be 1-64 letters, digits, underscores or dashes, got {shown(name)}.", where)
    return name
