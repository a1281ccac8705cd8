"""What the model is given for one received file, by kind: the hook point for every kind of file.

A converter turns a :class:`~.downloads.Received` file into content parts
for the model now (``model``), the parts the conversation's history keeps
(``stored``), and at most one line for the person, shown before the reply
(``line``: why the file could not be used; a voice converter may put the
transcript there). Built in: images (vision parts, :mod:`.image_parts`)
and documents (text, :mod:`.document_text`); stickers are images. Other
kinds have no converter until one is registered with
:func:`register_converter` (voice notes and audio: transcription); a file
of a kind without one is never downloaded, and costs one line.

History keeps, for an image, a text stand-in carrying the stored file's
path under :data:`FILE_KEY`; :mod:`.history_media` turns that back into an
image for the latest turns and strips the key before anything is sent.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

from .document_text import DocumentError, document_text, is_pdf
from .pdf_text import PdfBudget, pdf_text
from .downloads import KIND_WORDS, Received
from .image_parts import MAX_PIXELS, ImageError, PreparedImage, prepare_image_bounded

#: The key of a stored text part that stands in for a file kept in the media directory (never sent upstream).
FILE_KEY = "hermes_file"


@dataclass(frozen=True)
class MediaSettings:
    """The ``media.*`` / ``model.vision`` / ``store.history_images`` settings the inbound file path reads."""

    directory: Path
    limits: Mapping[str, int]
    image_max_side: int = 1568
    document_max_chars: int = 20_000
    max_image_pixels: int = MAX_PIXELS
    max_concurrent_decodes: int | None = None  # None: one per core
    pdf: PdfBudget = PdfBudget()
    vision: bool = True
    history_images: int = 2
    keep_seconds: float = 0.0
    config: Any = None  # the whole Config, for a registered converter's own section (e.g. ``voice``)

    @classmethod
    def from_config(cls, config: Any) -> "MediaSettings":
        media = config.media
        return cls(directory=media.path(), limits=dict(media.inbound_max_bytes),
                   image_max_side=media.image_max_side, document_max_chars=media.document_max_chars,
                   max_image_pixels=media.max_image_pixels, max_concurrent_decodes=media.max_concurrent_decodes,
                   pdf=PdfBudget(media.pdf_timeout, media.pdf_max_pages, media.pdf_empty_pages, media.pdf_memory_mb,
                                 media.max_concurrent_decodes),
                   vision=config.model.vision, history_images=config.store.history_images,
                   keep_seconds=media.keep_seconds, config=config)


@dataclass
class FileContent:
    """One file as the model sees it now, as history keeps it, and a line the person is shown before the reply.

    ``unused``: the model gets only a stand-in (the file could not be used), so a message of such files and
    no words has nothing to answer: the person gets the lines, and no model turn runs."""

    model: list[dict[str, Any]] = field(default_factory=list)
    stored: list[dict[str, Any]] = field(default_factory=list)
    line: str | None = None
    unused: bool = False


Converter = Callable[[Received, MediaSettings], Awaitable[FileContent]]


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def failed(name: str, kind: str, why: str) -> FileContent:
    """A file that could not be used: the model is told it was sent, the person why it was not used."""
    word = KIND_WORDS.get(kind, "file")
    named = word if name == word else f"{word}: {name}"
    stand_in = text_part(f"[{named}: the person sent it, but it could not be used: {why}]\n")
    return FileContent([stand_in], [stand_in], f"📎 {name}: {why}", unused=True)


async def decode_image(path: str | Path, settings: MediaSettings) -> PreparedImage:
    """The image at ``path`` for the model, within the settings' pixel cap and the process's decode bound."""
    return await prepare_image_bounded(path, settings.image_max_side, max_pixels=settings.max_image_pixels,
                                       workers=settings.max_concurrent_decodes)


async def image_content(received: Received, settings: MediaSettings) -> FileContent:
    """An image as a vision part (downscaled), its stand-in kept in history with the stored file's path."""
    try:
        image = await decode_image(received.path, settings)
    except ImageError as exc:
        return failed(received.name, received.attachment.kind, str(exc))
    line = f"[image: {received.name} ({image.summary})]\n"
    stored = {**text_part(line), FILE_KEY: {"path": str(received.path), "kind": "image"}}
    return FileContent([text_part(line), image.part()], [stored])


async def document_content(received: Received, settings: MediaSettings) -> FileContent:
    """A document's text (bounded, named) in the prompt and in history; one line when only part was read."""
    try:
        if is_pdf(received.name, received.attachment.mime):
            doc = await pdf_text(received.path, received.name, settings.document_max_chars, settings.pdf)
        else:
            doc = await asyncio.to_thread(document_text, received.path, received.name, received.attachment.mime,
                                          settings.document_max_chars)
    except DocumentError as exc:
        return failed(received.name, "document", str(exc))
    part = text_part(doc.prompt() + "\n")
    return FileContent([part], [part], f"📎 {received.name}: {doc.line}" if doc.line else None)


_CONVERTERS: dict[str, Converter] = {"image": image_content, "sticker": image_content,
                                     "document": document_content}

#: What the person is told for a kind nothing can take yet.
UNSUPPORTED = {"voice": "I cannot listen to voice notes here yet", "audio": "I cannot listen to audio here yet",
               "video": "I cannot watch videos yet"}


#: Asked before a file of its kind is downloaded, with the attachment and its display name: content that
#: stands for a file that cannot be used whatever its bytes (voice with no transcription set up), or None
#: to go on with the download.
Gate = Callable[[Any, str, MediaSettings], "FileContent | None"]
_GATES: dict[str, Gate] = {}


def register_converter(kind: str, converter: Converter, gate: Gate | None = None) -> None:
    """Make files of ``kind`` usable (e.g. ``voice`` → a transcript): the one hook point per kind.

    ``gate``: checked before the download, so a file the converter could never use is not fetched."""
    _CONVERTERS[kind] = converter
    if gate is None:
        _GATES.pop(kind, None)
    else:
        _GATES[kind] = gate


def converter_for(kind: str) -> Converter | None:
    return _CONVERTERS.get(kind)


def gate_for(kind: str) -> Gate | None:
    return _GATES.get(kind)


def unsupported(kind: str) -> str:
    return UNSUPPORTED.get(kind, f"I cannot use {KIND_WORDS.get(kind, kind)}s yet")
