"""The ``voice:`` section: its keys, their defaults, one-line errors, and keys that never show."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError
from hermes_gateway._core.cli.config_cmd import effective
from hermes_gateway._core.config import parse_config


def test_defaults_transcribe_nothing_and_never_speak():
    voice = parse_config({}, env={}).voice
    assert (voice.transcription.configured, voice.speech.configured, voice.reply, voice.show_transcript) == \
        (False, False, "never", False)
    assert (voice.transcription.model, voice.speech.model) == ("whisper-1", "tts-1")


def test_a_full_section():
    voice = parse_config({"voice": {
        "transcription": {"base_url": "https://api.groq.com/openai/v1", "api_key": "${GROQ}",
                          "model": "whisper-large-v3", "language": "de", "timeout": 30},
        "speech": {"base_url": "http://127.0.0.1:8880/v1", "model": "kokoro", "voice": "af_bella"},
        "show_transcript": True, "reply": "when_voice", "max_seconds": 120}}, env={"GROQ": "gsk-1"}).voice
    assert voice.transcription.api_key == "gsk-1" and voice.transcription.language == "de"
    assert (voice.speech.voice, voice.reply, voice.max_seconds, voice.show_transcript) == \
        ("af_bella", "when_voice", 120.0, True)


@pytest.mark.parametrize("section,key,expected", [
    ({"reply": "sometimes"}, "voice.reply", "one of never, when_voice, always"),
    ({"transcription": {"model": "whisper-1"}}, "voice.transcription.base_url", "OpenAI-compatible endpoint"),
    ({"transcription": {"base_url": "ftp://x"}}, "voice.transcription.base_url", "http:// or https://"),
    ({"speech": {"base_url": "http://h/v1", "language": "en"}}, "voice.speech.language", "unknown key"),
    ({"max_seconds": 0}, "voice.max_seconds", "from 1 to 86,400"),
    ({"show_transcirpt": True}, "voice.show_transcirpt", "show_transcript"),
])
def test_bad_values_are_one_line_naming_the_file_and_key(section, key, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config({"voice": section}, source="config.yaml", env={})
    message = str(caught.value)
    assert "\n" not in message and "config.yaml" in message and key in message and expected in message


def test_voice_replies_without_an_endpoint_use_the_built_in_voice_unless_it_is_missing(monkeypatch):
    voice = parse_config({"voice": {"reply": "always", "speech": {"voice": "en-gb"}}}, env={}).voice
    assert (voice.reply, voice.speech.configured, voice.speech.voice) == ("always", False, "en-gb")
    from hermes_gateway._core import config as config_module

    monkeypatch.setattr(config_module, "espeak_installed", lambda: False)
    with pytest.raises(ConfigError) as caught:
        parse_config({"voice": {"reply": "when_voice"}}, source="config.yaml", env={})
    assert "voice.speech.base_url" in str(caught.value) and "espeakng-loader" in str(caught.value)


def test_the_keys_never_show_in_config_output():
    config = parse_config({"voice": {"transcription": {"base_url": "https://api.openai.com/v1", "api_key": "sk-a1"},
                                     "speech": {"base_url": "https://u:pw@tts.example/v1", "api_key": "sk-b2"},
                                     "reply": "always"}}, env={})
    shown = repr(effective(config)) + repr(config.voice)
    assert "sk-a1" not in shown and "sk-b2" not in shown and "pw" not in shown
    assert effective(config)["voice"]["reply"] == "always"
