"""The demo model's replies in OpenAI wire shapes: chunks, events, full responses.

Pure functions from a :class:`DemoReply` to the JSON objects a real
upstream sends, following the rules clients rely on (role once, tool-call
``id``/``name`` only in the first delta, a usage-only last chunk, dense
``sequence_number``/``output_index`` in the Responses API).
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

from .model import DemoReply, argument_pieces, tool_call_json

#: A chunk plus whether the demo should pause before sending it (it carries a token).
Paced = tuple[dict[str, Any], bool]


def sse(data: Any, event: str | None = None) -> bytes:
    """One Server-Sent Event frame."""
    body = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {body}\n\n".encode()


def usage_json(reply: DemoReply) -> dict[str, int]:
    completion = reply.completion_tokens
    return {"prompt_tokens": reply.prompt_tokens, "completion_tokens": completion,
            "total_tokens": reply.prompt_tokens + completion}


def chat_completion(reply: DemoReply, model: str, completion_id: str) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text if not reply.tool_calls else None}
    if reply.tool_calls:
        message["tool_calls"] = [tool_call_json(c) for c in reply.tool_calls]
    return {"id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}],
            "usage": usage_json(reply)}


def chat_chunks(reply: DemoReply, model: str, completion_id: str, include_usage: bool) -> Iterator[Paced]:
    """The ``chat.completion.chunk`` objects of a streamed reply, in order."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    yield chunk({"role": "assistant", "content": ""}), False
    for token in reply.text_tokens:
        yield chunk({"content": token}), True
    for index, call in enumerate(reply.tool_calls):
        yield chunk({"tool_calls": [{"index": index, "id": call.call_id, "type": "function",
                                     "function": {"name": call.name, "arguments": ""}}]}), True
        for piece in argument_pieces(call.arguments):
            if piece:
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}), True
    yield chunk({}, reply.finish_reason), False
    if include_usage:
        yield {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
               "choices": [], "usage": usage_json(reply)}, False


def responses_usage(reply: DemoReply) -> dict[str, Any]:
    completion = reply.completion_tokens
    return {"input_tokens": reply.prompt_tokens, "output_tokens": completion,
            "total_tokens": reply.prompt_tokens + completion,
            "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}


def _message_item(item_id: str, text: str, status: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}] if status == "completed" else []
    return {"id": item_id, "type": "message", "role": "assistant", "status": status, "content": content}


def _call_item(call: Any, status: str, arguments: str) -> dict[str, Any]:
    return {"id": f"fc_{call.call_id}", "type": "function_call", "status": status, "call_id": call.call_id,
            "name": call.name, "arguments": arguments}


def response_object(reply: DemoReply, model: str, response_id: str, status: str | None = None) -> dict[str, Any]:
    """The ``response`` object (non-streaming, and inside created/completed events); finished, it is
    ``incomplete`` when the reply stopped at ``max_output_tokens``."""
    output: list[dict[str, Any]] = []
    if status is None:
        status = "incomplete" if reply.cut else "completed"
    if status != "in_progress":
        if reply.text or not reply.tool_calls:
            output.append(_message_item(f"msg_{response_id}", reply.text, "completed"))
        output.extend(_call_item(c, "completed", c.arguments) for c in reply.tool_calls)
    return {"id": response_id, "object": "response", "created_at": int(time.time()), "model": model,
            "status": status, "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "usage": responses_usage(reply) if status != "in_progress" else None}


def responses_events(reply: DemoReply, model: str, response_id: str) -> Iterator[Paced]:
    """The Responses API stream events (``type`` inside each), with dense sequence numbers."""
    seq = 0

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        nonlocal seq
        data = {"type": kind, "sequence_number": seq, **fields}
        seq += 1
        return data

    yield event("response.created", response=response_object(reply, model, response_id, "in_progress")), False
    yield event("response.in_progress", response=response_object(reply, model, response_id, "in_progress")), False
    output_index = 0
    if reply.text or not reply.tool_calls:
        item_id = f"msg_{response_id}"
        yield event("response.output_item.added", output_index=0,
                    item=_message_item(item_id, "", "in_progress")), False
        part = {"type": "output_text", "text": "", "annotations": []}
        yield event("response.content_part.added", item_id=item_id, output_index=0, content_index=0,
                    part=part), False
        for token in reply.text_tokens:
            yield event("response.output_text.delta", item_id=item_id, output_index=0, content_index=0,
                        delta=token, logprobs=[]), True
        yield event("response.output_text.done", item_id=item_id, output_index=0, content_index=0,
                    text=reply.text, logprobs=[]), False
        yield event("response.content_part.done", item_id=item_id, output_index=0, content_index=0,
                    part={**part, "text": reply.text}), False
        yield event("response.output_item.done", output_index=0,
                    item=_message_item(item_id, reply.text, "completed")), False
        output_index = 1
    for offset, call in enumerate(reply.tool_calls):
        index = output_index + offset
        item_id = f"fc_{call.call_id}"
        yield event("response.output_item.added", output_index=index, item=_call_item(call, "in_progress", "")), True
        for piece in argument_pieces(call.arguments):
            if piece:
                yield event("response.function_call_arguments.delta", item_id=item_id, output_index=index,
                            delta=piece), True
        yield event("response.function_call_arguments.done", item_id=item_id, output_index=index,
                    name=call.name, arguments=call.arguments), False
        yield event("response.output_item.done", output_index=index,
                    item=_call_item(call, "completed", call.arguments)), False
    final = response_object(reply, model, response_id)
    yield event("response.incomplete" if reply.cut else "response.completed", response=final), False
