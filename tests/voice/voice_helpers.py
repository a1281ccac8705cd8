"""A local server that speaks OpenAI's audio API (transcriptions and speech), and audio made for the tests.

The transcription route parses the SDK's multipart upload as OpenAI does,
decodes the file it got with PyAV (so a test knows the real audio arrived,
and how long it was) and answers the transcript the test registered for
those exact bytes. The speech route answers the text it was sent as a tone
whose length grows with the text, in the format the test chooses, so a
test can decode what the person received.
"""

from __future__ import annotations

import hashlib
import io
import math
import wave
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from hermes_gateway._core.voice import audio
from hermes_gateway import Attachment, Incoming, MediaLimits
from hermes_gateway.testing import ReferencePlatform, serve_locally


#: The file extensions OpenAI's /v1/audio/transcriptions accepts.
OPENAI_EXTENSIONS = (".flac", ".mp3", ".mp4", ".mpeg", ".mpga", ".m4a", ".ogg", ".wav", ".webm")


def tone(seconds: float, rate: int = 16000, freq: float = 440.0) -> bytes:
    """16-bit mono PCM: a sine tone (speech engines aside, any real audio will do)."""
    n = int(seconds * rate)
    return b"".join(int(8000 * math.sin(2 * math.pi * freq * i / rate)).to_bytes(2, "little", signed=True)
                    for i in range(n))


def wav_bytes(pcm: bytes, rate: int = 16000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm)
    return buffer.getvalue()


def voice_note(seconds: float = 1.5) -> bytes:
    """An OGG/Opus voice note, as Telegram and WhatsApp send them."""
    return audio.encode_ogg_opus(tone(seconds), 16000)


@dataclass
class AudioServer:
    """OpenAI's ``/v1/audio/transcriptions`` and ``/v1/audio/speech`` on 127.0.0.1."""

    transcripts: dict[str, str] = field(default_factory=dict)  # sha256 of the uploaded bytes -> the words
    uploads: list[dict[str, Any]] = field(default_factory=list)
    speech_requests: list[dict[str, Any]] = field(default_factory=list)
    speech_format: str = "wav"  # what /speech answers: wav, or ogg (OGG/Opus as OpenAI's "opus")
    status: int = 200
    on_speech: Any = None  # called when a speech request arrives (to look at the chat at that moment)
    runner: Any = None

    def hears(self, data: bytes, words: str) -> None:
        self.transcripts[hashlib.sha256(data).hexdigest()] = words

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.runner.addresses[0][1]}/v1"

    async def __aenter__(self) -> "AudioServer":
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_post("/v1/audio/speech", self._speak)
        self.runner = await serve_locally(app)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()

    async def _transcribe(self, request: web.Request) -> web.Response:
        if self.status != 200:
            return web.json_response({"error": {"message": "down", "type": "server_error"}}, status=self.status)
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return web.json_response({"error": {"message": "file is required"}}, status=400)
        if not upload.filename.lower().endswith(OPENAI_EXTENSIONS):  # OpenAI goes by the name, as here
            return web.json_response({"error": {"message": "Invalid file format. Supported formats: "
                                                           + str(list(OPENAI_EXTENSIONS))}}, status=400)
        data = upload.file.read()
        try:
            seconds = audio.probe_seconds(data)
        except audio.AudioError:
            return web.json_response({"error": {"message": "Invalid file format."}}, status=400)
        self.uploads.append({"filename": upload.filename, "content_type": upload.content_type, "bytes": data,
                             "seconds": seconds, "model": form.get("model"), "language": form.get("language"),
                             "authorization": request.headers.get("Authorization")})
        text = self.transcripts.get(hashlib.sha256(data).hexdigest(), "")
        return web.json_response({"text": text})

    async def _speak(self, request: web.Request) -> web.Response:
        if self.status != 200:
            return web.json_response({"error": {"message": "down", "type": "server_error"}}, status=self.status)
        body = await request.json()
        self.speech_requests.append(body)
        if self.on_speech is not None:
            self.on_speech()
        pcm = tone(0.05 * len(body["input"].split()) + 0.3)
        if self.speech_format == "ogg":
            return web.Response(body=audio.encode_ogg_opus(pcm, 16000), content_type="audio/ogg")
        if self.speech_format == "garbage":
            return web.Response(body=b"not audio at all" * 10, content_type="audio/ogg")
        return web.Response(body=wav_bytes(pcm), content_type="audio/wav")


def gateway_on(ref: Any, media_dir: Any, **sections: Any) -> Any:
    """A gateway on the reference platform with the demo model (fast), plus ``sections``.

    Hermetic: its media directory and its conversation store are in ``media_dir`` (a test's tmp_path).
    """
    from hermes_gateway._core.config import parse_config
    from hermes_gateway._core.gateway import Gateway
    from hermes_gateway._core.plugins import make_plugins

    data: dict[str, Any] = {"model": {"demo": {"tokens_per_second": 0}},
                            "platforms": {"reference": {"enabled": True}},
                            "media": {"directory": str(media_dir)}, "store": {"path": f"{media_dir}/state.db"}}
    data.update(sections)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    return Gateway(parse_config(data, env={}), plugins)


class Served:
    """An attachment's bytes as the platform would stream them, counting downloads (to assert none happened)."""

    def __init__(self, data: bytes, chunk: int = 4096) -> None:
        self.data = data
        self.chunk = chunk
        self.downloads = 0

    async def fetch(self):
        self.downloads += 1
        for i in range(0, len(self.data), self.chunk):
            yield self.data[i:i + self.chunk]


# -- a person in chat 1 of the reference platform ----------------------------------------------------------

def shown(ref: Any) -> str:
    """The chat's text, top to bottom, as the person reads it."""
    return "\n\n".join(ref.chat("1").screen)


def reference() -> ReferencePlatform:
    """The reference platform, taking attachments of every kind (a voice note is an audio attachment)."""
    return ReferencePlatform("reference", media=MediaLimits())


def said(gateway: Any, *attachments: Any, text: str = "", update: str = "u1", sender: str = "person-1"):
    """Person-1 writes into chat 1; returns the future of the reply (not awaited: like a webhook)."""
    return gateway.receive(Incoming("reference", "1", text, update_id=update, message_id=update, sender_id=sender,
                                    attachments=attachments))


def voice(served: Served, **kw: Any) -> Attachment:
    """A voice note the platform streams from ``served``."""
    kw.setdefault("size", len(served.data))
    return Attachment("voice", served.fetch, mime="audio/ogg", filename="file_7.oga", **kw)


def transcription(server: AudioServer, **more: Any) -> dict:
    """The ``voice`` section: transcription by ``server``, plus ``more`` keys."""
    return {"transcription": {"base_url": server.base_url, "model": "whisper-1"}, **more}
