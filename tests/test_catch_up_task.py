"""``hermes_gateway.CatchUpTask``: one catch-up at a time, only when asked for, stopped with what was seen kept."""

from __future__ import annotations

import asyncio

from hermes_gateway import CatchUpTask, LastSeen

from test_last_seen import Values


class Context(Values):
    def __init__(self, catch_up: str) -> None:
        super().__init__()
        self.catch_up = catch_up


class Reader(CatchUpTask):
    """Reads until told to finish, counting its runs."""

    def __init__(self, catch_up: str = "answer") -> None:
        context = Context(catch_up)
        super().__init__(context, LastSeen(context, order=int, platform="acme"), name="acme-catch-up")
        self.runs = 0
        self.finish = asyncio.Event()

    async def read_missed(self) -> None:
        self.runs += 1
        self.last_seen.note("c1", str(self.runs), "dm")
        await self.finish.wait()


async def test_starts_while_one_runs_make_no_second_and_wait_returns_when_it_ends() -> None:
    reader = Reader()
    reader.start()
    reader.start()
    await asyncio.sleep(0)
    reader.start()
    assert reader.runs == 1
    reader.finish.set()
    await reader.wait()
    reader.start()  # after the end, a reconnect reads again
    await reader.wait()
    assert reader.runs == 2


async def test_nothing_is_read_unless_catch_up_is_answer() -> None:
    reader = Reader("skip")
    reader.start()
    await reader.wait()
    await asyncio.sleep(0)
    assert reader.runs == 0


async def test_stop_cancels_the_read_and_writes_what_was_seen() -> None:
    reader = Reader()
    reader.start()
    await asyncio.sleep(0)
    await reader.stop()
    assert reader.runs == 1 and not reader.finish.is_set()
    assert reader.context.stored == {"catch_up.last_seen": {"c1": ["1", "dm"]}}
