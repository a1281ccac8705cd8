"""Audio clips on Slack, end to end: recorded in the app, transcribed by the endpoint, answered in the thread.

Through slack-bolt over Socket Mode: the emulator shares an audio clip
(``subtype: slack_audio``) whose ``url_private`` needs the bot token; the
gateway downloads it and transcribes it at the kit's OpenAI-compatible
audio server (``voice.transcription.base_url``), which records the exact
bytes it was sent; the demo model answers with the transcript, and the
answer lands in the clip's thread on the emulator.
"""

from __future__ import annotations

import io
import logging

import pytest
from slack_test_support import LIMITS, config

from hermes_gateway.testing import AudioApiServer, TestGateway, eventually
from hermes_slack import plugin
from hermes_slack.emulator_files import voice_note

WORDS = "move my three o clock meeting to thursday"


def gateway(api, tmp_path, **voice) -> TestGateway:
    data = {**config(api), "media": {"directory": str(tmp_path / "media")}, "voice": voice}
    return TestGateway(data, plugin, limits=LIMITS, shutdown_grace=0.5)


async def answered(api, channel: str, thread: str, count: int = 1) -> None:
    """Until ``count`` messages show in the thread and nothing is still streaming."""
    await eventually(lambda: len(api.screen(channel, thread)) == count and not api.still_streaming(),
                     lambda: api.screen(channel), timeout=30)


@pytest.mark.parametrize("show_transcript", [False, True], ids=["answer_only", "transcript_quoted_first"])
async def test_an_audio_clip_is_transcribed_and_the_model_answers_its_words(api, tmp_path, show_transcript):
    clip = voice_note(1.0)
    async with AudioApiServer(transcripts={clip.data: WORDS}) as server:
        async with gateway(api, tmp_path, transcription={"base_url": server.base_url, "model": "whisper-1"},
                           show_transcript=show_transcript):
            await api.wait_connected()
            ts = await api.push_message("D0DM", "", files=(clip,), kind="im")
            await answered(api, "D0DM", ts)
    [download] = api.shared.downloaded()
    assert (download.filename, download.authorized, download.sent) == ("audio_message.ogg", True, len(clip.data))
    [upload] = server.uploads
    assert upload.data == clip.data, "the endpoint got the very bytes Slack's url_private served"
    assert upload.model == "whisper-1" and upload.filename.endswith(".ogg")
    reply = f'I heard: "{WORDS}".'
    assert api.screen("D0DM", ts) == ([f"> 🎤 {WORDS}\n\n{reply}"] if show_transcript else [reply]), \
        "Slack shows a line starting with '> ' as a quote, before the reply"


async def test_without_transcription_an_audio_clip_is_one_line_no_turn_no_download(api, tmp_path, caplog):
    async with gateway(api, tmp_path):
        await api.wait_connected()
        with caplog.at_level(logging.WARNING):
            ts = await api.push_message("D0DM", "", files=(voice_note(0.8),), kind="im")
            await answered(api, "D0DM", ts)
        await api.push_message("D0DM", "echo: and in writing", kind="im", thread_ts=ts)
        await answered(api, "D0DM", ts, 2)
    line, after = api.screen("D0DM", ts)
    assert "voice transcription is not set up" in line and "\n" not in line
    assert after == "and in writing", "nothing of a model turn came between the line and the next reply"
    assert api.shared.downloads == [], "nothing could hear it: never fetched"
    assert any("voice.transcription" in r.getMessage() for r in caplog.records), "the operator is told the key"


async def test_an_audio_clip_is_answered_with_the_text_then_an_audio_file_that_decodes(api, tmp_path):
    """``voice.reply: when_voice``: the answer as text in the thread, then its spoken form shared as a file."""
    av = pytest.importorskip("av", reason="PyAV decodes the voice note")
    clip = voice_note(1.0)
    async with AudioApiServer(transcripts={clip.data: WORDS}) as server:
        async with gateway(api, tmp_path, transcription={"base_url": server.base_url}, reply="when_voice",
                           speech={"base_url": server.base_url, "voice": "alloy"}):
            await api.wait_connected()
            ts = await api.push_message("D0DM", "", files=(clip,), kind="im")
            await eventually(lambda: api.attachments("D0DM", ts) != [], lambda: api.screen("D0DM"), timeout=30)
    reply = f'I heard: "{WORDS}".'
    assert api.screen("D0DM", ts)[0] == reply, "the text comes first"
    assert [r["input"] for r in server.speech_requests] == [reply], "the final text is what is spoken"
    [(name, spoken)] = api.attachments("D0DM", ts)
    assert name.endswith(".ogg")
    with av.open(io.BytesIO(spoken)) as container:
        stream = container.streams.audio[0]
        assert stream.codec_context.name == "opus"
        assert sum(frame.samples for frame in container.decode(stream)) / 48000 > 0.3
