"""An MCP tool result as the gateway's: text for the model; images, audio and files as media; errors raised."""

from __future__ import annotations

import base64

import mcp_types as t
import pytest

from hermes_gateway._core.mcp.results import McpToolError, to_tool_result

PNG = b"\x89PNG\r\n\x1a\nfake"


def result(*content, **kw) -> t.CallToolResult:
    return t.CallToolResult(content=list(content), **kw)


def test_text_parts_join_and_images_and_audio_become_media():
    out = to_tool_result(result(t.TextContent(type="text", text="a chart"),
                                t.ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"),
                                t.AudioContent(type="audio", data=base64.b64encode(b"OggS").decode(),
                                               mime_type="audio/ogg"),
                                t.TextContent(type="text", text="and a sound")))
    assert out.text == "a chart\nand a sound"
    assert [(m.kind, m.mime, m.data) for m in out.media] == [("image", "image/png", PNG), ("audio", "audio/ogg", b"OggS")]


def test_an_embedded_file_keeps_its_name_and_an_embedded_text_is_read_by_the_model():
    blob = t.BlobResourceContents(uri="file:///srv/report.pdf", mime_type="application/pdf",
                                  blob=base64.b64encode(b"%PDF-1.7").decode())
    text = t.TextResourceContents(uri="file:///srv/notes.txt", mime_type="text/plain", text="the notes")
    out = to_tool_result(result(t.EmbeddedResource(type="resource", resource=blob),
                                t.EmbeddedResource(type="resource", resource=text)))
    assert out.text == "the notes"
    (media,) = out.media
    assert (media.filename, media.kind, media.data) == ("report.pdf", "document", b"%PDF-1.7")


def test_a_link_is_shown_to_the_model_and_structured_content_stands_in_for_missing_text():
    link = to_tool_result(result(t.ResourceLink(type="resource_link", name="log", uri="https://example.com/log")))
    assert link.text == "[log: https://example.com/log]"
    assert to_tool_result(result(structured_content={"sum": 3})).text == '{"sum": 3}'


def test_undecodable_media_is_a_line_not_a_crash_and_is_error_raises_with_the_servers_text():
    bad = to_tool_result(result(t.ImageContent(type="image", data="%%%not base64", mime_type="image/png")))
    assert (bad.text, bad.media) == ("[image from the tool could not be decoded]", ())
    with pytest.raises(McpToolError, match="no such file"):
        to_tool_result(result(t.TextContent(type="text", text="no such file"), is_error=True))
