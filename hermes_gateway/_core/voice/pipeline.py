"""Voice in the inbound media pipeline (issue 22 items 1–2): the converter for ``voice`` and ``audio`` files.

The media pipeline (``_core/inbound/file_content.py``, built in parallel)
downloads each file within ``media.inbound_max_bytes`` and hands it to the
converter registered for its kind. :func:`voice_content` is that converter
for voice notes and audio files: the transcript as the person's words
(marked spoken), the quoted transcript before the reply with
``voice.show_transcript``, or one line when it could not be heard.
:func:`register` installs it; it returns False where the pipeline is not
present, and :mod:`.inbound` does the download itself (the minimal voice
step in ``answer_turn``).
"""

from __future__ import annotations

from typing import Any

from .results import Transcript
from .transcribe import transcribe

#: The attachment kinds heard (``video`` is not: a video is watched, not heard).
VOICE_KINDS = ("voice", "audio")


async def voice_content(received: Any, settings: Any) -> Any:
    """A downloaded voice note or audio file as content for the model (``FileContent``), by ``voice.transcription``."""
    from ..inbound.file_content import FileContent, text_part

    voice = settings.config.voice
    result = await transcribe(received.path, received.attachment.mime, voice)
    if isinstance(result, Transcript):
        part = text_part(result.for_model() + "\n")
        return FileContent([part], [part], result.quoted() if voice.show_transcript else None)
    word = "voice note" if received.attachment.kind == "voice" else f"audio file {received.name}"
    stand_in = text_part(f"[{word}: the person sent it, but it could not be heard]\n")
    return FileContent([stand_in], [stand_in], result.line, unused=True)


def register() -> bool:
    """Register :func:`voice_content` for voice notes and audio with the media pipeline, if it is there."""
    try:
        from ..inbound.file_content import register_converter
    except ImportError:
        return False
    for kind in VOICE_KINDS:
        register_converter(kind, voice_content)
    return True
