"""The built-in deterministic demo model: what it answers, before any wire format.

It lets a fresh machine run the gateway with no API key, and gives tests a
real upstream whose answers are known in advance:

- ``echo: TEXT``  -> exactly TEXT
- ``think: TEXT`` -> a ``<think>…</think>`` block, then TEXT
- ``tool: NAME {json}`` -> a call to tool NAME with those arguments; once the
  tool result comes back, an answer quoting it
- ``describe`` (or any message with an image or a voice-note transcript)
  -> what the images are (format and size, read with Pillow) and the
  transcripts it was given, word for word
- anything else  -> a few paragraphs saying this is the demo model and how
  to configure a real one.

It also plays along with what API clients ask (:class:`DemoOptions`): it
calls an offered tool when ``tool_choice`` requires it or names it, or when
the prompt says "use NAME" / "call NAME", with arguments built from the
tool's JSON schema (:mod:`.schema`); it answers with the tool result it is
given back; with a ``json_schema`` / ``json_object`` response format it
answers JSON that satisfies it; and it stops at ``max_tokens`` with
``finish_reason: "length"``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..voice_results import TRANSCRIPT_LABEL
from .image import describe_image
from .schema import example_value

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
    cut: bool = False  # stopped at max_tokens

    @property
    def finish_reason(self) -> str:
        return "length" if self.cut else "tool_calls" if self.tool_calls else "stop"

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


@dataclass(frozen=True)
class DemoOptions:
    """What a request asks beyond its messages, read leniently from either API's body.

    ``tools``: name -> JSON schema of the parameters, in the order offered.
    ``tool_choice``: "auto", "none", "required" or a tool's name.
    ``response_format``: None, ``{"type": "json_object"}`` or ``{"type": "json_schema", "schema": ...}``.
    """

    tools: Mapping[str, Any] = field(default_factory=dict)
    tool_choice: str = "auto"
    parallel: bool = True
    response_format: Mapping[str, Any] | None = None
    max_tokens: int | None = None

    @classmethod
    def from_chat(cls, request: Mapping[str, Any]) -> "DemoOptions":
        tools: dict[str, Any] = {}
        for tool in _list(request.get("tools")):
            function = tool.get("function") if isinstance(tool, Mapping) else None
            if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                tools[function["name"]] = function.get("parameters")
        fmt = request.get("response_format")
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            inner = fmt.get("json_schema")
            fmt = {"type": "json_schema", "schema": inner.get("schema") if isinstance(inner, Mapping) else None}
        return cls(tools, _choice(request.get("tool_choice")), request.get("parallel_tool_calls") is not False,
                   fmt if isinstance(fmt, Mapping) and fmt.get("type") != "text" else None,
                   _limit(request.get("max_completion_tokens", request.get("max_tokens"))))

    @classmethod
    def from_responses(cls, request: Mapping[str, Any]) -> "DemoOptions":
        tools = {t["name"]: t.get("parameters") for t in _list(request.get("tools"))
                 if isinstance(t, Mapping) and t.get("type") == "function" and isinstance(t.get("name"), str)}
        text = request.get("text")
        fmt = text.get("format") if isinstance(text, Mapping) else None
        return cls(tools, _choice(request.get("tool_choice")), request.get("parallel_tool_calls") is not False,
                   fmt if isinstance(fmt, Mapping) and fmt.get("type") != "text" else None,
                   _limit(request.get("max_output_tokens")))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _choice(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        function = value.get("function")
        name = function.get("name") if isinstance(function, Mapping) else value.get("name")
        if isinstance(name, str):
            return name
    return "auto"


def _limit(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


NO_OPTIONS = DemoOptions()


def plan_reply(messages: Sequence[Mapping[str, Any]], options: DemoOptions = NO_OPTIONS) -> DemoReply:
    """Decide the demo model's next assistant turn from a Chat Completions message list."""
    reply = _plan(messages, options)
    limit = options.max_tokens
    if limit is not None and not reply.tool_calls:
        tokens = reply.text_tokens
        if len(tokens) > limit:
            return DemoReply(text="".join(tokens[:limit]), prompt_tokens=reply.prompt_tokens, cut=True)
    return reply


