"""ReadGuard: interrupts and deadlines cut only upstream waits, never the consumer's own work."""

from __future__ import annotations

import asyncio

import pytest

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.guard import Interrupted, ReadGuard, UpstreamTimeout
from hermes_gateway._core.events import TextDelta

from scripted_upstream import ScriptedUpstream, chunk, model_config, text_stream


async def test_deadline_cuts_a_wait_and_reports_what_was_awaited() -> None:
    guard = ReadGuard()
    with pytest.raises(UpstreamTimeout, match="first token"):
        await guard.wait(asyncio.sleep(10), guard.loop.time() + 0.05, "first token")
    assert await guard.wait(asyncio.sleep(0, "fine"), guard.loop.time() + 0.05, "x") == "fine"


async def test_interrupt_refuses_later_waits_without_starting_them() -> None:
    guard = ReadGuard()
    guard.interrupt()
    coro = asyncio.sleep(10)
    with pytest.raises(Interrupted):
        await guard.wait(coro, float("inf"), "x")
    assert coro.cr_frame is None  # closed, never run (no "never awaited" warning)


async def test_an_outside_cancellation_is_not_swallowed_even_if_an_interrupt_raced_it() -> None:
    guard = ReadGuard()
    started = asyncio.Event()

    async def waiter() -> None:
        started.set()
        await guard.wait(asyncio.sleep(10), float("inf"), "x")

    task = asyncio.create_task(waiter())
    await started.wait()
    await asyncio.sleep(0)
    guard.interrupt()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_slow_consumer_never_trips_the_stall_timeout(fake: ScriptedUpstream) -> None:
    fake.add(*text_stream("a ", "b", usage=(1, 2)))
    agent = AIAgent.from_config(model_config(fake.url, timeouts={"stall": 0.3, "first_token": 2}), tools=[])
    deltas = []
    async for event in agent.astream("go"):
        if isinstance(event, TextDelta):
            deltas.append(event.text)
            await asyncio.sleep(0.6)  # the consumer (a slow platform) takes longer than the stall timeout
    assert deltas == ["a ", "b"] and len(fake.requests) == 1
    await agent.aclose()


async def test_time_before_the_first_token_is_governed_by_first_token_not_stall(fake: ScriptedUpstream) -> None:
    # A reasoning model: role chunk at once, then a long silence, then the answer.
    fake.add(("data", chunk(role="assistant")), ("sleep", 0.7), *text_stream("thought it through")[1:])
    agent = AIAgent.from_config(model_config(fake.url, timeouts={"stall": 0.3, "first_token": 5}), tools=[])
    end = [e async for e in agent.astream("go")][-1]
    assert end.reply == "thought it through" and len(fake.requests) == 1
    await agent.aclose()
