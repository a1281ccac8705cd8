"""The dashboard's live feed: one reader for all listeners, a new version only on change, bounded, closable."""

from __future__ import annotations

import asyncio

from hermes_gateway._core.web.dashboard_feed import DashboardFeed


class Source:
    """A state that changes when the test says so; counts how often it was read."""

    def __init__(self) -> None:
        self.reads = 0
        self.calls = 0

    async def read(self) -> dict:
        self.reads += 1
        return {"generated_at": float(self.reads), "in_flight": [{"calls": self.calls, "running_for": self.reads}]}


async def test_a_new_version_only_when_something_changed_and_one_reader_for_all():
    source = Source()
    feed = DashboardFeed(source.read, interval=0.02)
    assert feed.join() and feed.join()  # two listeners, one reader
    assert await feed.wait(0, 1.0) and feed.version == 1
    await asyncio.sleep(0.2)  # ~10 reads, only the clock moved
    assert feed.version == 1 and source.reads >= 5
    source.calls = 1
    assert await feed.wait(1, 1.0) and feed.version == 2 and feed.latest["in_flight"][0]["calls"] == 1
    feed.leave()
    feed.leave()
    reads = source.reads
    await asyncio.sleep(0.1)
    assert source.reads == reads, "nobody listens: nothing is read"


async def test_listeners_are_bounded_and_close_wakes_every_waiter():
    feed = DashboardFeed(Source().read, interval=0.02, max_listeners=2)
    assert feed.join() and feed.join() and not feed.join()
    await feed.wait(0, 1.0)
    waiting = asyncio.ensure_future(feed.wait(feed.version, 30.0))
    await asyncio.sleep(0.05)
    await feed.close()
    assert await asyncio.wait_for(waiting, 1.0) is False
    assert not feed.join(), "a closed feed takes no listener"


async def test_a_failing_read_keeps_the_last_snapshot_and_tries_again():
    state = {"n": 0}

    async def read() -> dict:
        state["n"] += 1
        if state["n"] == 2:
            raise OSError("store away")
        return {"n": min(state["n"], 3)}

    feed = DashboardFeed(read, interval=0.02)
    feed.join()
    await feed.wait(0, 1.0)
    assert feed.latest == {"n": 1}
    await asyncio.sleep(0.2)
    assert feed.latest == {"n": 3} and feed.version == 2
    await feed.close()
