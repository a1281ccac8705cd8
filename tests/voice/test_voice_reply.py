"""Voice replies (``voice.reply``), seen from the chat: the text first, then a voice note that decodes.

Through the reference platform with the demo model; speech from a local
server speaking OpenAI's ``/v1/audio/speech`` or the built-in eSpeak NG.
"""

from __future__ import annotations

from voice_helpers import Served, gateway_on, reference, said, transcription, voice

from hermes_gateway import MediaLimits
from hermes_gateway._core.voice import audio
from hermes_gateway.testing import ReferencePlatform
from hermes_gateway.testing.audio import AudioApiServer, voice_note


async def test_when_voice_a_spoken_message_is_answered_with_text_then_a_voice_note_that_decodes(tmp_path):
    ref, note = reference(), voice_note(1.0)
    async with AudioApiServer(speech_format="wav") as server:
        server.hears(note, "tell me a short story")
        voice_section = transcription(server, reply="when_voice",
                                      speech={"base_url": server.base_url, "voice": "alloy"})
        async with gateway_on(ref, tmp_path, voice=voice_section) as gateway:
            await said(gateway, voice(Served(note)))
            await said(gateway, text="echo: typed, so no voice note", update="u2")
    messages = ref.chat("1").messages
    assert [m.text for m in messages] == ['I heard: "tell me a short story".', "[audio: voice.ogg]",
                                          "typed, so no voice note"]
    sent = messages[1].media
    assert sent.mime == "audio/ogg" and audio.is_ogg_opus(sent.data)
    assert audio.probe_seconds(sent.data) > 0.3
    assert [r["input"] for r in server.speech_requests] == ['I heard: "tell me a short story".']


async def test_always_with_the_built_in_voice_a_typed_message_gets_a_voice_note_too(tmp_path):
    ref = reference()
    async with gateway_on(ref, tmp_path, voice={"reply": "always"}) as gateway:
        await said(gateway, text="echo: the lights are off")
    messages = ref.chat("1").messages
    assert [m.text for m in messages] == ["the lights are off", "[audio: voice.ogg]"]
    assert audio.is_ogg_opus(messages[1].media.data) and audio.probe_seconds(messages[1].media.data) > 0.5


async def test_a_platform_that_sends_no_audio_gets_no_voice_note_and_no_stray_line(tmp_path):
    ref = ReferencePlatform("reference", media=MediaLimits(kinds=frozenset({"image"})))
    async with gateway_on(ref, tmp_path, voice={"reply": "always"}) as gateway:
        await said(gateway, text="echo: just text")
    assert ref.chat("1").screen == ["just text"]


async def test_the_text_is_delivered_in_full_before_the_voice_note_is_spoken(tmp_path):
    ref, at_speech = reference(), []
    async with AudioApiServer(speech_format="ogg") as server:
        server.on_speech = lambda: at_speech.append([(m.text, m.history[-1]) for m in ref.chat("1").messages])
        voice_section = {"reply": "always", "speech": {"base_url": server.base_url}}
        async with gateway_on(ref, tmp_path, voice=voice_section,
                              streaming={"reference": {"enabled": False}}) as gateway:
            report = await said(gateway, text="echo: the whole answer, first")
    assert at_speech == [[("the whole answer, first", "the whole answer, first")]], "final text, then speech"
    assert ref.chat("1").screen == ["the whole answer, first", "[audio: voice.ogg]"]
    assert len(report.media) == 1, "the voice note is part of the reply's report"
