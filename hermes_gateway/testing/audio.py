"""A local server that speaks OpenAI's audio API, and real audio to send it: for voice tests of the core and plugins.

:class:`AudioApiServer` serves ``POST /v1/audio/transcriptions`` and
``POST /v1/audio/speech`` on 127.0.0.1 (a free port), as OpenAI, Groq or a
local whisper server would. Point ``voice.transcription.base_url`` (or
``voice.speech.base_url``) at :attr:`AudioApiServer.base_url`.

The transcription route parses the SDK's multipart upload as OpenAI does
(the file's name must carry an extension OpenAI accepts), decodes the
file with PyAV (so a test knows real audio arrived, and how long it was),
records it (:attr:`AudioApiServer.uploads`: the exact bytes, to compare
with what a platform's emulator served) and answers the words the test
chose for those bytes. The speech route answers a tone whose length grows
with the text, as OGG/Opus by default, so a test can decode what a person
received.

:func:`voice_note` makes an OGG/Opus voice note as Telegram and WhatsApp
record them (a tone; its pitch makes notes with different bytes).
"""

from __future__ import annotations

import hashlib
import io
import math
import wave
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from aiohttp import web

from .._core.voice import audio
from .local import serve_locally

#: The file extensions OpenAI's /v1/audio/transcriptions accepts (it goes by the upload's name).
OPENAI_EXTENSIONS = (".flac", ".mp3", ".mp4", ".mpeg", ".mpga", ".m4a", ".ogg", ".wav", ".webm")


def tone(seconds: float, rate: int = 16000, freq: float = 440.0) -> bytes:
    """16-bit mono PCM of a sine tone: real audio for any decoder (speech engines aside)."""
    n = int(seconds * rate)
    return b"".join(int(8000 * math.sin(2 * math.pi * freq * i / rate)).to_bytes(2, "little", signed=True)
                    for i in range(n))


def wav_bytes(pcm: bytes, rate: int = 16000) -> bytes:
    """``pcm`` (16-bit mono) as a WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm)
    return buffer.getvalue()


def voice_note(seconds: float = 1.5, freq: float = 440.0) -> bytes:
    """An OGG/Opus voice note, as Telegram and WhatsApp send them (a tone of ``freq`` Hz, ``seconds`` long)."""
    return audio.encode_ogg_opus(tone(seconds, freq=freq), 16000)


@dataclass(frozen=True)
class AudioUpload:
    """One file :class:`AudioApiServer` was asked to transcribe, as it arrived.

    ``data``: the uploaded bytes; ``seconds``: the audio's length (decoded);
    ``filename``, ``content_type``: of the multipart file field; ``model``,
    ``language``: the form fields; ``authorization``: the request's header.
    """

    filename: str
    content_type: str
    data: bytes
    seconds: float
    model: str | None = None
    language: str | None = None
    authorization: str | None = None


@dataclass
class AudioApiServer:
    """OpenAI's ``/v1/audio/transcriptions`` and ``/v1/audio/speech`` on 127.0.0.1 (``async with`` it).

    What a transcription answers: ``transcripts`` (the uploaded bytes → the
    words; also :meth:`hears`), else ``transcribe(data)`` when given, else
    no words. ``speech_format``: what ``/speech`` answers, ``"ogg"``
    (OGG/Opus, OpenAI's ``opus``), ``"wav"``, or ``"garbage"`` (bytes that
    are no audio). ``status`` other than 200: both routes fail with it.
    ``on_speech``: called as a speech request arrives (to look at a chat at
    that moment). Every upload is in :attr:`uploads`, every speech request
    body in :attr:`speech_requests`.
    """

    transcripts: Mapping[bytes, str] = field(default_factory=dict)
    transcribe: Callable[[bytes], str] | None = None
    speech_format: str = "ogg"
    status: int = 200
    on_speech: Callable[[], Any] | None = None
    uploads: list[AudioUpload] = field(default_factory=list)
    speech_requests: list[dict[str, Any]] = field(default_factory=list)
    _heard: dict[str, str] = field(default_factory=dict, repr=False)
    _runner: web.AppRunner | None = field(default=None, repr=False)

    def hears(self, data: bytes, words: str) -> None:
        """A transcription of exactly ``data`` answers ``words``."""
        self._heard[hashlib.sha256(data).hexdigest()] = words

    @property
    def base_url(self) -> str:
        """The API's base URL, ``http://127.0.0.1:PORT/v1``: what ``voice.transcription.base_url`` takes."""
        if self._runner is None:
            raise RuntimeError("the audio server is not running (use it with `async with`)")
        return f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"

    async def __aenter__(self) -> "AudioApiServer":
        for data, words in self.transcripts.items():
            self.hears(data, words)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_post("/v1/audio/speech", self._speak)
        self._runner = await serve_locally(app)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _words(self, data: bytes) -> str:
        words = self._heard.get(hashlib.sha256(data).hexdigest())
        if words is None and self.transcribe is not None:
            words = self.transcribe(data)
        return words or ""

    def _failure(self) -> web.Response:
        return web.json_response({"error": {"message": "down", "type": "server_error"}}, status=self.status)

    async def _transcribe(self, request: web.Request) -> web.Response:
        if self.status != 200:
            return self._failure()
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return _bad_request("file is required")
        if not upload.filename.lower().endswith(OPENAI_EXTENSIONS):
            return _bad_request("Invalid file format. Supported formats: " + str(list(OPENAI_EXTENSIONS)))
        data = upload.file.read()
        try:
            seconds = audio.probe_seconds(data)
        except audio.AudioError:
            return _bad_request("Invalid file format.")
        model, language = form.get("model"), form.get("language")
        self.uploads.append(AudioUpload(upload.filename, upload.content_type, data, seconds,
                                        model if isinstance(model, str) else None,
                                        language if isinstance(language, str) else None,
                                        request.headers.get("Authorization")))
        return web.json_response({"text": self._words(data)})

    async def _speak(self, request: web.Request) -> web.Response:
        if self.status != 200:
            return self._failure()
        try:
            body = await request.json()
            text = str(body["input"])
        except (ValueError, KeyError, TypeError):
            return _bad_request("input is required")
        self.speech_requests.append(body)
        if self.on_speech is not None:
            self.on_speech()
        pcm = tone(0.05 * len(text.split()) + 0.3)
        if self.speech_format == "garbage":
            return web.Response(body=b"not audio at all" * 10, content_type="audio/ogg")
        if self.speech_format == "wav":
            return web.Response(body=wav_bytes(pcm), content_type="audio/wav")
        return web.Response(body=audio.encode_ogg_opus(pcm, 16000), content_type="audio/ogg")


def _bad_request(message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=400)
