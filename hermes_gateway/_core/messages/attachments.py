"""``Attachment``: one file a person sent (a photo, a document, a voice note), as a platform hands it to the core.

A platform plugin describes each file it received — its kind, mime type,
size and name when the platform says them — and gives the core a way to
fetch the bytes: ``fetch()`` returns an async iterator of chunks. Nothing
is downloaded when the plugin builds the value; the core calls ``fetch``
at most once, and only for a message it keeps (not a duplicate, not an
unknown user, not an unmentioned group message), checking the declared
size before it starts and the bytes while they stream, so a file over the
limit is never held in memory whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AsyncIterator, Callable, Literal

from ..errors import HermesError

AttachmentKind = Literal["image", "audio", "voice", "video", "document", "sticker"]
KINDS: tuple[str, ...] = ("image", "audio", "voice", "video", "document", "sticker")


class FetchError(HermesError):
    """The platform could not hand over the file (gone, refused, too large for its own download limit)."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """One received file. ``fetch()`` streams its bytes (called at most once, by the core).

    ``kind``: ``image``, ``audio``, ``voice`` (a voice note: audio the person
    recorded to be heard as words), ``video``, ``document`` or ``sticker``.
    ``mime``, ``size`` (bytes) and ``filename`` as the platform declares them,
    or None. ``fetch`` raises :class:`FetchError` (or any exception) when the
    file cannot be had; the person is then told in one line, and the rest of
    the message is still answered.
    """

    kind: AttachmentKind
    fetch: Callable[[], AsyncIterator[bytes]] = field(repr=False, compare=False)
    mime: str | None = None
    size: int | None = None
    filename: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Attachment kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.size is not None and self.size < 0:
            raise ValueError("Attachment size must be >= 0 bytes")
