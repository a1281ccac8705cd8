"""The demo model's answers: deterministic, and what each command promises."""

import json

from hermes_gateway._core.demo.model import plan_reply, responses_input_to_messages, split_tokens


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def test_echo_returns_exactly_the_text() -> None:
    assert plan_reply(user("echo: Hello,  world!\n  second line ")).text == "Hello,  world!\n  second line "
    assert plan_reply(user("ECHO:x")).text == "x"


def test_think_wraps_reasoning_then_the_text() -> None:
    text = plan_reply(user("think: the answer")).text
    assert text.startswith("<think>") and text.endswith("</think>\n\nthe answer")


def test_tool_command_makes_a_tool_call_and_the_result_becomes_the_answer() -> None:
    messages = user('tool: calculate {"expression": "1+1"}')
    reply = plan_reply(messages)
    assert reply.text == "" and reply.finish_reason == "tool_calls"
    call = reply.tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("calculate", {"expression": "1+1"})
    messages += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": call.call_id, "type": "function", "function": {"name": "calculate", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": call.call_id, "content": "2"}]
    assert plan_reply(messages).text == "The tool calculate returned: 2"


def test_anything_else_gets_the_same_introduction_every_time() -> None:
    first, second = plan_reply(user("what is up?")), plan_reply(user("what is up?"))
    assert first == second and "demo model" in first.text and first.text.count("\n\n") == 2
    assert "model.base_url" in first.text and 80 <= len(first.text.split()) <= 150


def test_tokens_join_back_exactly() -> None:
    for text in ["", "one", "  lead and trail  ", "a\n\nb\tc", "ünï ✓ code"]:
        assert "".join(split_tokens(text)) == text


def test_responses_input_maps_to_chat_messages() -> None:
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
             {"type": "function_call", "call_id": "c", "name": "t", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c", "output": "ok"}]
    messages = responses_input_to_messages(items, "sys")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert plan_reply(messages).text == "The tool t returned: ok"


# -- playing along with API clients (tools, structured output, limits, images) ------------------------------

from hermes_gateway._core.demo.model import DemoOptions  # noqa: E402

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def test_a_prompt_naming_an_offered_tool_calls_it_with_schema_arguments() -> None:
    reply = plan_reply(user("please use get_weather now"), DemoOptions.from_chat({"tools": [WEATHER]}))
    (call,) = reply.tool_calls
    assert call.name == "get_weather" and set(json.loads(call.arguments)) == {"city"}
    assert reply.finish_reason == "tool_calls"


def test_tool_choice_decides() -> None:
    offered = {"tools": [WEATHER]}
    assert not plan_reply(user("hello"), DemoOptions.from_chat(offered)).tool_calls  # auto, not asked
    assert plan_reply(user("hello"), DemoOptions.from_chat({**offered, "tool_choice": "required"})).tool_calls
    assert not plan_reply(user("use get_weather"), DemoOptions.from_chat({**offered, "tool_choice": "none"})).tool_calls
    named = DemoOptions.from_responses({"tools": [{"type": "function", "name": "a"}, {"type": "function", "name": "b"}],
                                        "tool_choice": {"type": "function", "name": "b"}})
    assert [c.name for c in plan_reply(user("hi"), named).tool_calls] == ["b"]


def test_json_formats_and_the_tool_result_in_json() -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    options = DemoOptions.from_chat({"response_format": {"type": "json_schema", "json_schema": {"schema": schema}}})
    assert json.loads(plan_reply(user("Oslo"), options).text) == {"answer": "Oslo"}
    messages = [*user("x"), {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]
    assert json.loads(plan_reply(messages, options).text) == {"answer": "sunny"}
    assert json.loads(plan_reply(user("y"), DemoOptions.from_responses(
        {"text": {"format": {"type": "json_object"}}})).text) == {"answer": "y"}


def test_max_tokens_cuts_with_length() -> None:
    reply = plan_reply(user("echo: one two three four"), DemoOptions.from_chat({"max_tokens": 2}))
    assert (reply.text, reply.finish_reason) == ("one two", "length")
    assert plan_reply(user("echo: one two"), DemoOptions.from_chat({"max_tokens": 2})).finish_reason == "stop"


def test_an_image_is_described() -> None:
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (7, 1)).save(buffer, format="GIF")
    url = "data:image/gif;base64," + base64.b64encode(buffer.getvalue()).decode()
    content = [{"type": "text", "text": "what is it"}, {"type": "image_url", "image_url": {"url": url}}]
    assert plan_reply([{"role": "user", "content": content}]).text == "I see a GIF image of 7x1 pixels."
    broken = [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
    assert "not an image" in plan_reply([{"role": "user", "content": broken}]).text


def test_hostile_requests_never_raise() -> None:
    for request in ({"tools": "x"}, {"tools": [1, {"function": 3}]}, {"tool_choice": 5}, {"response_format": []},
                    {"max_tokens": True}, {"text": {"format": "x"}}, {"tools": [{"type": "function", "name": 1}]}):
        plan_reply(user("use x"), DemoOptions.from_chat(request))
        plan_reply(user("use x"), DemoOptions.from_responses(request))
