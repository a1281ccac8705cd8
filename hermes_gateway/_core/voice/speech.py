"""Voice replies: the final text spoken by ``voice.speech``, as an OGG/Opus voice note ``Media`` item.

The speech comes from an OpenAI-compatible ``/v1/audio/speech`` endpoint
(called through the ``openai`` SDK, asking for Opus) when
``voice.speech.base_url`` is set, else from the built-in eSpeak NG
(:mod:`.espeak`: the ``espeakng-loader`` wheel bundles the library and its
voices). Whatever comes back is made an OGG/Opus voice note with PyAV
(Telegram's ``sendVoice`` and WhatsApp's audio message take nothing else);
an answer that already is one is passed on unchanged. The item is
``Media(kind="audio", mime="audio/ogg", voice=True)``: the flag tells a
platform plugin to send it as a voice note rather than an audio file.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from ..config import VoiceConfig
from ..media import Media
from . import audio
from .endpoint import client_for, failure
from ..voice_results import VoiceProblem

log = logging.getLogger(__name__)

#: OpenAI's limit on one speech request's input; a longer reply is spoken up to a sentence end within it.
MAX_INPUT = 4096
FAILED = "🔇 I couldn't make a voice note of this reply just now."
_CODE_BLOCK = re.compile(r"```.*?```", re.DOTALL)
_MARKUP = re.compile(r"[*_`#>|]+")


def wants_voice_reply(config: VoiceConfig, answering_voice: bool) -> bool:
    """Whether this turn's reply gets a voice note: ``always``, or ``when_voice`` and the person spoke."""
    return config.reply == "always" or (config.reply == "when_voice" and answering_voice)


def sends_audio(hooks: Any) -> bool:
    """Whether a platform (its delivery hooks) sends audio attachments: elsewhere a voice note would only be a
    "📎 voice.ogg" line, so none is made."""
    limits = hooks.platform.media if hooks.implements.get("on_media") else None
    return limits is not None and "audio" in limits.kinds


def speakable(text: str) -> str:
    """The reply as it should be read aloud: code blocks and markdown symbols dropped, cut to :data:`MAX_INPUT`."""
    text = _MARKUP.sub("", _CODE_BLOCK.sub(" ", text))
    text = " ".join(text.split())
    if len(text) <= MAX_INPUT:
        return text
    cut = text[:MAX_INPUT]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    return cut[:end + 1] if end > MAX_INPUT // 2 else cut


async def speak(text: str, config: VoiceConfig) -> Media | VoiceProblem:
    """``text`` as a voice note (OGG/Opus ``Media``), or why not in one line."""
    endpoint = config.speech
    words = speakable(text)
    if not words:
        return VoiceProblem(FAILED)
    if not endpoint.configured:
        return await _speak_offline(words, endpoint.voice or "en-us")
    client = client_for(endpoint)
    try:
        response = await client.audio.speech.create(model=endpoint.model, voice=endpoint.voice or "alloy", input=words,
                                                    response_format="opus")
        data = await response.aread() if hasattr(response, "aread") else response.content
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.warning("voice.speech at %s failed: %s", endpoint.display_url, failure(exc))
        return VoiceProblem(FAILED)
    finally:
        await client.close()
    try:
        note = await asyncio.to_thread(audio.to_ogg_opus, data)
    except audio.AudioError as exc:
        log.warning("voice.speech at %s answered audio that could not be decoded: %s", endpoint.display_url, exc)
        return VoiceProblem(FAILED)
    return voice_note(note)


async def _speak_offline(words: str, voice: str) -> Media | VoiceProblem:
    """``words`` spoken by the built-in eSpeak NG, as a voice note."""
    from .espeak import SpeechUnavailable, synthesize

    def spoken() -> bytes:
        pcm, rate = synthesize(words, voice)
        return audio.encode_ogg_opus(pcm, rate)
    try:
        return voice_note(await asyncio.to_thread(spoken))
    except (SpeechUnavailable, audio.AudioError) as exc:
        log.warning("voice.speech (the built-in eSpeak NG) could not speak a reply: %s", exc)
        return VoiceProblem(FAILED)


def voice_note(data: bytes) -> Media:
    """An OGG/Opus voice note as the media item a platform plugin sends as one."""
    return Media(data=data, mime="audio/ogg", filename="voice.ogg", kind="audio", voice=True)
