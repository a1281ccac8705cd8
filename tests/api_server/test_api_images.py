"""Images in: ``image_url`` and ``input_image`` parts reach the model; ``model.vision: false`` says no with a 400."""

from __future__ import annotations

import base64
import io
import json

import openai
import pytest
from PIL import Image

from api_helpers import MODEL, ScriptedUpstream, gateway_config, post_raw, running_gateway


def png_data_url(width: int = 2, height: int = 3) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "red").save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture
async def client():
    async with running_gateway(gateway_config()) as gw:
        yield openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)


async def test_chat_image_reaches_the_model(client):
    completion = await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": [
        {"type": "text", "text": "describe: this"}, {"type": "image_url", "image_url": {"url": png_data_url()}}]}])
    assert completion.choices[0].message.content == "I see a PNG image of 2x3 pixels."


async def test_responses_input_image_and_a_link(client):
    response = await client.responses.create(model=MODEL, input=[{"role": "user", "content": [
        {"type": "input_text", "text": "what are these?"},
        {"type": "input_image", "image_url": png_data_url(5, 4)},
        {"type": "input_image", "image_url": "https://example.com/cat.jpg"}]}])
    assert response.output_text == ("I see a PNG image of 5x4 pixels; an image at https://example.com/cat.jpg "
                                    "(the demo model does not fetch links).")
    items = await client.responses.input_items.list(response.id, order="asc")
    assert [p.type for p in items.data[0].content] == ["input_text", "input_image", "input_image"]


async def test_image_parts_reach_the_upstream_as_sent():
    async with ScriptedUpstream() as upstream:
        upstream.reply = lambda body: "a cat"
        async with running_gateway(gateway_config(model=upstream.model_config())) as gw:
            client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="unused", max_retries=0)
            await client.responses.create(model=MODEL, input=[{"role": "user", "content": [
                {"type": "input_text", "text": "what?"},
                {"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "low"}]}])
    assert upstream.requests[-1]["messages"][-1]["content"] == [
        {"type": "text", "text": "what?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg", "detail": "low"}}]


@pytest.mark.parametrize("path, body", [
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]}),
    ("/v1/responses", {"input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": "https://example.com/a.png"}]}]}),
])
async def test_vision_off_is_a_400_that_says_so(path, body):
    async with running_gateway(gateway_config(model={"vision": False, "demo": {"tokens_per_second": 0}})) as gw:
        status, _, raw = await post_raw(f"{gw.url}{path}", {"model": MODEL, **body})
    error = json.loads(raw)["error"]
    assert status == 400 and error["code"] == "images_not_supported" and "model.vision" in error["message"]


@pytest.mark.parametrize("image", [
    {"url": "file:///etc/passwd"}, {"url": "javascript:alert(1)"}, {"url": 5}, {}, "ftp://x/y.png",
    {"url": "https://example.com/a.png", "detail": "extreme"},
])
async def test_bad_images_are_a_400(image):
    async with running_gateway(gateway_config()) as gw:
        status, _, raw = await post_raw(f"{gw.url}/v1/chat/completions", {"model": MODEL, "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": image}]}]})
    assert status == 400, raw
    assert json.loads(raw)["error"]["param"].startswith("messages[0].content[0].image_url")
