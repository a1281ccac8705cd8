"""Small pieces of the non-streaming replies and the stored-response routes.

The Chat Completions ``message`` (text, the client's tool calls, exposed
reasoning), a page of ``GET /v1/responses/{id}/input_items`` (OpenAI's
``limit``/``order``/``after`` paging), and the conversation-store key an
API conversation is recorded under (platform ``api``), so ``hermes-gateway
history`` lists it beside the chats.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Sequence

from ..store.api_owners import API_PLATFORM, owned_chat_id
from ..store.base import ConversationKey
from ..http.errors import bad_request

#: The platform name API conversations are listed under in ``hermes-gateway history``.
PLATFORM = API_PLATFORM


def chat_message(text: str, tool_calls: Sequence[dict[str, Any]], reasoning: str = "") -> dict[str, Any]:
    """The assistant ``message`` of a ``chat.completion``: content null when it only calls tools (as OpenAI)."""
    message: dict[str, Any] = {"role": "assistant", "content": text if text or not tool_calls else None,
                               "refusal": None}
    if tool_calls:
        message["tool_calls"] = [dict(c) for c in tool_calls]
    if reasoning:
        message["reasoning_content"] = reasoning
    return message


def input_items_page(items: Sequence[dict[str, Any]], query: Mapping[str, str]) -> dict[str, Any]:
    """One page of input items: ``limit`` (1-100, default 20), ``order`` (``desc`` default), ``after`` an id."""
    raw_limit = query.get("limit", "20")
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 100:
        raise bad_request("limit must be an integer between 1 and 100.", "limit")
    order = query.get("order", "desc")
    if order not in ("asc", "desc"):
        raise bad_request("order must be 'asc' or 'desc'.", "order")
    ordered = list(items) if order == "asc" else list(reversed(items))
    after = query.get("after")
    if after is not None:
        ids = [item.get("id") for item in ordered]
        if after not in ids:
            raise bad_request("after must be the id of one of this response's input items.", "after")
        ordered = ordered[ids.index(after) + 1:]
    page = ordered[:int(raw_limit)]
    return {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None, "has_more": len(ordered) > len(page)}


def record_key(history: Sequence[dict[str, Any]], message: Any, owner: str | None = None) -> ConversationKey:
    """Where an API conversation is recorded: under a fingerprint of its instructions and first user message,
    which a client resending the growing conversation (Chat Completions, stateless Responses) sends every time.
    (A ``previous_response_id`` chain keeps the key of its first response.) Two API keys sending the same
    first message are two conversations: ``owner`` is part of the fingerprint, and tags the chat id
    (:mod:`..store.api_owners`), so the web console can show a key's conversations to that key alone."""
    first: list[Any] = []  # the instructions and the first user message: the same in every later request
    for m in (*history, *([{"role": "user", "content": message}] if message is not None else ())):
        if m.get("role") in ("system", "developer", "user"):
            first.append(m)
        if m.get("role") == "user":
            break
    digest = hashlib.sha256(json.dumps([owner, first], sort_keys=True, ensure_ascii=False)
                            .encode("utf-8", "surrogatepass"))
    return ConversationKey(PLATFORM, owned_chat_id(owner, f"conv-{digest.hexdigest()[:16]}"))
