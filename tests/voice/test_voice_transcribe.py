"""``transcribe``: a downloaded audio file to words, through an OpenAI-compatible endpoint on 127.0.0.1, or one clear line."""

from __future__ import annotations

import logging

from hermes_gateway._core.config import VoiceConfig, VoiceEndpoint
from hermes_gateway._core.voice import transcribe as module
from hermes_gateway._core.voice_results import Transcript, VoiceProblem
from hermes_gateway._core.voice.transcribe import transcribe
from hermes_gateway.testing.audio import AudioApiServer, tone, voice_note, wav_bytes

KEY = "sk-transcribe-7f3a9c"


def config(server: AudioApiServer | None, **kw) -> VoiceConfig:
    endpoint = VoiceEndpoint(base_url=server.base_url, api_key=KEY, model="whisper-large-v3", **kw) if server \
        else VoiceEndpoint(model="whisper-1")
    return VoiceConfig(transcription=endpoint)


async def test_the_voice_note_goes_to_the_endpoint_as_it_is_and_its_words_come_back(tmp_path):
    note = voice_note(1.5)
    path = tmp_path / "file_12.oga"
    path.write_bytes(note)
    async with AudioApiServer() as server:
        server.hears(note, "  please remind me\n to call my mother ")
        result = await transcribe(path, "audio/ogg", config(server, language="en"))
    assert result == Transcript("please remind me to call my mother", result.seconds)
    assert abs(result.seconds - 1.5) < 0.1
    [upload] = server.uploads
    assert upload.data == note, "the very bytes the person sent"
    assert (upload.filename, upload.model, upload.language) == ("file_12.ogg", "whisper-large-v3", "en"), \
        "named with an extension OpenAI accepts (it refuses .oga, Telegram's name for voice notes)"
    assert upload.authorization == f"Bearer {KEY}"


async def test_a_format_the_api_does_not_take_is_sent_as_ogg_opus(tmp_path):
    path = tmp_path / "recording.bin"
    path.write_bytes(wav_bytes(tone(1.2)))
    async with AudioApiServer() as server:
        result = await transcribe(path, "application/octet-stream", config(server))
    [upload] = server.uploads
    assert upload.filename == "voice.ogg" and upload.data[:4] == b"OggS"
    assert abs(upload.seconds - 1.2) < 0.1
    assert result == VoiceProblem(module.SILENT), "the server heard no words in a tone"


async def test_without_an_endpoint_the_person_gets_a_line_and_the_operator_a_log_line_naming_the_key(tmp_path, caplog):
    path = tmp_path / "v.ogg"
    path.write_bytes(voice_note())
    with caplog.at_level(logging.WARNING, logger=module.__name__):
        result = await transcribe(path, "audio/ogg", config(None))
    assert result == VoiceProblem(module.NOT_SET_UP)
    assert len(result.line.splitlines()) == 1
    [record] = caplog.records
    assert "voice.transcription" in record.getMessage()


async def test_a_corrupt_file_is_a_line_and_never_reaches_the_endpoint(tmp_path):
    path = tmp_path / "v.ogg"
    path.write_bytes(b"OggS" + b"\x13" * 5000)
    async with AudioApiServer() as server:
        result = await transcribe(path, "audio/ogg", config(server))
    assert result == VoiceProblem(module.NOT_AUDIO) and server.uploads == []


async def test_a_recording_over_max_seconds_is_refused_before_upload(tmp_path):
    path = tmp_path / "v.ogg"
    path.write_bytes(voice_note(3.0))
    async with AudioApiServer() as server:
        limited = VoiceConfig(transcription=config(server).transcription, max_seconds=2)
        result = await transcribe(path, "audio/ogg", limited)
    assert result == VoiceProblem(module.TOO_LONG.format(limit="2 seconds")) and server.uploads == []


async def test_an_endpoint_that_fails_is_a_line_for_the_person_and_a_log_line_without_the_key(tmp_path, caplog):
    path = tmp_path / "v.ogg"
    path.write_bytes(voice_note())
    async with AudioApiServer(status=503) as server:
        with caplog.at_level(logging.WARNING, logger=module.__name__):
            result = await transcribe(path, "audio/ogg", config(server))
    assert result == VoiceProblem(module.FAILED)
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "voice.transcription" in logged and "503" in logged and KEY not in logged
