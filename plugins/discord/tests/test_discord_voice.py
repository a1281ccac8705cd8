"""Voice messages on Discord, end to end: recorded in the app, transcribed by the endpoint, answered in the channel.

Through the real discord.py client: the emulator pushes MESSAGE_CREATE
with a voice message (``voice-message.ogg``, OGG/Opus, flagged
``IS_VOICE_MESSAGE``) on its CDN; the gateway downloads it and transcribes
it at the kit's OpenAI-compatible audio server
(``voice.transcription.base_url``), which records the exact bytes it was
sent; the demo model answers with the transcript, and the answer lands in
the emulator's channel.
"""

from __future__ import annotations

import io
import logging

import pytest
from discord_test_support import CURSOR, gateway_config, gateway_for

from hermes_discord.emulator_files import voice_note
from hermes_gateway.testing import AudioApiServer, eventually

WORDS = "what is the weather like in lisbon tomorrow"


def gateway(api, tmp_path, **voice):
    data = {**gateway_config(api), "media": {"directory": str(tmp_path / "media")}, "voice": voice}
    return gateway_for(api, config=data)


async def answered(api, channel: str, count: int = 1) -> None:
    """Until ``count`` messages show in the channel, the last in its final state (no cursor)."""
    await eventually(lambda: len(api.screen(channel)) == count and CURSOR.strip() not in api.screen(channel)[-1],
                     lambda: api.channel(channel).messages, timeout=30)


@pytest.mark.parametrize("show_transcript", [False, True], ids=["answer_only", "transcript_quoted_first"])
async def test_a_voice_message_is_transcribed_and_the_model_answers_its_words(loose_api, tmp_path, show_transcript):
    api, note = loose_api, voice_note(1.0)
    dm = api.dm()
    async with AudioApiServer(transcripts={note.data: WORDS}) as server:
        async with gateway(api, tmp_path, transcription={"base_url": server.base_url, "model": "whisper-1"},
                           show_transcript=show_transcript):
            await api.push_message(dm, "", attachments=(note,))
            await answered(api, dm)
    [download] = api.cdn.downloaded()
    assert (download.filename, download.sent) == ("voice-message.ogg", len(note.data)), "downloaded once, whole"
    [upload] = server.uploads
    assert upload.data == note.data, "the endpoint got the very bytes Discord's CDN served"
    assert upload.model == "whisper-1" and upload.filename.endswith(".ogg")
    reply = f'I heard: "{WORDS}".'
    assert api.screen(dm) == ([f"> 🎤 {WORDS}\n\n{reply}"] if show_transcript else [reply]), \
        "Discord shows a line starting with '> ' as a quote, before the reply"


async def test_without_transcription_a_voice_message_is_one_line_no_turn_no_download(loose_api, tmp_path, caplog):
    api = loose_api
    dm = api.dm()
    async with gateway(api, tmp_path):
        with caplog.at_level(logging.WARNING):
            await api.push_message(dm, "", attachments=(voice_note(0.8),))
            await answered(api, dm)
        await api.push_message(dm, "echo: and in writing")
        await answered(api, dm, 2)
    line, after = api.screen(dm)
    assert "voice transcription is not set up" in line and "\n" not in line
    assert after == "and in writing", "nothing of a model turn came between the line and the next reply"
    assert api.cdn.downloads == [], "nothing could hear it: never fetched"
    assert any("voice.transcription" in r.getMessage() for r in caplog.records), "the operator is told the key"


async def test_a_voice_message_is_answered_with_the_text_then_an_audio_file_that_decodes(loose_api, tmp_path):
    """``voice.reply: when_voice``: the answer as text, then its spoken form attached as an OGG/Opus file."""
    av = pytest.importorskip("av", reason="PyAV decodes the voice note")
    api, note = loose_api, voice_note(1.0)
    dm = api.dm()
    async with AudioApiServer(transcripts={note.data: WORDS}) as server:
        async with gateway(api, tmp_path, transcription={"base_url": server.base_url}, reply="when_voice",
                           speech={"base_url": server.base_url, "voice": "alloy"}):
            await api.push_message(dm, "", attachments=(note,))
            await eventually(lambda: len(api.channel(dm).uploads) == 1, lambda: api.channel(dm).calls, timeout=30)
    reply = f'I heard: "{WORDS}".'
    assert api.screen(dm)[0] == reply, "the text comes first"
    assert [r["input"] for r in server.speech_requests] == [reply], "the final text is what is spoken"
    [spoken] = api.channel(dm).uploads
    assert spoken.filename.endswith(".ogg")
    with av.open(io.BytesIO(spoken.data)) as container:
        stream = container.streams.audio[0]
        assert stream.codec_context.name == "opus"
        assert sum(frame.samples for frame in container.decode(stream)) / 48000 > 0.3
