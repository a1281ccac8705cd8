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
