"""The name the model sees for an MCP tool: ``SERVER__TOOL``, within OpenAI's tool-name rules.

OpenAI (and most compatible upstreams) accept 1-64 characters of
``[a-zA-Z0-9_-]``. An MCP tool may be named ``search.web`` or be very long:
other characters become ``_`` and a name that would be too long is cut and
given a short hash of the original, so two long names never collide and the
same tool always gets the same name.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
SEPARATOR = "__"
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """``server__tool`` made valid: odd characters to ``_``, cut to 64 with a hash when longer."""
    name = f"{server}{SEPARATOR}{_BAD.sub('_', tool)}"
    if len(name) <= MAX_NAME and _BAD.sub("_", tool) == tool:
        return name
    digest = hashlib.sha256(tool.encode("utf-8")).hexdigest()[:8]
    # characters were replaced (the hash tells "a.b" from "a_b") or the name is too long (cut, then hashed)
    return f"{name[: MAX_NAME - 9]}_{digest}"
