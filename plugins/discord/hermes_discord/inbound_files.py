"""A Discord message's attachments as the core's :class:`~hermes_gateway.Attachment` values.

Discord says for each file its ``url`` (signed CDN link), ``content_type``
(absent for some uploads: then guessed from the file name), ``size`` and
``filename``. The kind follows the content type; a voice message (recorded
in the mobile app: ``voice-message.ogg``, OGG/Opus, with a duration and a
waveform) is ``voice``. Nothing is downloaded here: each attachment's
``fetch`` streams the file from the CDN only when the core asks
(:mod:`.download`), so a message the core drops downloads nothing.
"""

from __future__ import annotations

import mimetypes
from typing import Any

from hermes_gateway import Attachment

from .download import Downloads

_MAJOR_KINDS = {"image": "image", "audio": "audio", "video": "video"}


def attachments_of(message: Any, downloads: Downloads) -> tuple[Attachment, ...]:
    """Every file attached to a ``discord.Message``, in the order the person attached them."""
    voice_message = bool(getattr(getattr(message, "flags", None), "voice", False))
    return tuple(_attachment(file, downloads, voice_message) for file in getattr(message, "attachments", ()) or ())


def kind_of(mime: str | None, *, voice: bool = False) -> str:
    """``voice`` for a voice message, ``image``/``audio``/``video`` by the mime type's major part, else ``document``."""
    if voice:
        return "voice"
    return _MAJOR_KINDS.get((mime or "").split("/", 1)[0], "document")


def _attachment(file: Any, downloads: Downloads, voice_message: bool) -> Attachment:
    filename = str(file.filename)
    mime = (file.content_type or "").split(";", 1)[0].strip() or mimetypes.guess_type(filename)[0]
    voice = voice_message or bool(file.is_voice_message())
    size = int(file.size) if file.size is not None else None
    return Attachment(kind_of(mime, voice=voice), downloads.fetcher(file.url, filename=filename, size=size),  # type: ignore[arg-type]
                      mime=mime, size=size, filename=filename)
