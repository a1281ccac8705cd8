"""LastSeen: where a catch-up starts reading, per channel, kept in the platform's store in one write per burst."""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_gateway import LastSeen


class Values:
    """A platform's key-value store as the context offers it, counting the writes."""

    def __init__(self, stored: dict[str, Any] | None = None) -> None:
        self.stored = dict(stored or {})
        self.writes = 0

    async def get_value(self, key: str, default: Any = None) -> Any:
        return self.stored.get(key, default)

    async def set_value(self, key: str, value: Any) -> None:
        self.writes += 1
        await asyncio.sleep(0)
        self.stored[key] = {channel: list(entry) for channel, entry in value.items()}


async def test_a_burst_is_one_write_and_an_older_message_moves_nothing():
    values = Values()
    seen = LastSeen(values, order=int, platform="acme")
    for position in ("5", "9", "7"):
        seen.note("c1", position, "dm")
    await seen.flush()
    assert seen.get("c1") == ("9", "dm")
    assert values.stored["catch_up.last_seen"] == {"c1": ["9", "dm"]} and values.writes == 1


async def test_the_least_recently_seen_channel_is_forgotten_past_the_bound():
    values = Values()
    seen = LastSeen(values, order=int, platform="acme", max_channels=2)
    seen.note("a", "1", "x")
    seen.note("b", "2", "x")
    seen.note("a", "3", "x")  # a is now the most recent
    seen.note("c", "4", "x")
    await seen.flush()
    assert (seen.get("a"), seen.get("b"), seen.get("c")) == (("3", "x"), None, ("4", "x"))
    assert sorted(values.stored["catch_up.last_seen"]) == ["a", "c"]


async def test_load_keeps_what_was_stored_and_drops_what_is_no_position():
    values = Values({"catch_up.last_seen": {"ok": ["12", "dm"], "bad": ["twelve", "dm"], "short": ["1"],
                                            "odd": 7}})
    seen = LastSeen(values, order=int, platform="acme")
    await seen.load()
    assert [seen.get(c) for c in ("ok", "bad", "short", "odd")] == [("12", "dm"), None, None, None]


async def test_a_store_that_fails_costs_a_line_not_the_client(caplog):
    class Broken(Values):
        async def set_value(self, key: str, value: Any) -> None:
            raise RuntimeError("store down")

    seen = LastSeen(Broken(), order=int, platform="acme")
    seen.note("c1", "1", "dm")
    await seen.flush()
    assert seen.get("c1") == ("1", "dm")
    assert "acme: the last messages seen were not stored: store down" in caplog.text
