"""The turn's voice step: each voice note or audio file of the messages, downloaded and transcribed, before the model runs.

:func:`hear` is the one place the turn (:func:`hermes_gateway._core.conversation.answer_turn`)
calls into voice. Per message it gives the text the model reads — the
caption, then each transcript marked as spoken — and the lines the chat
shows before the reply (the quoted transcript with ``voice.show_transcript``,
one line per file that could not be heard).

Downloading here is deliberately minimal (:func:`fetch_to`: the declared
size checked first, the bytes while they stream, into the media directory,
removed once heard). The inbound media pipeline (issue 22 items 1–2,
``_core/inbound/downloads.py``) replaces it when merged: it then hands
:func:`hermes_gateway._core.voice.transcribe.transcribe` the path it
downloaded to.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..config import Config
from ..inbound.attachments import Attachment
from ..inbound.incoming import Incoming
from .pipeline import VOICE_KINDS
from .results import Transcript, VoiceProblem
from .transcribe import transcribe

log = logging.getLogger(__name__)

#: The largest audio file downloaded for transcription (Telegram's bots download at most 20 MB a file).
MAX_AUDIO_BYTES = 20 * 1024 * 1024
TOO_LARGE = "🎤 That audio file is too large for me to listen to (over {mb} MB)."
NO_DOWNLOAD = "🎤 I couldn't download your voice note, so I didn't hear it."


class TooLarge(Exception):
    """The file is over the limit (declared, or found while streaming)."""


def has_voice(incoming: Incoming) -> bool:
    """Whether the message carries something to hear (the runtime keeps such a message even without text)."""
    return any(a.kind in VOICE_KINDS for a in incoming.attachments)


@dataclass
class Heard:
    """What the messages of one turn said aloud.

    ``texts``: per message, what the model reads (caption, then transcripts).
    ``lines``: what the chat shows before the reply (quotes and problems).
    ``spoke``: a voice note or audio file was among them (``voice.reply: when_voice``).
    """

    texts: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    spoke: bool = False


async def hear(messages: Sequence[Incoming], config: Config) -> Heard:
    """Transcribe every voice note and audio file of ``messages``, in order."""
    heard = Heard()
    directory = config.media.path() / "inbound"
    for message in messages:
        parts = [message.text] if message.text.strip() else []
        for attachment in message.attachments:
            if attachment.kind not in VOICE_KINDS:
                continue
            heard.spoke = True
            result = await _hear_one(attachment, directory, config)
            if isinstance(result, Transcript):
                parts.append(result.for_model())
                if config.voice.show_transcript:
                    heard.lines.append(result.quoted())
            else:
                heard.lines.append(result.line)
        heard.texts.append("\n\n".join(parts))
    return heard


async def _hear_one(attachment: Attachment, directory: Path, config: Config) -> Transcript | VoiceProblem:
    try:
        path = await fetch_to(attachment, directory, MAX_AUDIO_BYTES)
    except TooLarge:
        return VoiceProblem(TOO_LARGE.format(mb=MAX_AUDIO_BYTES // (1024 * 1024)))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the platform could not hand it over: the rest of the message is still answered
        log.warning("a voice note could not be downloaded: %s: %s", type(exc).__name__, exc)
        return VoiceProblem(NO_DOWNLOAD)
    try:
        return await transcribe(path, attachment.mime, config.voice)
    finally:
        path.unlink(missing_ok=True)


async def fetch_to(attachment: Attachment, directory: Path, limit: int) -> Path:
    """Stream the attachment into a new file in ``directory``; never more than ``limit`` bytes, in memory or on disk."""
    if attachment.size is not None and attachment.size > limit:
        raise TooLarge()
    directory.mkdir(parents=True, exist_ok=True)
    suffix = Path(attachment.filename or "").suffix.lower()
    if not suffix.isascii() or len(suffix) > 8:
        suffix = ""
    fd, name = tempfile.mkstemp(prefix="voice-", suffix=suffix, dir=directory)
    path = Path(name)
    written = 0
    try:
        with os.fdopen(fd, "wb") as out:
            chunks: Any = attachment.fetch()
            async for chunk in chunks:
                written += len(chunk)
                if written > limit:
                    raise TooLarge()
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path
