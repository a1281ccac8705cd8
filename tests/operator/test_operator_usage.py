"""Usage: ``/usage`` totals equal the sum of what the upstream reported; estimates are marked; the footer is on
the final message only; ``hermes-gateway usage`` prints the table."""

from __future__ import annotations

import asyncio
import contextlib
import io

from hermes_gateway._core.cli.main import main
from operator_helpers import ADMIN, PERSON, config, gateway, last_line, reference, say
from scripted_upstream import ScriptedUpstream, chunk, text_stream, usage_chunk


def slow_answer(*pieces: str, usage: tuple[int, int]) -> list[tuple]:
    """A streamed answer with pauses (so previews show) and the upstream's usage at the end."""
    steps: list[tuple] = [("data", chunk("", role="assistant"))]
    for piece in pieces:
        steps += [("data", chunk(piece)), ("sleep", 0.15)]
    return steps + [("data", chunk(finish="stop")), ("data", usage_chunk(*usage)), ("raw", b"data: [DONE]\n\n")]


async def test_usage_totals_are_the_sum_of_what_the_upstream_reported_with_cost():
    ref = reference()
    async with ScriptedUpstream() as up:
        for usage in ((10, 5), (20, 7), (30, 9)):
            up.add(*text_stream("ok", usage=usage))
        data = config(up.url, pricing={"small-model": {"input": 1.0, "output": 2.0}})
        async with gateway(ref, data) as gw:
            await say(gw, "a", "one")
            await say(gw, "a", "two")
            await say(gw, "b", "three", user=ADMIN)
            await say(gw, "a", "/usage")
            mine = last_line(ref, "a")
    # this chat: 30 in, 12 out; PERSON: the same two turns; cost (30*1 + 12*2) / 1e6
    assert "This chat today: 42 tokens (30 in, 12 out) in 2 turns, $0.0001" in mine
    assert "You this month: 42 tokens (30 in, 12 out) in 2 turns, $0.0001" in mine
    assert "~" not in mine.split("\n", 1)[1]


async def test_without_reported_usage_the_estimate_is_recorded_and_marked():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("a short answer")) as up:
        async with gateway(ref, config(up.url)) as gw:
            await say(gw, "a", "hello there")
            await say(gw, "a", "/usage")
            shown = last_line(ref, "a")
    line = next(x for x in shown.splitlines() if x.startswith("This chat today"))
    assert line.startswith("This chat today: ~") and "in 1 turn" in line


async def test_the_footer_is_on_the_final_message_only_once():
    ref = reference()
    async with ScriptedUpstream() as up:
        up.add(*slow_answer("Hello ", "there, ", "friend.", usage=(1200, 34)))
        data = config(up.url, usage={"footer": "cost"},
                      pricing={"small-model": {"input": 0.5, "output": 1.5}},
                      streaming={"reference": {"enabled": True, "edit_interval": 0.05, "min_tokens": 1}})
        async with gateway(ref, data) as gw:
            await say(gw, "a", "hi")
    [message] = ref.chat("a").messages
    assert message.text == "Hello there, friend.\n\n— 1,200 in · 34 out · $0.0007"
    previews = message.history[:-1]
    assert previews and not any("—" in p for p in previews)
    assert message.text.count("—") == 1


async def test_the_usage_command_prints_a_table_by_user_chat_or_model(tmp_path):
    ref = reference()
    state = tmp_path / "state.db"
    config_file = tmp_path / "config.yaml"
    config_file.write_text(f"store: {{path: {state}}}\npricing: {{big: {{input: 1, output: 1}}}}\n")
    async with ScriptedUpstream() as up:
        for usage in ((100, 10), (200, 20), (300, 30)):
            up.add(*text_stream("ok", usage=usage))
        async with gateway(ref, config(up.url, store={"path": str(state)})) as gw:
            await say(gw, "a", "one")
            await say(gw, "a", "/model big", user=ADMIN)
            await say(gw, "a", "two")
            await say(gw, "b", "three", user=ADMIN)
    by_model = await asyncio.to_thread(_cli, "usage", "--config", str(config_file))
    by_user = await asyncio.to_thread(_cli, "usage", "--by", "user", "--config", str(config_file))
    future = await asyncio.to_thread(_cli, "usage", "--since", "2999-01-01", "--config", str(config_file))
    assert by_model[0] == 0 and by_model[1].splitlines() == [
        "MODEL        TURNS  INPUT  OUTPUT     COST",
        "small-model      2    400      40        -",    # chat b never switched
        "big              1    200      20  $0.0002",
        "TOTAL            3    600      60  $0.0002"]
    rows = by_user[1].splitlines()
    assert rows[1].split()[:4] == [f"reference:{ADMIN}", "1", "300", "30"]
    assert rows[2].split()[:4] == [f"reference:{PERSON}", "2", "300", "30"]
    assert future == (0, "no usage recorded yet in that period\n")


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


async def test_a_replys_turn_and_its_usage_reach_the_store_in_one_hand_off(tmp_path, monkeypatch):
    """Issue 39: at a reply's end the turn and its usage are queued side by side, so the store's thread takes them
    in one batch (one COMMIT, one wake-up of the loop) instead of two; the history and ``/usage`` still show both."""
    from hermes_gateway._core.store import sqlite_queue

    batches: list[list[str]] = []
    run_all = sqlite_queue.StoreQueue._run_all

    def recorded(self, operations):
        batches.append([op.fn.__qualname__ for op in operations])
        return run_all(self, operations)

    monkeypatch.setattr(sqlite_queue.StoreQueue, "_run_all", recorded)
    ref = reference()
    async with ScriptedUpstream() as up:
        up.add(*text_stream("the answer", usage=(12, 3)))
        up.add(*text_stream("ok", usage=(1, 1)))
        async with gateway(ref, config(up.url, store={"path": str(tmp_path / "state.db")})) as gw:
            await say(gw, "a", "question")
            await say(gw, "a", "/usage")
            shown = last_line(ref, "a")
    assert "This chat today: 15 tokens (12 in, 3 out) in 1 turn" in shown
    together = [b for b in batches if any("_record" in n for n in b) and any("record_usage" in n for n in b)]
    assert together, batches
