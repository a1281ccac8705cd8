"""The user content of one turn: the messages' text and their files, fetched now that the turn runs.

The inbound runtime keeps a message with files (even without text) and
calls this only when the turn is about to run, so nothing is downloaded
for a message it drops (a redelivery, an unknown user, a group message
not meant for the bot, one dropped by ``/stop``). Each file is fetched
once, in order, within its kind's limit (:mod:`.downloads`), and becomes
content by kind (:mod:`.file_content`). A file that cannot be used costs
one line in ``lines`` (shown before the reply) and a stand-in for the
model; the text and the other files are still answered. When the model
cannot look at images (``model.vision: false``) an image is not even
fetched: the model gets its stand-in, and the person one line, once.

Messages without files take the fast path: the text as before.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field
from typing import Any, Sequence

from .downloads import Refused, display_name, download
from .file_content import FILE_KEY, FileContent, MediaSettings, converter_for, failed, gate_for, text_part, unsupported
from ..messages.incoming import Incoming

IMAGE_KINDS = ("image", "sticker")


@dataclass
class TurnContent:
    """``model``: the user content for the agent; ``stored``: what history keeps; ``lines``: for the person.

    ``answerable`` False: no words and no file the model could use (a voice note nobody can transcribe, a file
    too large): the lines are the whole answer, and no model turn runs on stand-ins alone."""

    model: str | list[dict[str, Any]]
    stored: str | list[dict[str, Any]]
    lines: list[str] = field(default_factory=list)
    answerable: bool = True

    @property
    def preface(self) -> str:
        """The lines shown before the reply, e.g. one per file not used ("" when all went well)."""
        return "\n".join(self.lines)


def plain_text(messages: Sequence[Incoming]) -> str:
    return "\n\n".join(m.text for m in messages)


async def turn_content(messages: Sequence[Incoming], settings: MediaSettings) -> TurnContent:
    """Fetch and convert the messages' files; see the module's docstring."""
    if not any(m.attachments for m in messages):
        text = plain_text(messages)
        return TurnContent(text, text)
    model: list[dict[str, Any]] = []
    stored: list[dict[str, Any]] = []
    lines: list[str] = []
    unseen: list[str] = []  # images a model without vision was not shown
    answerable = False  # words, or a file the model can use
    for message in messages:
        if message.text.strip():
            answerable = True
            part = text_part(message.text + "\n\n")
            model.append(part)
            stored.append(part)
        for attachment in message.attachments:
            content = await _one_file(attachment, settings, unseen)
            answerable = answerable or not content.unused
            model += content.model
            stored += content.stored
            if content.line:
                lines.append(content.line)
    if unseen:
        lines.append(f"🖼 This model cannot look at images, so it was only told you sent {', '.join(unseen)}.")
    settings_directory_sweep(settings)
    if all(p.get("type") == "text" and FILE_KEY not in p for p in model + stored):
        text = "".join(p["text"] for p in model).strip()
        return TurnContent(text, "".join(p["text"] for p in stored).strip(), lines, answerable)
    return TurnContent(model, stored, lines, answerable)


def content_kind(attachment: Any) -> str:
    """The kind whose converter reads the file: a "document" that is an image (a screenshot sent as a
    file, uncompressed) is read as an image, one that is audio as audio; otherwise the platform's kind."""
    if attachment.kind != "document":
        return attachment.kind
    mime = (attachment.mime or "").split(";", 1)[0].strip().lower() or \
        (mimetypes.guess_type(attachment.filename or "")[0] or "")
    major = mime.split("/", 1)[0]
    if mime.endswith("+xml"):  # an SVG is text to read, not pixels
        return "document"
    return major if major in ("image", "audio") else "document"


async def _one_file(attachment: Any, settings: MediaSettings, unseen: list[str]) -> FileContent:
    name = display_name(attachment)
    kind = content_kind(attachment)
    if kind in IMAGE_KINDS and not settings.vision:
        unseen.append(name)
        stand_in = text_part(f"[image: {name}: the person sent it; it is not shown to you, since this model "
                             f"cannot look at images]\n")
        return FileContent([stand_in], [stand_in])
    converter = converter_for(kind)
    if converter is None:
        return failed(name, kind, unsupported(kind))
    gate = gate_for(kind)
    refused = gate(attachment, name, settings) if gate is not None else None
    if refused is not None:  # it could not be used whatever its bytes: not downloaded
        return refused
    limit = settings.limits.get(attachment.kind, settings.limits.get("document", 20 * 1024 * 1024))
    got = await download(attachment, settings.directory, limit)  # the limit of the kind the platform said
    if isinstance(got, Refused):
        return failed(got.name, kind, got.why)
    return await converter(got, settings)


def settings_directory_sweep(settings: MediaSettings) -> None:
    """Old received files go the way of old reply files (``media.keep_days``), swept at most hourly."""
    if settings.keep_seconds:
        from ..media_dir import MediaDirectory

        MediaDirectory(settings.directory, keep=settings.keep_seconds).prune_if_due()


def with_stored_user(turn: list[dict[str, Any]], stored: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recorded turn as history keeps it: the user message's images as stand-ins with their stored files."""
    if isinstance(stored, str) or not turn or turn[0].get("role") != "user":
        return turn
    return [{**turn[0], "content": stored}, *turn[1:]]
