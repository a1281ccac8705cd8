"""Request bodies -> agent input, or a 4xx naming the offending parameter."""

import pytest

from hermes_gateway._core.http.errors import ApiError
from hermes_gateway._core.api_server.validation import parse_chat_request, parse_responses_request

MODELS = ("hermes-gateway",)


def chat(body, default_stream=False):
    return parse_chat_request(body, models=MODELS, default_stream=default_stream)


def responses(body, store=None):
    store = store or {}
    return parse_responses_request(body, models=MODELS, default_stream=False, conversation_of=store.get)


def refused(fn, body, **kw):
    with pytest.raises(ApiError) as info:
        fn(body, **kw)
    return info.value


def test_chat_last_user_message_is_the_turn_and_the_rest_is_history():
    turn = chat({"model": "hermes-gateway", "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "again"}]})
    assert turn.message == "again"
    assert [m["role"] for m in turn.history] == ["system", "user", "assistant"]
    assert turn.history[1]["content"] == "hi\nthere"


@pytest.mark.parametrize("body_stream, default, expected", [
    (None, True, True), (None, False, False), (False, True, False), (True, False, True)])
def test_client_stream_field_wins_over_the_config(body_stream, default, expected):
    body = {"model": "hermes-gateway", "messages": [{"role": "user", "content": "x"}]}
    if body_stream is not None:
        body["stream"] = body_stream
    assert chat(body, default_stream=default).stream is expected


@pytest.mark.parametrize("body, status, param", [
    ({"messages": [{"role": "user", "content": "x"}]}, 400, "model"),
    ({"model": "gpt-9", "messages": [{"role": "user", "content": "x"}]}, 404, "model"),
    ({"model": 3, "messages": [{"role": "user", "content": "x"}]}, 400, "model"),
    ({"model": "hermes-gateway"}, 400, "messages"),
    ({"model": "hermes-gateway", "messages": []}, 400, "messages"),
    ({"model": "hermes-gateway", "messages": "hi"}, 400, "messages"),
    ({"model": "hermes-gateway", "messages": ["hi"]}, 400, "messages[0]"),
    ({"model": "hermes-gateway", "messages": [{"role": "wizard", "content": "x"}]}, 400, "messages[0].role"),
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": 5}]}, 400, "messages[0].content"),
    ({"model": "hermes-gateway", "messages": [{"role": "user"}]}, 400, "messages[0].content"),
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, 400,
     "messages[0].content[0].image_url"),  # no image_url object at all
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}, 400,
     "messages[0].content[0].input_audio"),  # no input_audio object at all (issue 22: audio parts are taken)
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": [{"type": "input_file"}]}]}, 400,
     "messages[0].content[0].type"),
    ({"model": "hermes-gateway", "messages": [{"role": "assistant", "content": "x"}]}, 400, "messages[0].role"),
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": "  "}]}, 400, "messages[0].content"),
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": "x"}], "stream": "yes"}, 400, "stream"),
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": "x"}], "stream_options": 1}, 400,
     "stream_options"),
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": "x"}], "temperature": "hot"}, 400,
     "temperature"),
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, 400,
     "max_tokens"),
    ({"model": "hermes-gateway", "messages": [{"role": "user", "content": "x"}], "n": 2}, 400, "n"),
])
def test_chat_bad_input_is_refused_with_the_param_named(body, status, param):
    err = refused(chat, body)
    assert (err.status, err.param) == (status, param)
    assert err.body()["error"]["type"] == "invalid_request_error"
    assert err.message


def test_responses_string_input_and_instructions():
    turn = responses({"model": "hermes-gateway", "input": "hi", "instructions": "be brief"})
    assert turn.message == "hi"
    assert turn.history == [{"role": "system", "content": "be brief"}]
    assert turn.conversation == []


