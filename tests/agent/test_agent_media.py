"""A tool's media through the agent: the model reads a stand-in, the turn's end carries the item, no bytes in
the conversation, and nothing outside the media directory is ever let through."""

from __future__ import annotations

import json

from hermes_gateway import Media, Tool, ToolResult
from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.events import ToolCallFinished, TurnEnd

from scripted_upstream import model_config

SCHEMA = {"type": "object", "properties": {}}


async def turn(agent: AIAgent, message: str) -> list:
    return [e async for e in agent.astream(message)]


async def test_the_qr_code_tool_gives_the_model_a_stand_in_and_the_turn_the_image(tmp_path) -> None:
    agent = AIAgent.from_config(model_config(), media_directory=tmp_path / "media")
    events = await turn(agent, 'tool: qr_code {"text": "hello"}')
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.error is None
    assert end.reply == "The tool qr_code returned: A QR code for 5 characters of text.\n[image: qr.png attached]"
    (item,) = end.media
    assert (item.kind, item.mime, item.filename, item.caption) == ("image", "image/png", "qr.png", "hello")
    assert item.data is None and item.path.startswith(str((tmp_path / "media").resolve()))
    png = open(item.path, "rb").read()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and item.size == len(png)
    # what the conversation store is given: the stand-in, never the bytes
    tool_message = next(m for m in end.messages if m["role"] == "tool")
    assert tool_message["content"] == "A QR code for 5 characters of text.\n[image: qr.png attached]"
    assert "PNG" not in json.dumps(end.messages)


async def test_media_of_several_tool_calls_arrives_in_call_order(tmp_path) -> None:
    def draw(name: str) -> ToolResult:
        return ToolResult(media=[Media(data=name.encode(), filename=f"{name}.png")])

    agent = AIAgent.from_config(model_config(), tools=[Tool("draw", "draws", draw, SCHEMA)],
                                media_directory=tmp_path)
    first = (await turn(agent, 'tool: draw {"name": "one"}'))[-1]
    assert [m.filename for m in first.media] == ["one.png"]
    assert first.reply == "The tool draw returned: [image: one.png attached]"


async def test_a_path_outside_the_media_directory_is_refused_and_the_model_told(tmp_path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY")

    def leak(path: str) -> ToolResult:
        return ToolResult(text="here", media=[Media(path=path, filename="key.txt")])

    agent = AIAgent.from_config(model_config(), tools=[Tool("leak", "leaks", leak, SCHEMA)],
                                media_directory=tmp_path / "media")
    for path in ("../id_rsa", str(secret)):
        end = (await turn(agent, f'tool: leak {json.dumps({"path": path})}'))[-1]
        (item,) = end.media
        assert item.refused == "outside the media directory" and item.path is None
        assert "[document: key.txt could not be attached: outside the media directory]" in end.reply
        assert "PRIVATE" not in json.dumps(end.messages)


async def test_a_plain_string_tool_still_works_and_has_no_media(tmp_path) -> None:
    agent = AIAgent.from_config(model_config(), media_directory=tmp_path)
    end = (await turn(agent, 'tool: calculate {"expression": "6 * 7"}'))[-1]
    assert end.reply == "The tool calculate returned: 42" and end.media == ()
    assert list(tmp_path.iterdir()) == []


async def test_a_flood_of_items_is_cut_to_ten(tmp_path) -> None:
    def many() -> ToolResult:
        return ToolResult(media=[Media(data=b"x", filename=f"{i}.png") for i in range(25)])

    agent = AIAgent.from_config(model_config(), tools=[Tool("many", "many", many, SCHEMA)], media_directory=tmp_path)
    events = await turn(agent, "tool: many {}")
    assert len(events[-1].media) == 10 and len(list(tmp_path.iterdir())) == 10
    assert next(e for e in events if isinstance(e, ToolCallFinished)).ok
