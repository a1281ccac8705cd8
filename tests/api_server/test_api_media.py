"""A tool's media on the OpenAI-compatible API, read with the official SDK: Markdown links in Chat Completions,
url_citation annotations and image_generation_call items in the Responses API, served from short-lived,
unguessable /v1/media/{token} links (or inlined as data: URLs under the configured size)."""

from __future__ import annotations

import base64
import re

import aiohttp
import openai
import pytest
from openai.types.responses.response_output_item import ImageGenerationCall
from openai.types.responses.response_output_text import AnnotationURLCitation

from api_helpers import MODEL, api, gateway_config, parse_sse, post_raw, running_gateway

ASK = 'tool: qr_code {"text": "hello"}'
REPLY = "The tool qr_code returned: A QR code for 5 characters of text.\n[image: qr.png attached]"
LINK = re.compile(r"!\[hello\]\((http://127\.0\.0\.1:\d+/v1/media/([A-Za-z0-9_-]{43}))\)$")


def config(tmp_path, **media):
    return gateway_config({"media": {"directory": str(tmp_path / "media"), **media}})


def client_for(gateway):
    return openai.AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key="unused", max_retries=0)


def qr_file(tmp_path) -> bytes:
    (path,) = (tmp_path / "media").iterdir()
    return path.read_bytes()


async def fetch(url: str) -> tuple[int, dict, bytes]:
    async with aiohttp.ClientSession() as http:
        async with http.get(url) as response:
            return response.status, dict(response.headers), await response.read()


async def test_chat_completions_carry_the_image_as_markdown_that_fetches_the_png(tmp_path):
    async with running_gateway(config(tmp_path)) as gateway:
        completion = await client_for(gateway).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": ASK}])
        content = completion.choices[0].message.content
        text, _, line = content.rpartition("\n\n")
        assert text == REPLY and LINK.match(line), content
        status, headers, body = await fetch(LINK.match(line).group(1))
    assert status == 200 and body == qr_file(tmp_path) and body.startswith(b"\x89PNG")
    assert headers["Content-Type"] == "image/png" and headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Disposition"].startswith("inline;")


async def test_a_streamed_completion_ends_with_the_same_markdown(tmp_path):
    async with running_gateway(config(tmp_path)) as gateway:
        stream = await client_for(gateway).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": ASK}], stream=True)
        pieces = [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]
        status, _, body = await fetch(LINK.search(pieces[-1]).group(1))
    text = "".join(pieces)
    assert text.startswith(REPLY + "\n\n") and LINK.match(text.rpartition("\n\n")[2])
    assert pieces[-1].startswith("\n\n![hello](")  # one last content chunk after the reply's text
    assert status == 200 and body == qr_file(tmp_path)


async def test_a_link_expires_and_unknown_or_malformed_tokens_look_the_same(tmp_path):
    async with running_gateway(config(tmp_path, url_ttl=60)) as gateway:
        now = [1000.0]
        api(gateway).media.clock = lambda: now[0]
        urls = []
        for _ in range(2):
            completion = await client_for(gateway).chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": ASK}])
            urls.append(LINK.search(completion.choices[0].message.content).group(1))
        assert urls[0] != urls[1]  # a fresh token every time
        now[0] += 59
        assert (await fetch(urls[0]))[0] == 200
        now[0] += 2
        expired = await fetch(urls[0])
        base = f"{gateway.url}/v1/media/"
        unknown = await fetch(base + "A" * 43)
        malformed = await fetch(base + "..%2F..%2Fetc%2Fpasswd")
    for status, _headers, body in (expired, unknown, malformed):
        assert status == 404 and b'"code": "media_not_found"' in body, body
    assert b"%PDF" not in malformed[2] and b"root:" not in malformed[2]


async def test_a_file_removed_from_the_media_directory_is_gone(tmp_path):
    async with running_gateway(config(tmp_path)) as gateway:
        completion = await client_for(gateway).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": ASK}])
        url = LINK.search(completion.choices[0].message.content).group(1)
        for path in (tmp_path / "media").iterdir():
            path.unlink()
        assert (await fetch(url))[0] == 404


async def test_the_link_needs_no_api_key_but_the_chat_does(tmp_path):
    cfg = gateway_config({"media": {"directory": str(tmp_path / "media")}}, api={"api_keys": ["sekret"]})
    async with running_gateway(cfg) as gateway:
        keyed = openai.AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key="sekret", max_retries=0)
        completion = await keyed.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": ASK}])
        status, _, body = await fetch(LINK.search(completion.choices[0].message.content).group(1))
        with pytest.raises(openai.AuthenticationError):
            await client_for(gateway).chat.completions.create(model=MODEL, messages=[{"role": "user", "content": ASK}])
    assert status == 200 and body.startswith(b"\x89PNG")


