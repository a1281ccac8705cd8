"""Voice notes and audio files to text, by ``voice.transcription``: the one function the inbound pipeline calls.

The engine is an OpenAI-compatible ``/v1/audio/transcriptions`` endpoint
(OpenAI, Groq, a local whisper server), called through the ``openai`` SDK.
No embedded offline engine is the default: the only one whose wheel carries
its model (pocketsphinx 5) got 44% of words wrong on synthesized speech,
over the 30% bar (bench/README.md). Without an endpoint the person gets one
clear line and the operator one log line naming ``voice.transcription``.

Before anything is sent, the file is decoded once with PyAV: a corrupt file
or one that is not audio is a clear line, not an upstream error, and a
file longer than ``voice.max_seconds`` is refused. Formats the API does not
take (AMR, Opus in CAF, ...) are re-encoded as OGG/Opus.
"""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

from ..config import VoiceConfig
from . import audio
from .endpoint import client_for, failure
from ..voice_results import Transcript, VoiceProblem

log = logging.getLogger(__name__)

#: The file names OpenAI's transcription API (and Groq's) accept; it goes by the name's extension.
ACCEPTED_SUFFIXES = {".flac", ".mp3", ".mp4", ".mpeg", ".mpga", ".m4a", ".ogg", ".wav", ".webm"}
#: Other names and mime types of those same containers: sent as they are, under the accepted extension.
SUFFIX_FOR = {".oga": ".ogg", ".opus": ".ogg", ".wave": ".wav", ".aac": ".m4a",
              "audio/ogg": ".ogg", "audio/opus": ".ogg", "audio/mpeg": ".mp3", "audio/mp3": ".mp3",
              "audio/mp4": ".m4a", "audio/m4a": ".m4a", "audio/x-m4a": ".m4a", "audio/wav": ".wav",
              "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/webm": ".webm", "audio/flac": ".flac",
              "video/mp4": ".mp4", "video/webm": ".webm"}
#: OpenAI's upload limit for one transcription; larger accepted files are re-encoded (Opus is small).
UPLOAD_LIMIT = 25 * 1024 * 1024

NOT_SET_UP = ("🎤 I can't listen to voice notes here yet (voice transcription is not set up), "
              "so please type your message.")
NOT_AUDIO = "🎤 I couldn't play that audio file (it seems damaged or isn't audio), so I didn't hear it."
TOO_LONG = "🎤 That recording is longer than the {limit} I can listen to, so I didn't transcribe it."
FAILED = "🎤 I couldn't transcribe your voice note just now; please try again or type your message."
SILENT = "🎤 I couldn't make out any words in your voice note."


async def transcribe(path: Path, mime: str | None, config: VoiceConfig) -> Transcript | VoiceProblem:
    """The words in the audio file at ``path`` (already downloaded), or why there are none, in one line."""
    endpoint = config.transcription
    if not endpoint.configured:
        return not_set_up()
    try:
        seconds = await asyncio.to_thread(audio.probe_seconds, path, stop_after=config.max_seconds)
    except audio.AudioError as exc:
        log.info("a voice note could not be decoded: %s", exc)
        return VoiceProblem(NOT_AUDIO)
    if seconds > config.max_seconds:
        return VoiceProblem(TOO_LONG.format(limit=_minutes(config.max_seconds)))
    try:
        name, source, kind = await asyncio.to_thread(_upload_form, path, mime)
    except audio.AudioError:
        return VoiceProblem(NOT_AUDIO)
    client = client_for(endpoint)
    upload = open(source, "rb") if isinstance(source, Path) else io.BytesIO(source)  # streamed, not read whole
    try:
        extra = {"language": endpoint.language} if endpoint.language else {}
        result = await client.audio.transcriptions.create(model=endpoint.model, file=(name, upload, kind),
                                                          response_format="json", **extra)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the endpoint's failure is the operator's to fix; the person gets one line
        log.warning("voice.transcription at %s failed: %s", endpoint.display_url, failure(exc))
        return VoiceProblem(FAILED)
    finally:
        upload.close()
        await client.close()
    text = " ".join(str(getattr(result, "text", result) or "").split())
    if not text:
        return VoiceProblem(SILENT)
    return Transcript(text, seconds)


def not_set_up() -> VoiceProblem:
    """No ``voice.transcription``: the operator's log line naming the key, and the person's line."""
    log.warning("a voice note was not transcribed: voice.transcription is not set (give voice.transcription."
                "base_url an OpenAI-compatible endpoint: OpenAI, Groq or a local whisper server)")
    return VoiceProblem(NOT_SET_UP)


def _upload_form(path: Path, mime: str | None) -> tuple[str, Path | bytes, str]:
    """(file name, what to upload, mime): the file itself when the API takes it, else its audio as OGG/Opus bytes."""
    suffix = path.suffix.lower()
    plain_mime = (mime or "").split(";", 1)[0].strip().lower()
    accepted = suffix if suffix in ACCEPTED_SUFFIXES else SUFFIX_FOR.get(suffix) or SUFFIX_FOR.get(plain_mime)
    if accepted and path.stat().st_size <= UPLOAD_LIMIT:  # Telegram's file_12.oga goes as file_12.ogg
        return path.stem + accepted, path, plain_mime or "application/octet-stream"
    pcm = audio.decode_pcm(path, rate=16000)
    return "voice.ogg", audio.encode_ogg_opus(pcm, 16000, bitrate=24000), "audio/ogg"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 60 else f"{seconds:g} seconds"
