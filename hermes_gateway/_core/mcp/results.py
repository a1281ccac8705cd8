"""An MCP tool result as the gateway's: text for the model, images, audio and files as media.

The model reads the text parts (and, when there are none, the structured
content as JSON); each image, audio clip or embedded file becomes a
:class:`~hermes_gateway._core.media.Media` that the existing media path
delivers to the person after the reply (the model reads its stand-in line).
A resource link is shown to the model as its URI. A result the server marks
``isError`` is raised as :class:`McpToolError`, so the model gets an
``Error: ...`` result and the turn goes on.
"""

from __future__ import annotations

import base64
import binascii
import json
import posixpath
from typing import Any
from urllib.parse import urlsplit

from ..media import Media
from ..errors import HermesError
from ..tools import ToolResult


class McpToolError(HermesError):
    """The server answered the call with ``isError``, or could not be reached for it."""


def to_tool_result(result: Any) -> ToolResult:
    """A ``CallToolResult`` as a :class:`ToolResult` (text and media); raises :class:`McpToolError` for errors."""
    texts: list[str] = []
    media: list[Media] = []
    for part in result.content or ():
        kind = getattr(part, "type", None)
        if kind == "text":
            texts.append(part.text)
        elif kind in ("image", "audio"):
            data = _decode(part.data)
            if data is None:
                texts.append(f"[{kind} from the tool could not be decoded]")
            else:
                media.append(Media(data=data, mime=part.mime_type or ""))
        elif kind == "resource":
            resource = part.resource
            if getattr(resource, "text", None) is not None:
                texts.append(resource.text)
                continue
            data = _decode(getattr(resource, "blob", None))
            if data is None:
                texts.append(f"[file {resource.uri} could not be decoded]")
            else:
                media.append(Media(data=data, mime=resource.mime_type or "", filename=_filename(str(resource.uri))))
        elif kind == "resource_link":
            texts.append(f"[{part.name}: {part.uri}]")
    if not texts and getattr(result, "structured_content", None) is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = "\n".join(texts)
    if getattr(result, "is_error", False):
        raise McpToolError(text or "the tool reported an error")
    return ToolResult(text=text, media=media)


def _decode(data: Any) -> bytes | None:
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _filename(uri: str) -> str:
    """The last part of a resource's URI (``file:///tmp/report.pdf`` → ``report.pdf``), else ``file``."""
    try:
        path = urlsplit(uri).path
    except ValueError:
        path = ""
    return posixpath.basename(path.rstrip("/")) or ""
