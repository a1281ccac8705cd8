"""A hook's prompt with the call filled in: ``{body}`` and ``{json.path}``, nothing else, in one pass.

``str.format`` is never used on what a stranger sent (``{0.__class__}`` in a
template, or braces in a payload read again as fields): the template is
scanned once for the two forms, each replaced by its value, and the values
are not scanned again. A field the payload lacks is empty; any other
``{...}`` stays as written.

* ``{body}`` — the raw body as text (UTF-8, undecodable bytes replaced), at most :data:`BODY_CHARS` characters;
* ``{json.a.b.0.c}`` — a field of the JSON body: objects by key, arrays by index; a string as is,
  anything else as compact JSON, at most :data:`FIELD_CHARS` characters; ``{json}`` is the whole body as JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The most of the body ``{body}`` carries into the prompt (the rest is cut, and said to be).
BODY_CHARS = 32_000
#: The most one ``{json.path}`` field carries.
FIELD_CHARS = 8_000
_FIELD = re.compile(r"\{(body|json(?:\.[^{}\s]+)?)\}")
_MISSING = object()


def render(template: str, body: bytes, data: Any) -> str:
    """``template`` with ``{body}`` and ``{json...}`` replaced (``data``: the parsed JSON body, or None)."""
    text = body.decode("utf-8", errors="replace")

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "body":
            return _cut(text, BODY_CHARS)
        found = lookup(data, name.split(".")[1:])
        if found is _MISSING or found is None:
            return ""
        shown = found if isinstance(found, str) else json.dumps(found, ensure_ascii=False, separators=(",", ":"))
        return _cut(shown, FIELD_CHARS)

    return _FIELD.sub(value, template)


def lookup(data: Any, path: list[str]) -> Any:
    """``data`` followed along ``path`` (keys of objects, indexes of arrays); ``_MISSING`` when it leads nowhere."""
    for step in path:
        if isinstance(data, dict) and step in data:
            data = data[step]
        elif isinstance(data, list) and step.isdigit() and int(step) < len(data):
            data = data[int(step)]
        else:
            return _MISSING
    return data


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… (cut: {len(text):,} characters in all)"
