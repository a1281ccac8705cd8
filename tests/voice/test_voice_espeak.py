"""The built-in voice (eSpeak NG from the espeakng-loader wheel): speech, not silence, longer for longer text."""

from __future__ import annotations

import array

import pytest

from hermes_gateway._core.config import VoiceConfig
from hermes_gateway._core.voice import audio, espeak
from hermes_gateway._core.voice.speech import speak


def loudness(pcm: bytes) -> float:
    samples = array.array("h", pcm)
    return sum(abs(s) for s in samples) / max(len(samples), 1)


def test_text_is_spoken_as_audible_pcm_whose_length_grows_with_the_text():
    short, rate = espeak.synthesize("Hello.")
    long, _ = espeak.synthesize("Hello. Your train to London leaves at seven fifteen from platform nine.")
    assert rate > 8000
    assert 0.2 < len(short) / 2 / rate < len(long) / 2 / rate < 10
    assert loudness(long) > 300, "speech, not silence"


def test_an_unknown_voice_is_an_error_not_silence():
    with pytest.raises(espeak.SpeechUnavailable):
        espeak.synthesize("hello", voice="no-such-voice-xx")


async def test_without_an_endpoint_a_reply_becomes_a_voice_note_of_the_built_in_voice():
    note = await speak("**Sure**, I will remind you tomorrow.", VoiceConfig(reply="always"))
    assert note.voice and note.mime == "audio/ogg" and audio.is_ogg_opus(note.data)
    assert 1.0 < audio.probe_seconds(note.data) < 6.0


def test_a_data_folder_in_a_deep_path_is_reached_through_a_short_link(tmp_path):
    """eSpeak NG crashes the process on a long data path (a virtualenv in a deep folder): it gets a short one."""
    from hermes_gateway._core.voice.espeak import _MAX_HOME_BYTES, _short_home

    deep = tmp_path / ("d" * 60) / ("e" * 60) / "espeak-ng-data"
    deep.mkdir(parents=True)
    (deep / "phontab").write_bytes(b"x")
    home = _short_home(deep)
    assert len(str(home).encode()) <= _MAX_HOME_BYTES
    assert (home / "espeak-ng-data" / "phontab").read_bytes() == b"x"
    shallow = tmp_path / "espeak-ng-data"
    shallow.mkdir()
    if len(str(tmp_path).encode()) <= _MAX_HOME_BYTES:
        assert _short_home(shallow) == tmp_path
