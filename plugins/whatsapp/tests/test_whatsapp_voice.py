"""Voice notes on WhatsApp, end to end: recorded in the app, transcribed by the endpoint, answered in the chat.

Meta posts a signed webhook naming the voice note's media id; the plugin
looks it up and downloads it with the access token from the emulator's
media server; the gateway transcribes it at the kit's OpenAI-compatible
audio server (``voice.transcription.base_url``), which records the exact
bytes it was sent; the demo model answers with the transcript, and the
answer lands on the user's phone in the emulator.
"""

from __future__ import annotations

import io
import logging

import pytest
from whatsapp_test_support import USER, config, webhook_url

from hermes_gateway.testing import AudioApiServer, TestGateway, eventually, voice_note
from hermes_whatsapp import plugin

WORDS = "book a table for two at eight tonight"


def gateway(meta, tmp_path, **voice) -> TestGateway:
    data = {**config(meta), "media": {"directory": str(tmp_path / "media")}, "voice": voice}
    return TestGateway(data, plugin, shutdown_grace=1.0)


async def answered(meta, count: int = 1) -> None:
    await eventually(lambda: len(meta.screen(USER)) == count, lambda: meta.user(USER).calls, timeout=30)


@pytest.mark.parametrize("show_transcript", [False, True], ids=["answer_only", "transcript_quoted_first"])
async def test_a_voice_note_is_transcribed_and_the_model_answers_its_words(meta, tmp_path, show_transcript):
    note = voice_note(1.2, freq=587.0)
    async with AudioApiServer(transcripts={note: WORDS}) as server:
        async with gateway(meta, tmp_path, transcription={"base_url": server.base_url, "model": "whisper-1"},
                           show_transcript=show_transcript) as running:
            payload = meta.media_message(USER, "audio", note, voice=True)
            assert await meta.deliver(webhook_url(running), payload) == 200
            await answered(meta)
    [stored] = meta.files.files.values()
    assert stored.data == note and meta.files.downloaded == [stored.media_id], "downloaded once"
    [upload] = server.uploads
    assert upload.data == stored.data, "the endpoint got the very bytes WhatsApp served"
    assert upload.model == "whisper-1" and upload.filename.endswith(".ogg")
    reply = f'I heard: "{WORDS}".'
    assert meta.screen(USER) == ([f"> 🎤 {WORDS}\n\n{reply}"] if show_transcript else [reply]), \
        "WhatsApp shows a line starting with '> ' as a quote, before the reply"


async def test_without_transcription_a_voice_note_is_one_line_no_turn_no_download(meta, tmp_path, caplog):
    async with gateway(meta, tmp_path) as running:
        with caplog.at_level(logging.WARNING):
            assert await meta.deliver(webhook_url(running), meta.media_message(USER, "audio", voice_note(0.8))) == 200
            await answered(meta)
        assert await meta.deliver(webhook_url(running), meta.text_message(USER, "echo: and in writing")) == 200
        await answered(meta, 2)
    line, after = meta.screen(USER)
    assert "voice transcription is not set up" in line and "\n" not in line
    assert after == "and in writing", "nothing of a model turn came between the line and the next reply"
    assert meta.files.lookups == [] and meta.files.downloads == [], "nothing could hear it: never fetched"
    assert any("voice.transcription" in r.getMessage() for r in caplog.records), "the operator is told the key"


async def test_a_voice_note_is_answered_with_the_text_then_a_voice_note_that_decodes(meta, tmp_path):
    """``voice.reply: when_voice``: the answer as text, then its spoken form as an OGG/Opus audio message."""
    av = pytest.importorskip("av", reason="PyAV decodes the voice note")
    note = voice_note(1.0, freq=392.0)
    async with AudioApiServer(transcripts={note: WORDS}) as server:
        async with gateway(meta, tmp_path, transcription={"base_url": server.base_url}, reply="when_voice",
                           speech={"base_url": server.base_url, "voice": "alloy"}) as running:
            assert await meta.deliver(webhook_url(running), meta.media_message(USER, "audio", note)) == 200
            await eventually(lambda: meta.attachments(USER) != [], lambda: meta.user(USER).calls, timeout=30)
    reply = f'I heard: "{WORDS}".'
    messages = meta.user(USER).messages
    assert messages[0].text == reply and messages[-1].kind == "audio", "the text comes first"
    assert [r["input"] for r in server.speech_requests] == [reply], "the final text is what is spoken"
    [(_, spoken)] = meta.attachments(USER)
    with av.open(io.BytesIO(spoken)) as container:
        stream = container.streams.audio[0]
        assert stream.codec_context.name == "opus"
        assert sum(frame.samples for frame in container.decode(stream)) / 48000 > 0.3