async def test_the_responses_api_annotates_the_link_for_the_sdk(tmp_path):
    async with running_gateway(config(tmp_path)) as gateway:
        response = await client_for(gateway).responses.create(model=MODEL, input=ASK)
        (message,) = response.output
        (note,) = message.content[0].annotations
        status, _, body = await fetch(note.url)
    text = response.output_text
    assert isinstance(note, AnnotationURLCitation) and note.title == "qr.png"
    assert text.startswith(REPLY + "\n\n") and text[note.start_index:note.end_index] == f"![hello]({note.url})"
    assert status == 200 and body == qr_file(tmp_path)


async def test_a_small_image_is_inlined_and_an_image_item_the_sdk_parses(tmp_path):
    async with running_gateway(config(tmp_path, inline_max_bytes=100_000)) as gateway:
        client = client_for(gateway)
        response = await client.responses.create(model=MODEL, input=ASK)
        async with client.responses.stream(model=MODEL, input=ASK) as stream:
            events = [event async for event in stream]
            streamed = await stream.get_final_response()
        chat = await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": ASK}])
    files = {path.read_bytes() for path in (tmp_path / "media").iterdir()}  # the same QR code, three times
    for final in (response, streamed):
        message, image = final.output
        assert isinstance(image, ImageGenerationCall) and image.status == "completed"
        assert image.output_format == "png" and base64.b64decode(image.result) in files
        note = message.content[0].annotations[0]
        assert note.url == "data:image/png;base64," + image.result
    added = [e for e in events if e.type == "response.output_text.annotation.added"]
    assert len(added) == 1 and added[0].annotation.url.startswith("data:image/png;base64,")
    assert "](data:image/png;base64," in chat.choices[0].message.content


async def test_the_responses_stream_on_the_wire_has_dense_numbers_and_the_image_item_last(tmp_path):
    async with running_gateway(config(tmp_path, inline_max_bytes=100_000)) as gateway:
        status, _, raw = await post_raw(f"{gateway.url}/v1/responses", {"model": MODEL, "input": ASK, "stream": True})
    bodies = [e.json() for e in parse_sse(raw) if not isinstance(e, str)]
    assert status == 200 and [b["sequence_number"] for b in bodies] == list(range(len(bodies)))
    types = [b["type"] for b in bodies]
    assert types[-4:] == ["response.output_item.done", "response.output_item.added", "response.output_item.done",
                          "response.completed"]
    assert [item["type"] for item in bodies[-1]["response"]["output"]] == ["message", "image_generation_call"]


async def test_behind_a_proxy_links_are_built_on_media_public_url(tmp_path):
    async with running_gateway(config(tmp_path, public_url="https://bot.example.com/")) as gateway:
        completion = await client_for(gateway).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": ASK}])
        line = completion.choices[0].message.content.rpartition("\n\n")[2]
        match = re.fullmatch(r"!\[hello\]\(https://bot\.example\.com/v1/media/([A-Za-z0-9_-]{43})\)", line)
        assert match, line
        status, _, body = await fetch(f"{gateway.url}/v1/media/{match.group(1)}")  # what the proxy forwards
    assert status == 200 and body == qr_file(tmp_path)


BAD_HOSTS = ["::1", "localhost:abc", "[::1]:99999", "localhost:-1"]


@pytest.mark.parametrize("host", BAD_HOSTS)
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
async def test_a_host_header_that_does_not_parse_costs_no_reply(tmp_path, host, path):
    """The model already ran: the reply is answered, its link on the address the client connected to."""
    body = ({"model": MODEL, "messages": [{"role": "user", "content": ASK}]} if path.endswith("completions")
            else {"model": MODEL, "input": ASK})
    async with running_gateway(config(tmp_path)) as gateway:
        status, _, raw = await post_raw(gateway.url + path, body, headers={"Host": host})
        assert status == 200, raw[:300]
        urls = re.findall(rb"http://[^)\s\"]+/v1/media/[A-Za-z0-9_-]{43}", raw)
        assert urls and all(url.startswith(gateway.url.encode()) for url in urls), raw[-300:]
        fetched, _, png = await fetch(urls[0].decode())
    assert fetched == 200 and png == qr_file(tmp_path)


@pytest.mark.parametrize("host", BAD_HOSTS)
async def test_a_streamed_reply_with_media_and_a_bad_host_ends_normally(tmp_path, host):
    async with running_gateway(config(tmp_path)) as gateway:
        status, _, raw = await post_raw(gateway.url + "/v1/chat/completions",
                                        {"model": MODEL, "stream": True,
                                         "messages": [{"role": "user", "content": ASK}]}, headers={"Host": host})
    assert status == 200
    assert b"internal_error" not in raw and raw.rstrip().endswith(b"data: [DONE]"), raw[-300:]
    assert re.search(rb"http://127\.0\.0\.1:\d+/v1/media/[A-Za-z0-9_-]{43}", raw)
