"""The built-in deterministic demo model: what it answers, before any wire format.

It lets a fresh machine run the gateway with no API key, and gives tests a
real upstream whose answers are known in advance:

- ``echo: TEXT``  -> exactly TEXT
- ``think: TEXT`` -> a ``<think>…</think>`` block, then TEXT
- ``tool: NAME {json}`` -> a call to tool NAME with those arguments; once the
  tool result comes back, an answer quoting it
- anything else  -> a few paragraphs saying this is the demo model and how
  to configure a real one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

MODEL_NAME = "demo"
_TOKEN = re.compile(r"\s*\S+|\s+")
_ARG_PIECE = 6


@dataclass(frozen=True)
class DemoToolCall:
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class DemoReply:
    """One assistant turn: text, or tool calls (never both in the demo)."""

    text: str = ""
    tool_calls: tuple[DemoToolCall, ...] = ()
    prompt_tokens: int = 0

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"

    @property
    def text_tokens(self) -> list[str]:
        return split_tokens(self.text)

    @property
    def completion_tokens(self) -> int:
        return len(self.text_tokens) + sum(len(argument_pieces(c.arguments)) + 1 for c in self.tool_calls)


def split_tokens(text: str) -> list[str]:
    """Word-sized pieces (leading whitespace attached) that join back to exactly ``text``."""
    return _TOKEN.findall(text)


def argument_pieces(arguments: str) -> list[str]:
    """Tool-call arguments cut into small pieces, as real models stream them."""
    return [arguments[i:i + _ARG_PIECE] for i in range(0, len(arguments), _ARG_PIECE)] or [""]


def content_text(content: Any) -> str:
    """The text of an OpenAI message ``content``: a string, or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return str(content)


def plan_reply(messages: Sequence[Mapping[str, Any]]) -> DemoReply:
    """Decide the demo model's next assistant turn from a Chat Completions message list."""
    prompt_tokens = sum(len(split_tokens(content_text(m.get("content")))) + 3 for m in messages)
    tool_results = _trailing_tool_results(messages)
    if tool_results:
        text = "\n".join(f"The tool {name} returned: {result}" for name, result in tool_results)
        return DemoReply(text=text, prompt_tokens=prompt_tokens)
    user = next((content_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    command, _, rest = user.partition(":")
    command = command.strip().lower()
    rest = rest[1:] if rest.startswith(" ") else rest
    if command == "echo" and ":" in user:
        return DemoReply(text=rest, prompt_tokens=prompt_tokens)
    if command == "think" and ":" in user:
        thought = ("<think>\nThe person asked me to think before answering. I am the demo model, so this "
                   "reasoning is canned and should never be shown to them.\n</think>\n\n")
        return DemoReply(text=thought + rest, prompt_tokens=prompt_tokens)
    if command == "tool" and ":" in user and rest.strip():
        name, _, arguments = rest.strip().partition(" ")
        arguments = arguments.strip() or "{}"
        call = DemoToolCall(call_id=f"call_demo_{len(messages)}", name=name, arguments=arguments)
        return DemoReply(tool_calls=(call,), prompt_tokens=prompt_tokens)
    return DemoReply(text=_introduction(user), prompt_tokens=prompt_tokens)


def _trailing_tool_results(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(tool name, result) for the tool messages that end the conversation, if any."""
    results: list[Mapping[str, Any]] = []
    index = len(messages) - 1
    while index >= 0 and messages[index].get("role") == "tool":
        results.insert(0, messages[index])
        index -= 1
    if not results:
        return []
    names: dict[str, str] = {}
    if index >= 0:
        for call in messages[index].get("tool_calls") or ():
            function = call.get("function") or {}
            names[str(call.get("id"))] = str(function.get("name", "tool"))
    return [(names.get(str(m.get("tool_call_id")), "tool"), content_text(m.get("content"))) for m in results]


def _introduction(user: str) -> str:
    said = " ".join(user.split())
    if len(said) > 60:
        said = said[:57] + "..."
    quoted = f'You said: "{said}". ' if said else ""
    return (
        f"Hello! I am the built-in demo model of hermes-gateway. {quoted}I run entirely offline and "
        "always give the same answers, so I cannot really understand you, but I show how replies "
        "stream into a chat word by word.\n\n"
        "To talk to a real model, add a model section to config.yaml: set model.base_url to any "
        "OpenAI-compatible endpoint (for example https://api.openai.com/v1), model.name to the model "
        "to use (for example gpt-4o-mini), and model.api_key to your key, ideally written as "
        "${OPENAI_API_KEY} so the secret stays out of the file.\n\n"
        "Meanwhile, try \"echo: some text\", \"think: some text\", or "
        "'tool: calculate {\"expression\": \"6 * 7\"}' to see echoing, hidden reasoning and tool calls."
    )


def responses_input_to_messages(input_value: Any, instructions: str | None = None) -> list[dict[str, Any]]:
    """Responses API ``input`` (a string or a list of items) as Chat Completions messages."""
    messages: list[dict[str, Any]] = []
    if instructions:
        messages.append({"role": "system", "content": instructions})
    if isinstance(input_value, str):
        messages.append({"role": "user", "content": input_value})
        return messages
    for item in input_value or ():
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            messages.append({"role": item.get("role", "user"), "content": _responses_content(item.get("content"))})
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments", "")}}
            if messages and messages[-1].get("role") == "assistant" and "tool_calls" in messages[-1]:
                messages[-1]["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output", "")})
    return messages


def _responses_content(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    return content_text(content)


def tool_call_json(call: DemoToolCall) -> dict[str, Any]:
    return {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


__all__ = ["DemoReply", "DemoToolCall", "MODEL_NAME", "plan_reply", "split_tokens", "argument_pieces",
           "responses_input_to_messages"]
