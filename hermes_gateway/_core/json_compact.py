"""Compact JSON for the hot paths: ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``'s bytes, cheaper.

``json.dumps`` with any non-default option builds a ``JSONEncoder`` per
call, and even a shared ``JSONEncoder(...).encode`` builds a new C encoder,
a marker dict and a closure on every call (two Python frames). The API
server encodes a few values per request and, for the Responses API, one
event per streamed chunk; the agent encodes each upstream request body. A
C encoder made once and called directly writes the same text (the only
difference: no circular-reference check; these values are trees built by
the gateway, so a cycle cannot occur, and would end in ``RecursionError``
instead of ``ValueError``). Where CPython has no C encoder, the plain
encoder is used.
"""

from __future__ import annotations

import json
import json.encoder
from typing import Any, Callable

#: A ``str`` as a JSON string literal, exactly what ``json.dumps(text, ensure_ascii=False)`` returns.
json_string: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]


def _not_serializable(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def compact_encoder(*, allow_nan: bool = True) -> Callable[[Any], str]:
    """``json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)`` as one call."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has it; other interpreters may not
        return json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan).encode
    # (markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys, allow_nan)
    iterencode = make(None, _not_serializable, json_string, None, ":", ",", False, False, allow_nan)
    join = "".join

    def encode(value: Any) -> str:
        if type(value) is str:  # the C encoder takes containers and scalars alike, but not a bare str fast
            return json_string(value)
        return join(iterencode(value, 0))
    return encode


#: The shared encoder (NaN and infinities written as JavaScript's names, as ``json.dumps`` does by default).
dumps: Callable[[Any], str] = compact_encoder()
