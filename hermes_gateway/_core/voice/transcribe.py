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
import logging
from pathlib import Path

from ..config import VoiceConfig
from . import audio
from .endpoint import client_for, failure
from .results import Transcript, VoiceProblem

log = logging.getLogger(__name__)

#: Containers OpenAI's transcription API (and Groq's, and whisper servers') take as they are.
ACCEPTED_SUFFIXES = {".flac", ".mp3", ".mp4", ".mpeg", ".mpga", ".m4a", ".ogg", ".oga", ".opus", ".wav", ".webm"}
ACCEPTED_MIMES = {"audio/flac", "audio/mpeg", "audio/mp3", "audio/mp4", "audio/m4a", "audio/x-m4a", "audio/ogg",
                  "audio/opus", "audio/wav", "audio/x-wav", "audio/wave", "audio/webm", "video/mp4", "video/webm"}
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
        log.warning("a voice note was not transcribed: voice.transcription is not set (give voice.transcription."
                    "base_url an OpenAI-compatible endpoint: OpenAI, Groq or a local whisper server)")
        return VoiceProblem(NOT_SET_UP)
    try:
        seconds = await asyncio.to_thread(audio.probe_seconds, path, stop_after=config.max_seconds)
    except audio.AudioError as exc:
        log.info("a voice note could not be decoded: %s", exc)
        return VoiceProblem(NOT_AUDIO)
    if seconds > config.max_seconds:
        return VoiceProblem(TOO_LONG.format(limit=_minutes(config.max_seconds)))
    try:
        name, data, kind = await asyncio.to_thread(_upload_form, path, mime)
    except audio.AudioError:
        return VoiceProblem(NOT_AUDIO)
    client = client_for(endpoint)
    try:
        extra = {"language": endpoint.language} if endpoint.language else {}
        result = await client.audio.transcriptions.create(model=endpoint.model, file=(name, data, kind),
                                                          response_format="json", **extra)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the endpoint's failure is the operator's to fix; the person gets one line
        log.warning("voice.transcription at %s failed: %s", endpoint.display_url, failure(exc))
        return VoiceProblem(FAILED)
    finally:
        await client.close()
    text = " ".join(str(getattr(result, "text", result) or "").split())
    if not text:
        return VoiceProblem(SILENT)
    return Transcript(text, seconds)


def _upload_form(path: Path, mime: str | None) -> tuple[str, bytes, str]:
    """(file name, bytes, mime) to upload: the file as it is when the API takes it, else as OGG/Opus."""
    suffix = path.suffix.lower()
    plain_mime = (mime or "").split(";", 1)[0].strip().lower()
    size = path.stat().st_size
    if (suffix in ACCEPTED_SUFFIXES or plain_mime in ACCEPTED_MIMES) and size <= UPLOAD_LIMIT:
        name = path.name if suffix in ACCEPTED_SUFFIXES else "voice.ogg"
        return name, path.read_bytes(), plain_mime or "application/octet-stream"
    pcm = audio.decode_pcm(path, rate=16000)
    return "voice.ogg", audio.encode_ogg_opus(pcm, 16000, bitrate=24000), "audio/ogg"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 60 else f"{seconds:g} seconds"
