"""A voice note in a chat, end to end on the reference platform: downloaded once, heard, answered, shown.

The model is the demo model: it answers ``I heard: "…"`` with the
transcript it was sent, so the chat shows that the real audio reached the
transcription server (registered for those exact bytes) and its words the
model. What the person reads is compared as the chat's text top to bottom
(:func:`shown`): the lines before the reply are a message of their own from
the turn's voice step, or the reply's first lines through the inbound media
pipeline (where it is present), and read the same either way.
"""

from __future__ import annotations

import importlib.util

import pytest

from hermes_gateway._core.voice import inbound, transcribe
from voice_helpers import AudioServer, Served, gateway_on, reference, said, shown, transcription, voice, voice_note


#: Whether the inbound media pipeline downloads files (else the turn's own voice step does).
PIPELINE = importlib.util.find_spec("hermes_gateway._core.inbound.file_content") is not None


async def test_a_voice_note_is_heard_and_answered_with_the_transcript_quoted_first(tmp_path):
    ref, note = reference(), voice_note(1.2)
    served = Served(note)
    async with AudioServer() as server:
        server.hears(note, "what time does the train to london leave")
        async with gateway_on(ref, tmp_path, voice=transcription(server, show_transcript=True)) as gateway:
            report = await said(gateway, voice(served))
    assert report.delivered
    assert shown(ref) == ('> 🎤 what time does the train to london leave\n\n'
                          'I heard: "what time does the train to london leave".')
    assert served.downloads == 1 and server.uploads[0]["bytes"] == note


async def test_the_caption_and_the_transcript_go_to_the_model_together_and_no_file_is_left(tmp_path):
    ref, note = reference(), voice_note(1.0)
    async with AudioServer() as server:
        server.hears(note, "and bring milk")
        async with gateway_on(ref, tmp_path, voice=transcription(server)) as gateway:
            await said(gateway, voice(Served(note)), text="echo: shopping")
            await said(gateway, voice(Served(note)), text="describe: what did I say?", update="u2")
    screen = ref.chat("1").screen
    assert screen[0].startswith("shopping\n\n[voice note, transcribed] and bring milk")
    assert screen[1] == 'I heard: "and bring milk".'
    assert not any(tmp_path.glob("inbound/voice-*")), "the voice step removes what it downloaded once heard"


async def test_without_transcription_a_voice_note_gets_one_line_and_its_caption_is_still_answered(tmp_path):
    ref = reference()
    async with gateway_on(ref, tmp_path) as gateway:
        await said(gateway, voice(Served(voice_note())))
        await said(gateway, voice(Served(voice_note())), text="echo: and the text", update="u2")
    assert shown(ref).startswith(transcribe.NOT_SET_UP) and shown(ref).count(transcribe.NOT_SET_UP) == 2
    assert "and the text" in shown(ref)


async def test_a_file_declared_too_large_is_never_downloaded(tmp_path):
    ref, served = reference(), Served(voice_note())
    async with gateway_on(ref, tmp_path) as gateway:
        await said(gateway, voice(served, size=100 * 1024 * 1024))
    assert "too large" in shown(ref) and served.downloads == 0


@pytest.mark.skipif(PIPELINE, reason="the media pipeline's downloads have their own tests of this")
async def test_a_file_larger_than_declared_is_cut_off_while_streaming(tmp_path, monkeypatch):
    monkeypatch.setattr(inbound, "MAX_AUDIO_BYTES", 10_000)
    ref, served = reference(), Served(b"\x00" * 50_000)
    async with gateway_on(ref, tmp_path) as gateway:
        await said(gateway, voice(served, size=100))
    assert ref.chat("1").screen == [inbound.TOO_LARGE.format(mb=0)]
    assert list((tmp_path / "inbound").iterdir()) == []


async def test_unknown_users_and_redeliveries_download_nothing(tmp_path):
    ref, served = reference(), Served(voice_note())
    sections = {"platforms": {"reference": {"enabled": True, "allowed_users": ["person-1"]}}}
    async with gateway_on(ref, tmp_path, **sections) as gateway:
        assert await said(gateway, voice(served), sender="stranger") is None
        await said(gateway, voice(served), update="u2")
        assert await said(gateway, voice(served), update="u2") is None
    assert served.downloads == 1
