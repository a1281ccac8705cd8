"""Voice replies: the final text spoken by ``voice.speech``, as an OGG/Opus voice note ``Media`` item.

The speech comes from an OpenAI-compatible ``/v1/audio/speech`` endpoint
(called through the ``openai`` SDK, asking for Opus). Whatever it sends back
is made an OGG/Opus voice note with PyAV (Telegram's ``sendVoice`` and
WhatsApp's audio message take nothing else); an answer that already is one
is passed on unchanged. The item is ``Media(kind="audio", mime="audio/ogg",
voice=True)``: the flag tells a platform plugin to send it as a voice note
rather than an audio file. No pip package bundles a speech engine the core
could default to, so ``voice.reply`` without ``voice.speech.base_url`` is a
config error (:mod:`hermes_gateway._core.config`).
"""

from __future__ import annotations

import asyncio
import logging
import re

from ..config import VoiceConfig
from ..media import Media
from . import audio
from .endpoint import client_for, failure
from .results import VoiceProblem

log = logging.getLogger(__name__)

#: OpenAI's limit on one speech request's input; a longer reply is spoken up to a sentence end within it.
MAX_INPUT = 4096
FAILED = "🔇 I couldn't make a voice note of this reply just now."
_CODE_BLOCK = re.compile(r"```.*?```", re.DOTALL)
_MARKUP = re.compile(r"[*_`#>|]+")


def wants_voice_reply(config: VoiceConfig, answering_voice: bool) -> bool:
    """Whether this turn's reply gets a voice note: ``always``, or ``when_voice`` and the person spoke."""
    return config.reply == "always" or (config.reply == "when_voice" and answering_voice)


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
    if not endpoint.configured or not words:
        return VoiceProblem(FAILED)
    client = client_for(endpoint)
    try:
        response = await client.audio.speech.create(model=endpoint.model, voice=endpoint.voice, input=words,
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
    return Media(data=note, mime="audio/ogg", filename="voice.ogg", kind="audio", voice=True)