def test_responses_previous_response_id_brings_the_earlier_conversation():
    earlier = [{"role": "user", "content": "my name is Ada"}, {"role": "assistant", "content": "hi Ada"}]
    turn = responses({"model": "hermes-gateway", "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "what is my name?"}]}],
        "previous_response_id": "resp_1"}, store={"resp_1": earlier})
    assert turn.history == earlier
    assert turn.message == "what is my name?"


@pytest.mark.parametrize("body, status, param", [
    ({"model": "hermes-gateway"}, 400, "input"),
    ({"model": "hermes-gateway", "input": ""}, 400, "input"),
    ({"model": "hermes-gateway", "input": []}, 400, "input"),
    ({"model": "hermes-gateway", "input": 7}, 400, "input"),
    ({"model": "hermes-gateway", "input": [{"type": "function_call_output", "output": "x"}]}, 400,
     "input[0].call_id"),
    ({"model": "hermes-gateway", "input": [{"type": "web_search_call"}]}, 400, "input[0].type"),
    ({"model": "hermes-gateway", "input": [{"role": "user", "content": [{"type": "input_image"}]}]}, 400,
     "input[0].content[0].image_url"),
    ({"model": "hermes-gateway", "input": [{"role": "user", "content": [{"type": "input_file"}]}]}, 400,
     "input[0].content[0].type"),
    ({"model": "hermes-gateway", "input": "x", "previous_response_id": "resp_nope"}, 404, "previous_response_id"),
    ({"model": "hermes-gateway", "input": "x", "instructions": 5}, 400, "instructions"),
    ({"model": "hermes-gateway", "input": "x", "store": "no"}, 400, "store"),
    ({"model": "nope", "input": "x"}, 404, "model"),
])
def test_responses_bad_input_is_refused_with_the_param_named(body, status, param):
    err = refused(responses, body)
    assert (err.status, err.param) == (status, param)


def test_model_ids_are_the_api_name_then_real_endpoint_names_once_each():
    from hermes_gateway._core.api_server.validation import model_ids
    from hermes_gateway._core.config import parse_config

    assert model_ids(parse_config({}, env={})) == ("hermes-gateway",)  # the demo model's name is not offered
    config = parse_config({"model": {"base_url": "http://127.0.0.1:1/v1", "name": "gpt-4o-mini",
                                     "fallback": [{"base_url": "http://127.0.0.1:2/v1", "name": "gpt-4o-mini"},
                                                  {"base_url": "http://127.0.0.1:3/v1", "name": "qwen3"}, "demo"]},
                           "api_server": {"model_name": "my-bot"}}, env={})
    assert model_ids(config) == ("my-bot", "gpt-4o-mini", "qwen3")


def test_a_conversation_may_end_with_tool_results_and_keeps_its_calls():
    turn = chat({"model": "hermes-gateway", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}], "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}, "extra": 1}]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "r"}]}]})
    assert turn.message is None
    assert turn.history[1] == {"role": "assistant", "content": "no", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    assert turn.history[2] == {"role": "tool", "content": "r", "tool_call_id": "c1"}


def test_responses_items_become_messages_with_calls_merged():
    turn = responses({"model": "hermes-gateway", "input": [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "let me look"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "1"},
        {"type": "function_call_output", "call_id": "b", "output": "2"}]})
    assert turn.message is None
    assert [m["role"] for m in turn.history] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in turn.history[1]["tool_calls"]] == ["a", "b"]
    assert [i["type"] for i in turn.input_items] == ["message", "message", "function_call", "function_call",
                                                     "function_call_output", "function_call_output"]
    assert all(i["id"] for i in turn.input_items)


def test_vision_off_refuses_images_but_not_text():
    body = {"model": "hermes-gateway", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    assert parse_chat_request(body, models=MODELS, vision=False).message == "hi"
    body["messages"][0]["content"].append({"type": "image_url", "image_url": {"url": "https://x/a.png"}})
    with pytest.raises(ApiError) as err:
        parse_chat_request(body, models=MODELS, vision=False)
    assert err.value.code == "images_not_supported"
