"""Audio conversion: voice notes decode to PCM, PCM encodes to a voice note that decodes again, bad bytes are an error."""

from __future__ import annotations

import av
import pytest

from hermes_gateway._core.voice import audio
from hermes_gateway.testing.audio import tone, voice_note, wav_bytes


def test_a_voice_note_decodes_to_16khz_mono_pcm_of_its_length():
    pcm = audio.decode_pcm(voice_note(2.0), rate=16000)
    assert abs(len(pcm) / 32000 - 2.0) < 0.1


def test_pcm_becomes_an_ogg_opus_voice_note_that_decodes_again():
    note = audio.encode_ogg_opus(tone(1.0), 16000)
    assert audio.is_ogg_opus(note)
    with av.open(__import__("io").BytesIO(note)) as container:
        stream = container.streams.audio[0]
        assert (container.format.name, stream.codec_context.name, stream.rate) == ("ogg", "opus", 48000)
    assert abs(audio.probe_seconds(note) - 1.0) < 0.1


def test_a_wav_answer_is_converted_and_a_voice_note_is_left_as_it_is():
    note = voice_note(0.5)
    assert audio.to_ogg_opus(note) is note
    converted = audio.to_ogg_opus(wav_bytes(tone(0.7)))
    assert audio.is_ogg_opus(converted) and abs(audio.probe_seconds(converted) - 0.7) < 0.1


@pytest.mark.parametrize("data", [b"", b"OggS" + b"\x00" * 200, b"definitely not audio" * 50])
def test_bytes_that_are_not_audio_are_an_audio_error(data):
    with pytest.raises(audio.AudioError):
        audio.probe_seconds(data)
    with pytest.raises(audio.AudioError):
        audio.decode_pcm(data)


def test_decoding_stops_at_the_limit():
    pcm = audio.decode_pcm(voice_note(3.0), rate=16000, max_seconds=1.0)
    assert len(pcm) == 32000
    assert audio.probe_seconds(voice_note(3.0), stop_after=1.0) < 1.5
