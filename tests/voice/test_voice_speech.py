"""``speak``: the final text to an OGG/Opus voice note through an OpenAI-compatible ``/v1/audio/speech`` on 127.0.0.1."""

from __future__ import annotations

import pytest

from hermes_gateway import Media
from hermes_gateway._core.config import VoiceConfig, VoiceEndpoint
from hermes_gateway._core.voice import audio
from hermes_gateway._core.voice_results import VoiceProblem
from hermes_gateway._core.voice.speech import MAX_INPUT, speak, speakable, wants_voice_reply
from hermes_gateway.testing.audio import AudioApiServer


def config(server: AudioApiServer) -> VoiceConfig:
    return VoiceConfig(speech=VoiceEndpoint(base_url=server.base_url, model="tts-1-hd", voice="nova"), reply="always")


@pytest.mark.parametrize("answered_as", ["wav", "ogg"])
async def test_the_reply_becomes_a_voice_note_that_decodes(answered_as):
    async with AudioApiServer(speech_format=answered_as) as server:
        note = await speak("**Sure.** Your `train` leaves at seven.\n```\ncode\n```", config(server))
    [request] = server.speech_requests
    assert request == {"model": "tts-1-hd", "voice": "nova", "input": "Sure. Your train leaves at seven.",
                       "response_format": "opus"}
    assert isinstance(note, Media)
    assert (note.kind, note.mime, note.filename, note.voice) == ("audio", "audio/ogg", "voice.ogg", True)
    assert audio.is_ogg_opus(note.data)
    assert abs(audio.probe_seconds(note.data) - (0.05 * 6 + 0.3)) < 0.1, "the server's audio, whole"


async def test_audio_that_does_not_decode_or_a_failing_server_is_a_problem_not_a_broken_file():
    async with AudioApiServer(speech_format="garbage") as server:
        assert isinstance(await speak("hello", config(server)), VoiceProblem)
    async with AudioApiServer(status=500) as server:
        assert isinstance(await speak("hello", config(server)), VoiceProblem)


def test_a_long_reply_is_spoken_up_to_a_sentence_end_within_the_limit():
    text = "This is a sentence. " * 400
    spoken = speakable(text)
    assert len(spoken) <= MAX_INPUT and spoken.endswith(".")


@pytest.mark.parametrize("reply,spoke,wanted", [("never", True, False), ("when_voice", False, False),
                                                ("when_voice", True, True), ("always", False, True)])
def test_which_turns_get_a_voice_note(reply, spoke, wanted):
    assert wants_voice_reply(VoiceConfig(reply=reply), spoke) is wanted
