"""Tool-call reassembly by index, for any chunking and interleaving (property-based)."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

from hermes_gateway._core.agent.results import ToolCallAccumulator, usage_from
from hermes_gateway._core.events import UsageReport

names = st.from_regex(r"[a-z_]{1,12}", fullmatch=True)
arguments = st.dictionaries(st.text(min_size=1, max_size=8), st.one_of(st.integers(), st.text(max_size=20)),
                            max_size=4).map(lambda d: json.dumps(d, ensure_ascii=False))


@settings(max_examples=150, deadline=None)
@given(calls=st.lists(st.tuples(names, arguments), min_size=1, max_size=4), data=st.data())
def test_any_chunking_and_interleaving_reassembles_exactly(calls, data) -> None:
    # Per call: first delta has id + name (+ maybe some arguments), then argument pieces.
    queues = []
    for index, (name, args) in enumerate(calls):
        cuts = sorted(data.draw(st.lists(st.integers(0, len(args)), max_size=10)))
        pieces = [args[a:b] for a, b in zip([0, *cuts], [*cuts, len(args)])]
        first = {"index": index, "id": f"call_{index}", "type": "function",
                 "function": {"name": name, "arguments": pieces[0]}}
        queues.append([first] + [{"index": index, "function": {"arguments": p}} for p in pieces[1:]])
    accumulator = ToolCallAccumulator()
    started = []
    while any(queues):
        live = [q for q in queues if q]
        queue = data.draw(st.sampled_from(live))
        started += accumulator.add_chat_deltas([ChoiceDeltaToolCall.model_validate(queue.pop(0))])
    result = accumulator.calls()
    assert [(c.call_id, c.name, c.arguments) for c in result] == \
           [(f"call_{i}", name, args) for i, (name, args) in enumerate(calls)]
    assert sorted(s.index for s in started) == list(range(len(calls)))  # one start per call


def test_a_call_whose_name_never_arrives_is_dropped_and_missing_ids_are_made_up() -> None:
    accumulator = ToolCallAccumulator()
    accumulator.add_chat_deltas([ChoiceDeltaToolCall.model_validate({"index": 0, "function": {"arguments": "{}"}})])
    started = accumulator.add_chat_deltas([ChoiceDeltaToolCall.model_validate(
        {"index": 1, "function": {"name": "t", "arguments": "{}"}})])
    assert [(s.call_id, s.name) for s in started] == [("call_1", "t")]
    assert [c.name for c in accumulator.calls()] == ["t"]


def test_usage_from_either_api() -> None:
    class Chat:
        prompt_tokens, completion_tokens, total_tokens = 3, 4, 7

    class Responses:
        input_tokens, output_tokens, total_tokens = 5, 6, 11

    assert usage_from(Chat()) == UsageReport(3, 4, 7)
    assert usage_from(Responses()) == UsageReport(5, 6, 11)
    assert usage_from(None) is None


def test_streamed_argument_pieces_come_out_as_they_arrive_after_the_start() -> None:
    """(issue 34) Each piece of a call's arguments is an event; pieces before the name follow its start."""
    from hermes_gateway._core.agent.results import ToolCallAccumulator
    from hermes_gateway._core.events import ToolCallArguments, ToolCallStarted
    accumulator = ToolCallAccumulator()
    early = accumulator.add_chat_delta_dicts([{"index": 0, "function": {"arguments": '{"ci'}}])
    assert early == []
    started = accumulator.add_chat_delta_dicts([{"index": 0, "id": "c1", "function": {"name": "f"}}])
    assert started == [ToolCallStarted("c1", "f", 0), ToolCallArguments("c1", 0, '{"ci')]
    assert accumulator.add_chat_delta_dicts([{"index": 0, "function": {"arguments": 'ty": 1}'}}]) == \
        [ToolCallArguments("c1", 0, 'ty": 1}')]
    assert accumulator.calls()[0].arguments == '{"city": 1}'
