"""Voice in the inbound media pipeline (issue 22 items 1–2): the converter for ``voice`` and ``audio`` files.

The media pipeline (``_core/content/file_content.py``, built in parallel)
downloads each file within ``media.inbound_max_bytes`` and hands it to the
converter registered for its kind. :func:`voice_content` is that converter
for voice notes and audio files: the transcript as the person's words
(marked spoken), the quoted transcript before the reply with
``voice.show_transcript``, or one line when it could not be heard.
:func:`voice_gate`, asked before the download, spares the download when
no ``voice.transcription`` is set (nothing could hear the file anyway).
:func:`register` installs both; it returns False where the pipeline is not
present, and :mod:`.inbound` does the download itself (the minimal voice
step in ``answer_turn``).
"""

from __future__ import annotations

from typing import Any

from ..voice_results import Transcript
from .transcribe import not_set_up, transcribe

#: The attachment kinds heard (``video`` is not: a video is watched, not heard).
VOICE_KINDS = ("voice", "audio")


async def voice_content(received: Any, settings: Any) -> Any:
    """A downloaded voice note or audio file as content for the model (``FileContent``), by ``voice.transcription``."""
    from ..content.file_content import FileContent, text_part

    voice = settings.config.voice
    result = await transcribe(received.path, received.attachment.mime, voice)
    if isinstance(result, Transcript):
        part = text_part(result.for_model() + "\n")
        return FileContent([part], [part], result.quoted() if voice.show_transcript else None)
    return _unheard(received.attachment.kind, received.name, result.line)


def voice_gate(attachment: Any, name: str, settings: Any) -> Any:
    """Before the download: with no ``voice.transcription`` nothing could hear the file, so it is not fetched."""
    voice = getattr(settings.config, "voice", None)
    if voice is None or voice.transcription.configured:
        return None
    return _unheard(attachment.kind, name, not_set_up().line)


def _unheard(kind: str, name: str, line: str) -> Any:
    """The stand-in for a file nobody heard (the model is told it was sent), and the person's line."""
    from ..content.file_content import FileContent, text_part

    word = "voice note" if kind == "voice" else f"audio file {name}"
    stand_in = text_part(f"[{word}: the person sent it, but it could not be heard]\n")
    return FileContent([stand_in], [stand_in], line, unused=True)


def register() -> bool:
    """Register :func:`voice_content` for voice notes and audio with the media pipeline, if it is there."""
    try:
        from ..content.file_content import register_converter
    except ImportError:
        return False
    for kind in VOICE_KINDS:
        register_converter(kind, voice_content, voice_gate)
    return True
