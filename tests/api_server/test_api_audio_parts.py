"""Audio in on the API: ``input_audio`` parts transcribed by ``voice.transcription`` (or passed on with ``model.audio``)."""

from __future__ import annotations

import base64
import json

import openai
import pytest

from api_helpers import MODEL, ScriptedUpstream, gateway_config, post_raw, running_gateway
from hermes_gateway.testing.audio import AudioApiServer, tone, voice_note, wav_bytes


def audio_part(data: bytes, fmt: str = "wav") -> dict:
    return {"type": "input_audio", "input_audio": {"data": base64.b64encode(data).decode(), "format": fmt}}


def voice(server: AudioApiServer, tmp_path) -> dict:
    return {"voice": {"transcription": {"base_url": server.base_url}}, "media": {"directory": str(tmp_path)}}


async def test_the_demo_model_hears_the_transcript_of_the_audio_sent(tmp_path):
    clip = wav_bytes(tone(1.0))
    async with AudioApiServer() as server:
        server.hears(clip, "turn off the lights in the living room")
        async with running_gateway(gateway_config(voice(server, tmp_path))) as gw:
            client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
            completion = await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": [
                {"type": "text", "text": "describe:"}, audio_part(clip)]}])
    assert completion.choices[0].message.content == 'I heard: "turn off the lights in the living room".'
    assert server.uploads[0].data == clip and server.uploads[0].filename.endswith(".wav")
    assert list((tmp_path / "inbound").iterdir()) == []


async def test_model_audio_passes_the_part_to_the_upstream_as_sent(tmp_path):
    clip = voice_note(0.5)
    async with ScriptedUpstream() as upstream, AudioApiServer() as server:
        upstream.reply = lambda body: "heard it"
        config = gateway_config(voice(server, tmp_path), model=upstream.model_config(audio=True))
        async with running_gateway(config) as gw:
            client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
            await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": [
                audio_part(clip, "ogg")]}])
    assert upstream.requests[-1]["messages"][-1]["content"] == [audio_part(clip, "ogg")]
    assert server.uploads == [], "nothing transcribed: the upstream hears audio itself"


async def test_without_model_audio_a_real_upstream_gets_the_transcript(tmp_path):
    clip = voice_note(0.8)
    async with ScriptedUpstream() as upstream, AudioApiServer() as server:
        server.hears(clip, "book a table for two")
        upstream.reply = lambda body: "done"
        async with running_gateway(gateway_config(voice(server, tmp_path), model=upstream.model_config())) as gw:
            client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
            await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": [
                {"type": "text", "text": "please"}, audio_part(clip, "ogg")]}])
    assert upstream.requests[-1]["messages"][-1]["content"] == [
        {"type": "text", "text": "please"}, {"type": "text", "text": "[voice note, transcribed] book a table for two"}]


@pytest.mark.parametrize("part,code,param", [
    ({"type": "input_audio", "input_audio": {"data": "AAAA", "format": "aiff"}}, None,
     "messages[0].content[0].input_audio.format"),
    ({"type": "input_audio", "input_audio": {"data": 5, "format": "wav"}}, None,
     "messages[0].content[0].input_audio.data"),
    ({"type": "input_audio", "input_audio": "x"}, None, "messages[0].content[0].input_audio"),
    ({"type": "input_audio", "input_audio": {"data": "not base64!", "format": "wav"}}, None,
     "messages[0].content[0].input_audio.data"),
    (audio_part(b"RIFF not really a wave file" * 20), "invalid_audio", "messages[0].content[0]"),
])
async def test_bad_audio_is_a_400_naming_the_part(tmp_path, part, code, param):
    async with AudioApiServer() as server:
        async with running_gateway(gateway_config(voice(server, tmp_path))) as gw:
            status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions",
                                            {"model": MODEL, "messages": [{"role": "user", "content": [part]}]})
    error = json.loads(raw)["error"]
    assert status == 400 and error["param"] == param, raw
    assert code is None or error["code"] == code
    assert server.uploads == []


async def test_audio_without_transcription_is_a_400_naming_the_keys(tmp_path):
    async with running_gateway(gateway_config({"media": {"directory": str(tmp_path)}})) as gw:
        status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", {"model": MODEL, "messages": [
            {"role": "user", "content": [audio_part(wav_bytes(tone(0.2)))]}]})
    error = json.loads(raw)["error"]
    assert status == 400 and error["code"] == "audio_not_supported"
    assert "voice.transcription" in error["message"] and "model.audio" in error["message"]


async def test_a_failing_transcription_endpoint_is_a_502_in_openai_shape(tmp_path):
    async with AudioApiServer(status=500) as server:
        async with running_gateway(gateway_config(voice(server, tmp_path))) as gw:
            status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", {"model": MODEL, "messages": [
                {"role": "user", "content": [audio_part(wav_bytes(tone(0.2)))]}]})
    error = json.loads(raw)["error"]
    assert status == 502 and error["code"] == "transcription_failed" and error["type"] == "server_error"


async def test_the_responses_api_has_no_audio_parts(tmp_path):
    async with running_gateway(gateway_config({"media": {"directory": str(tmp_path)}})) as gw:
        status, _, raw = await post_raw(f"{gw.url}/v1/responses", {"model": MODEL, "input": [
            {"role": "user", "content": [audio_part(b"x")]}]})
    assert status == 400 and json.loads(raw)["error"]["param"] == "input[0].content[0].type"
