"""Voice notes through the inbound media pipeline: the converter registered for ``voice`` and ``audio``."""

from __future__ import annotations

from voice_helpers import Served, gateway_on, reference

from hermes_gateway import Attachment, Incoming, MediaLimits
from hermes_gateway._core.store import ConversationKey
from hermes_gateway._core.voice import pipeline, transcribe
from hermes_gateway.testing import ReferencePlatform
from hermes_gateway.testing.audio import AudioApiServer, voice_note


def say(gateway, served: Served, text: str = "", update: str = "u1"):
    note = Attachment("voice", served.fetch, mime="audio/ogg", filename="file_3.oga", size=len(served.data))
    return gateway.receive(Incoming("reference", "1", text, update_id=update, message_id=update,
                                    sender_id="person-1", attachments=(note,)))


def test_the_converter_is_registered_for_voice_and_audio():
    from hermes_gateway._core.content.file_content import converter_for, gate_for

    assert pipeline.register()
    assert converter_for("voice") is pipeline.voice_content is converter_for("audio")
    assert gate_for("voice") is pipeline.voice_gate is gate_for("audio")


async def test_a_voice_note_is_heard_through_the_pipeline_with_the_quote_before_the_reply(tmp_path):
    ref, note = ReferencePlatform("reference", media=MediaLimits()), voice_note(1.0)
    served = Served(note)
    async with AudioApiServer() as server:
        server.hears(note, "add milk eggs and bread to my shopping list")
        voice = {"transcription": {"base_url": server.base_url}, "show_transcript": True}
        async with gateway_on(ref, tmp_path, voice=voice) as gateway:
            await say(gateway, served)
    assert ref.chat("1").screen == ['> 🎤 add milk eggs and bread to my shopping list\n\n'
                                    'I heard: "add milk eggs and bread to my shopping list".']
    assert served.downloads == 1 and server.uploads[0].data == note


async def test_without_transcription_the_line_leads_the_reply_to_the_caption(tmp_path):
    ref, served = ReferencePlatform("reference", media=MediaLimits()), Served(voice_note())
    async with gateway_on(ref, tmp_path) as gateway:
        await say(gateway, served, text="echo: the caption")
    screen = ref.chat("1").screen
    assert len(screen) == 1 and screen[0].startswith(transcribe.NOT_SET_UP + "\n\nthe caption")
    assert served.downloads == 0, "nothing could hear it: not downloaded"


async def test_a_voice_note_alone_without_transcription_is_one_line_and_no_model_turn(tmp_path, caplog):
    ref, served = reference(), Served(voice_note())
    async with gateway_on(ref, tmp_path) as gateway:
        with caplog.at_level("WARNING"):
            await say(gateway, served)
        history = await gateway.store.history(ConversationKey("reference", "1", None))
    assert ref.chat("1").screen == [transcribe.NOT_SET_UP], "the line alone: the model was not asked"
    assert history == [], "nothing the model said is recorded"
    assert served.downloads == 0, "nothing could hear it: not downloaded"
    assert any("voice.transcription" in r.getMessage() for r in caplog.records), "the operator's log line"
