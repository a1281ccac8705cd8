"""The Chat Completions chunks rendered from per-stream templates are exactly the JSON documents they stand for."""

from __future__ import annotations

import json

from hypothesis import given, strategies as st

from hermes_gateway._core.api_server.chat_stream import ChatChunks
from hermes_gateway._core.api_server.sse import data_frame
from hermes_gateway._core.events import UsageReport


def frame_json(frame: bytes | str) -> dict:
    text = frame.decode() if isinstance(frame, bytes) else frame
    assert text.startswith("data: ") and text.endswith("\n\n") and text.count("\n") == 2
    return json.loads(text[6:])


@given(completion_id=st.text(), model=st.text(), created=st.integers(0, 2**40), text=st.text(),
       tokens=st.tuples(st.integers(0, 10**9), st.integers(0, 10**9)))
def test_every_chunk_is_the_json_a_client_expects(completion_id: str, model: str, created: int, text: str,
                                                  tokens: tuple[int, int]) -> None:
    chunks = ChatChunks(completion_id, model, created)
    base = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model}
    role = {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                                 "finish_reason": None}]}
    assert frame_json(chunks.role()) == role
    assert chunks.role() == data_frame(role)  # byte for byte what the dict renders to
    finish = {**base, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}]}
    assert chunks.finish("stop") == data_frame(finish)
    usage = UsageReport(tokens[0], tokens[1], sum(tokens))
    expected_usage = {**base, "choices": [], "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1],
                                                       "total_tokens": sum(tokens)}}
    assert chunks.usage(usage) == data_frame(expected_usage)
    content = {**base, "choices": [{"index": 0, "delta": {"content": text}, "logprobs": None,
                                    "finish_reason": None}]}
    assert frame_json(chunks.content(text)) == content
