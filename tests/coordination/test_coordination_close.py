"""Stopping the Redis coordination never hangs on a background task that lost its cancellation."""

from __future__ import annotations

import asyncio
import logging

from hermes_gateway._core.coordination.redis import _cancel_and_wait


async def test_a_task_that_swallowed_its_cancellation_is_cancelled_again_and_stops():
    lost = []

    async def loop_that_loses_one_cancel() -> None:
        while True:
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                if not lost:  # a client library turning the cancellation into its own timeout, once
                    lost.append(1)
                    continue
                raise

    task = asyncio.get_running_loop().create_task(loop_that_loses_one_cancel())
    await asyncio.sleep(0)
    await _cancel_and_wait([task], grace=5.0)
    assert task.cancelled() and lost == [1]


async def test_a_task_that_never_stops_is_let_go_after_the_grace_with_one_line(caplog):
    release = asyncio.Event()

    async def stubborn() -> None:
        while not release.is_set():
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                pass

    task = asyncio.get_running_loop().create_task(stubborn())
    await asyncio.sleep(0)
    with caplog.at_level(logging.WARNING, logger="hermes_gateway._core.coordination"):
        await asyncio.wait_for(_cancel_and_wait([task], grace=0.6), 5.0)
    assert not task.done()
    assert [r.getMessage() for r in caplog.records] == [
        "coordination: 1 background task(s) did not stop within 0.6 s; let go"]
    release.set()
    await task
