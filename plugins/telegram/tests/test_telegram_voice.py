"""Voice notes on Telegram, end to end: recorded in the app, transcribed by the endpoint, answered in the chat.

The Bot API emulator serves the voice note (``getFile``, then the file
download); the gateway transcribes it at the kit's OpenAI-compatible audio
server (``voice.transcription.base_url``), which records the exact bytes it
was sent; the demo model answers with the transcript it was given, and the
answer lands on the emulator's chat screen.
"""

from __future__ import annotations

import io
import logging

import pytest
from telegram_test_support import FAST_LIMITS, config

from hermes_gateway.testing import AudioApiServer, TestGateway, eventually, voice_note
from hermes_telegram import plugin

WORDS = "remind me to water the plants on friday"


def gateway(api, tmp_path, **voice) -> TestGateway:
    data = {**config(api.base_url), "media": {"directory": str(tmp_path / "media")}, "voice": voice}
    return TestGateway(data, plugin, limits=FAST_LIMITS, shutdown_grace=0.5)


def answered(api, chat: int, count: int = 1):
    """Wait until ``count`` messages are on the chat's screen in their final state (no cursor)."""
    return eventually(lambda: len(api.screen(chat)) == count and not api.screen(chat)[-1].endswith("▌"),
                      lambda: api.chat(chat).messages, timeout=30)


@pytest.mark.parametrize("show_transcript", [False, True], ids=["answer_only", "transcript_quoted_first"])
async def test_a_voice_note_is_transcribed_and_the_model_answers_its_words(api, tmp_path, show_transcript):
    note = voice_note(1.2, freq=523.0)
    async with AudioApiServer(transcripts={note: WORDS}) as server:
        async with gateway(api, tmp_path, transcription={"base_url": server.base_url, "model": "whisper-1"},
                           show_transcript=show_transcript):
            await api.push_voice(42, note, duration=1)
            await answered(api, 42)
    [stored] = api.files.files.values()
    assert stored.data == note and api.files.downloaded == [stored.file_path], "downloaded once"
    [upload] = server.uploads
    assert upload.data == stored.data, "the endpoint got the very bytes Telegram served"
    assert upload.model == "whisper-1" and upload.filename.endswith(".ogg")
    reply = f'I heard: "{WORDS}".'
    assert api.screen(42) == ([f"🎤 {WORDS}\n\n{reply}"] if show_transcript else [reply])
    if show_transcript:
        assert ("blockquote", f"🎤 {WORDS}") in api.chat(42).formatted(0), "the transcript is shown quoted, first"


async def test_without_transcription_a_voice_note_is_one_line_no_turn_no_download(api, tmp_path, caplog):
    async with gateway(api, tmp_path):
        with caplog.at_level(logging.WARNING):
            await api.push_voice(42, voice_note(0.8))
            await answered(api, 42)
        await api.push_message(42, "echo: and in writing")
        await answered(api, 42, 2)
    line, after = api.screen(42)
    assert "voice transcription is not set up" in line and "\n" not in line
    assert after == "and in writing", "nothing of a model turn came between the line and the next reply"
    assert api.files.lookups == [] and api.files.downloads == [], "nothing could hear it: never fetched"
    assert any("voice.transcription" in r.getMessage() for r in caplog.records), "the operator is told the key"


async def test_a_voice_note_is_answered_with_the_text_then_a_voice_note_that_decodes(api, tmp_path):
    """``voice.reply: when_voice``: the answer streams as text, then its spoken form follows through sendVoice."""
    av = pytest.importorskip("av", reason="PyAV decodes the voice note")
    note = voice_note(1.0, freq=392.0)
    async with AudioApiServer(transcripts={note: WORDS}) as server:
        async with gateway(api, tmp_path, transcription={"base_url": server.base_url}, reply="when_voice",
                           speech={"base_url": server.base_url, "voice": "alloy"}):
            await api.push_voice(42, note)
            await eventually(lambda: len(api.chat(42).uploads) == 1, lambda: api.chat(42).calls, timeout=30)
    reply = f'I heard: "{WORDS}".'
    assert api.screen(42)[0] == reply, "the text comes first"
    assert [r["input"] for r in server.speech_requests] == [reply], "the final text is what is spoken"
    [spoken] = api.chat(42).uploads
    assert spoken.kind == "voice" and [c.method for c in api.chat(42).calls if c.method.startswith("send")][-1] \
        == "sendVoice"
    with av.open(io.BytesIO(spoken.data)) as container:
        stream = container.streams.audio[0]
        assert stream.codec_context.name == "opus"
        assert sum(frame.samples for frame in container.decode(stream)) / 48000 > 0.3