def _plan(messages: Sequence[Mapping[str, Any]], options: DemoOptions) -> DemoReply:
    prompt_tokens = sum(len(split_tokens(content_text(m.get("content")))) + 3 for m in messages)
    tool_results = _trailing_tool_results(messages)
    if tool_results:
        text = "\n".join(f"The tool {name} returned: {result}" for name, result in tool_results)
        if options.response_format is not None:
            text = _json_answer(options.response_format, "; ".join(result for _, result in tool_results))
        return DemoReply(text=text, prompt_tokens=prompt_tokens)
    last_user = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    user = content_text(last_user)
    calls = _client_tool_calls(user, options, len(messages))
    if calls:
        return DemoReply(tool_calls=calls, prompt_tokens=prompt_tokens)
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
    images = image_urls(last_user)
    documents = documents_in(user)
    heard = transcripts(user)
    if images or documents or heard or (command == "describe" and ":" in user):
        seen = [describe_image(url) for url in images] + documents
        said = [f'I heard: "{words}".' for words in heard]
        text = " ".join(([f"I see {'; '.join(seen)}."] if seen or not heard else []) + said)
        if not seen and not heard:
            text = "I see no image at all."
        if options.response_format is not None:
            text = _json_answer(options.response_format, text)
        return DemoReply(text=text, prompt_tokens=prompt_tokens)
    if options.response_format is not None:
        return DemoReply(text=_json_answer(options.response_format, " ".join(user.split())[:200]),
                         prompt_tokens=prompt_tokens)
    return DemoReply(text=_introduction(user), prompt_tokens=prompt_tokens)


def transcripts(text: str) -> list[str]:
    """The voice-note transcripts in a user message (lines the gateway marked with :data:`TRANSCRIPT_LABEL`)."""
    return [line.split(TRANSCRIPT_LABEL, 1)[1].strip() for line in text.splitlines() if TRANSCRIPT_LABEL in line]


def _client_tool_calls(user: str, options: DemoOptions, n: int) -> tuple[DemoToolCall, ...]:
    """Calls of offered tools: the one ``tool_choice`` names, those the prompt asks for ("use NAME"),
    or with ``tool_choice: required`` the first offered."""
    tools, choice = options.tools, options.tool_choice
    if not tools or choice == "none":
        return ()
    if choice not in ("auto", "required"):
        names = [choice] if choice in tools else []
    else:
        asked = [(m.start(), name) for name in tools
                 for m in [re.search(rf"\b(?:call|use|run|invoke)\s+(?:the\s+)?(?:tool\s+)?[`'\"]?"
                                     rf"{re.escape(name)}\b", user, re.IGNORECASE)] if m]
        names = [name for _, name in sorted(asked)]
        if not names and choice == "required":
            names = [next(iter(tools))]
    if not options.parallel:
        names = names[:1]
    said = " ".join(user.split())[:100] or "example"
    return tuple(DemoToolCall(f"call_demo_{n}_{i}", name,
                              json.dumps(example_value(tools[name] or {"type": "object"}, said), ensure_ascii=False))
                 for i, name in enumerate(names))


def _json_answer(fmt: Mapping[str, Any], text: str) -> str:
    """The reply as JSON: valid against the ``json_schema`` format's schema, or ``{"answer": text}``."""
    if fmt.get("type") == "json_schema":
        return json.dumps(example_value(fmt.get("schema") or {"type": "object"}, text), ensure_ascii=False)
    return json.dumps({"answer": text}, ensure_ascii=False)


def image_urls(content: Any) -> list[str]:
    """The URLs of the image parts of a message's content (``image_url`` or ``input_image``)."""
    urls = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
        elif part.get("type") == "input_image":
            url = part.get("image_url")
        else:
            continue
        if isinstance(url, str):
            urls.append(url)
    return urls


#: A document as the gateway puts it into the prompt (``[document: NAME (KIND)]`` ... ``[end of NAME]``).
_DOCUMENT = re.compile(r"^\[document: (.+?) \(([^)\n]*)\)\]\n(.*?)\n\[end of \1\]", re.MULTILINE | re.DOTALL)


def documents_in(text: str) -> list[str]:
    """One phrase per document in the text: its name, kind and first words (what the demo "read")."""
    found = []
    for match in _DOCUMENT.finditer(text):
        words = match.group(3).split()
        start = " ".join(words[:8]) + (" ..." if len(words) > 8 else "")
        found.append(f'a document {match.group(1)} ({match.group(2)}) that begins "{start}"')
    return found


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
            content = item.get("content")
            if not image_urls(content):
                content = _responses_content(content)
            messages.append({"role": item.get("role", "user"), "content": content})
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


__all__ = ["DemoOptions", "DemoReply", "DemoToolCall", "MODEL_NAME", "plan_reply", "split_tokens", "argument_pieces",
           "responses_input_to_messages"]
