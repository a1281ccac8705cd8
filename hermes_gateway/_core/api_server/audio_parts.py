"""``input_audio`` parts on the API: checked, then passed to an upstream that hears audio or transcribed first.

A Chat Completions client may send ``{"type": "input_audio", "input_audio":
{"data": BASE64, "format": "wav"}}``. With ``model.audio: true`` and a
Chat Completions upstream the part goes on as it is. Otherwise (the default,
the demo model, a Responses upstream, which has no audio part) each part
becomes a text part with its transcript from ``voice.transcription``, marked
as spoken (:data:`~hermes_gateway._core.voice_results.TRANSCRIPT_LABEL`), so
the demo model can say what it heard. What cannot be heard is a 400 naming
the part (not set up, not audio, too long), or a 502 when the transcription
endpoint fails.
"""

from __future__ import annotations

import base64
import binascii
import os
import tempfile
from pathlib import Path
from typing import Any, TypeGuard

from ..config import Config
from ..http.errors import ApiError, bad_request

#: The formats a client may declare (OpenAI's wav and mp3, and what voice notes are).
FORMATS = {"wav": "audio/wav", "mp3": "audio/mpeg", "ogg": "audio/ogg", "opus": "audio/ogg", "flac": "audio/flac",
           "m4a": "audio/mp4", "webm": "audio/webm"}


def audio_part(value: Any, at: str) -> dict[str, Any]:
    """One ``input_audio`` part, checked: base64 ``data`` and a known ``format``."""
    if not isinstance(value, dict):
        raise bad_request(f"{at}.input_audio must be an object with data (base64) and format.", f"{at}.input_audio")
    data, fmt = value.get("data"), value.get("format")
    if fmt not in FORMATS:
        raise bad_request(f"{at}.input_audio.format must be one of {', '.join(FORMATS)}.", f"{at}.input_audio.format")
    if not isinstance(data, str) or not data:
        raise bad_request(f"{at}.input_audio.data must be the audio as a base64 string.", f"{at}.input_audio.data")
    return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}


def passes_audio_through(config: Config) -> bool:
    """Whether the upstream takes ``input_audio`` parts itself (``model.audio`` on a Chat Completions model)."""
    model = config.model
    return model.audio and not model.is_demo and model.endpoint.api_mode == "chat_completions"


def has_audio(content: Any) -> TypeGuard[list[Any]]:
    return isinstance(content, list) and any(p.get("type") == "input_audio" for p in content)


async def hear_audio_parts(messages: list[Any], config: Config, where: str = "messages", first: int = 0) -> None:
    """Replace, in place, each ``input_audio`` part of ``messages`` (dicts with a ``content``) by its transcript.

    ``first``: the request's index of ``messages[0]`` (for the param an error names)."""
    for i, message in enumerate(messages, first):
        content = message.get("content") if isinstance(message, dict) else None
        if not has_audio(content):
            continue
        for j, part in enumerate(content):
            if part.get("type") == "input_audio":
                content[j] = {"type": "text", "text": await _transcript(part["input_audio"], config,
                                                                        f"{where}[{i}].content[{j}]")}


async def hear_content(content: Any, config: Config, where: str, index: int) -> Any:
    """The new message's content (``where[index]`` in the request) with its audio parts heard, changed in place."""
    if has_audio(content):
        await hear_audio_parts([{"content": content}], config, where, index)
    return content


async def _transcript(part: dict[str, Any], config: Config, at: str) -> str:
    from ..voice_results import Transcript
    from ..voice.transcribe import FAILED, transcribe

    if not config.voice.transcription.configured:
        raise bad_request(f"{at} is audio, but this gateway cannot hear it: voice.transcription is not set and the "
                          "model does not take audio (model.audio).", at, "audio_not_supported")
    try:
        data = base64.b64decode(part["data"], validate=True)
    except (binascii.Error, ValueError):
        raise bad_request(f"{at}.input_audio.data is not valid base64.", f"{at}.input_audio.data") from None
    directory = config.media.path() / "inbound"
    directory.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="api-audio-", suffix="." + part["format"], dir=directory)
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        del data
        result = await transcribe(path, FORMATS[part["format"]], config.voice)
    finally:
        path.unlink(missing_ok=True)
    if isinstance(result, Transcript):
        return result.for_model()
    if result.line == FAILED:
        raise ApiError(502, f"{at} could not be transcribed: the transcription endpoint failed; try again.",
                       type="server_error", param=at, code="transcription_failed")
    raise bad_request(f"{at}: {_plain(result.line)}", at, "invalid_audio")


def _plain(line: str) -> str:
    """The person's line without its emoji, for an API error message."""
    return line.lstrip("🎤 ").strip()
