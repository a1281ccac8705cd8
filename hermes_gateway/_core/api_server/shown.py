"""How a request's values are named in a 400's message: by kind, or briefly by value; never a whole payload.

One wording for every check of a request (body, messages, params, tools,
schemas), so the client reads the same words for the same mistake.
"""

from __future__ import annotations

import json
from typing import Any

#: Longest value quoted in a message; longer ones are cut with ``...``.
MAX_SHOWN = 40


def kind_of(value: Any) -> str:
    """``an object``, ``an array``, ``a string``, ``a boolean``, ``a number``, ``null``: JSON's names, not Python's."""
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def shown(value: Any) -> str:
    """A scalar as the client wrote it (JSON; a string quoted), at most :data:`MAX_SHOWN` characters; an object
    or array by its kind."""
    if isinstance(value, (dict, list)):
        return kind_of(value)
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 3] + "..."
