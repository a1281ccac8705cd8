"""The kit's audio API server answers the openai SDK as OpenAI does, and records what it was sent."""

from __future__ import annotations

import io

import pytest
from openai import AsyncOpenAI, BadRequestError, InternalServerError

from hermes_gateway.testing import AudioApiServer, AudioUpload, voice_note


def client(server: AudioApiServer) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)


async def transcribe(server: AudioApiServer, data: bytes, name: str = "note.ogg") -> str:
    async with client(server) as sdk:
        result = await sdk.audio.transcriptions.create(model="whisper-1", file=(name, io.BytesIO(data), "audio/ogg"),
                                                       language="en")
    return result.text


async def test_a_mapping_says_what_exact_bytes_are_heard_and_each_upload_is_recorded():
    note, other = voice_note(0.6), voice_note(0.6, freq=660)
    assert note != other
    async with AudioApiServer(transcripts={note: "call mum"}) as server:
        assert await transcribe(server, note) == "call mum"
        assert await transcribe(server, other) == "", "bytes nobody registered: no words"
    first, second = server.uploads
    assert first == AudioUpload("note.ogg", "audio/ogg", note, first.seconds, "whisper-1", "en", "Bearer sk-test")
    assert 0.55 <= first.seconds <= 0.65 and second.data == other


async def test_a_callable_hears_what_nothing_registered():
    note = voice_note(0.4)
    async with AudioApiServer(transcribe=lambda data: f"{len(data)} bytes") as server:
        server.hears(b"unused", "never")
        assert await transcribe(server, note) == f"{len(note)} bytes"


async def test_a_name_openai_refuses_or_bytes_that_are_not_audio_are_a_400_and_not_recorded():
    async with AudioApiServer() as server:
        with pytest.raises(BadRequestError, match="Invalid file format"):
            await transcribe(server, voice_note(0.3), name="file_7.oga")
        with pytest.raises(BadRequestError, match="Invalid file format"):
            await transcribe(server, b"this is no audio at all")
    assert server.uploads == []


async def test_speech_answers_ogg_opus_that_grows_with_the_text():
    av = pytest.importorskip("av")
    async with AudioApiServer() as server, client(server) as sdk:
        short = await sdk.audio.speech.create(model="tts-1", voice="alloy", input="hi", response_format="opus")
        long = await sdk.audio.speech.create(model="tts-1", voice="alloy", input="hi " * 40, response_format="opus")
    lengths = []
    for answer in (short, long):
        with av.open(io.BytesIO(answer.content)) as container:
            stream = container.streams.audio[0]
            assert stream.codec_context.name == "opus"
            lengths.append(sum(frame.samples for frame in container.decode(stream)) / 48000)
    assert 0.3 <= lengths[0] < lengths[1]
    assert [r["input"] for r in server.speech_requests] == ["hi", "hi " * 40]


async def test_a_failing_server_fails_both_routes():
    async with AudioApiServer(status=503) as server, client(server) as sdk:
        with pytest.raises(InternalServerError):
            await sdk.audio.speech.create(model="tts-1", voice="alloy", input="hi")
        with pytest.raises(InternalServerError):
            await transcribe(server, voice_note(0.3))


def test_the_base_url_needs_a_running_server():
    with pytest.raises(RuntimeError, match="async with"):
        _ = AudioApiServer().base_url
