"""``PlatformContext.get_value/set_value/delete_value``: a platform's own small state, kept in the gateway's store.

The store's side on every backend is tests/store/test_store_platform_values.py; here: what a plugin sees, the
bounds, and a value that survives a gateway restart on SQLite, per account.
"""

from __future__ import annotations

import pytest

import hermes_gateway
from hermes_gateway import MessageRef, Platform, PlatformClient, PlatformContext
from hermes_gateway.testing import TestGateway


def context() -> PlatformContext:
    return PlatformContext("matrix", receive=lambda incoming: None)


async def test_json_values_come_back_as_they_were_stored():
    ctx = context()
    assert await ctx.get_value("since") is None and await ctx.get_value("since", "s0") == "s0"
    await ctx.set_value("since", "s72594_4483_1934")
    await ctx.set_value("rooms", {"!abc:example.org": {"joined": True, "seen": 12}, "ids": [1, 2.5, None]})
    assert await ctx.get_value("since") == "s72594_4483_1934"
    assert await ctx.get_value("rooms") == {"!abc:example.org": {"joined": True, "seen": 12}, "ids": [1, 2.5, None]}
    assert await ctx.delete_value("since") is True and await ctx.delete_value("since") is False
    assert await ctx.get_value("since") is None


async def test_what_is_too_big_or_not_json_is_refused_in_one_line_and_not_stored():
    ctx = context()
    with pytest.raises(ValueError, match=r"the value of 'big' is 65539 bytes as JSON; at most 65536 per key"):
        await ctx.set_value("big", "x" * 65_537)
    with pytest.raises(ValueError, match="the value of 'odd' is not JSON"):
        await ctx.set_value("odd", {1, 2})
    with pytest.raises(ValueError, match="is not JSON"):
        await ctx.set_value("nan", float("nan"))
    with pytest.raises(ValueError, match="a non-empty string of at most 200 characters"):
        await ctx.set_value("k" * 201, 1)
    with pytest.raises(ValueError, match="a non-empty string"):
        await ctx.get_value("")
    for i in range(16):  # 16 x ~64 KiB = 1 MiB: the platform's whole allowance
        await ctx.set_value(f"part{i}", "y" * 65_000)
    with pytest.raises(ValueError, match=r"storing 'one_more' would take its values past 1048576 bytes"):
        await ctx.set_value("one_more", "z" * 65_000)
    assert await ctx.get_value("one_more") is None and await ctx.get_value("big") is None


class Remembering(PlatformClient):
    """A client that counts its starts in its own stored value (as a sync position would be kept)."""

    async def start(self) -> None:
        starts = await self.context.get_value("starts", 0)
        await self.context.set_value("starts", starts + 1)

    async def on_stream_end(self, stream, message, text):
        return MessageRef(stream.chat_id, "1")


class RememberingPlugin:
    __name__ = "remembering"

    @hermes_gateway.hookimpl
    def register_platforms(self, register):
        register(Platform(name="remembering", client=Remembering))


async def test_a_value_survives_a_gateway_restart_and_each_account_has_its_own(tmp_path):
    config = {"store": {"path": str(tmp_path / "state.db")},
              "platforms": {"remembering": {}, "second": {"platform": "remembering"}}}
    for _ in range(2):
        async with TestGateway(config, RememberingPlugin()) as gateway:
            assert gateway.started_platforms == ["remembering", "second"]
    async with TestGateway(config, RememberingPlugin()) as gateway:
        assert await gateway.client("remembering").context.get_value("starts") == 3
        assert await gateway.client("second").context.get_value("starts") == 3
        await gateway.client("second").context.set_value("starts", 100)
        assert await gateway.client("remembering").context.get_value("starts") == 3
