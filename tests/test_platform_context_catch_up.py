"""What a platform's catch-up after a restart asks of the core (issue 38, item 4): ``conversation.catch_up`` and
``catch_up_window``, ``PlatformContext.recent_chats`` (the chats with a conversation active within the
window) and ``PlatformContext.paced`` (one read through the chat's budget, a 429 waited out by the core).

The Discord and Slack plugins' tests run the whole catch-up against their emulators.
"""

from __future__ import annotations

import time

import pytest

from hermes_gateway import (ConfigError, Platform, PlatformClient, PlatformContext, RateBudget, RateLimited,
                            hookimpl)
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.store import ConversationKey
from hermes_gateway.testing import TestGateway


def test_catch_up_answers_within_an_hour_by_default_and_says_what_is_wrong_in_one_line():
    default = parse_config({}, env={}).conversation
    assert (default.catch_up, default.catch_up_window) == ("answer", 3600.0)
    custom = parse_config({"conversation": {"catch_up": "skip", "catch_up_window": 600}}, env={}).conversation
    assert (custom.catch_up, custom.catch_up_window) == ("skip", 600.0)
    for section, key in (({"catch_up": "later"}, "conversation.catch_up"),
                         ({"catch_up_window": 10}, "conversation.catch_up_window"),
                         ({"catch_up_window": 2 * 86_400}, "conversation.catch_up_window")):
        with pytest.raises(ConfigError) as info:
            parse_config({"conversation": section}, source="config.yaml", env={})
        assert str(info.value).startswith(f"config.yaml: {key}: ") and "\n" not in str(info.value)


class Client(PlatformClient):
    """A platform's client that only keeps its context, for the test to use."""

    made: list["Client"] = []

    def __init__(self, settings: object, context: PlatformContext) -> None:
        super().__init__(settings, context)
        Client.made.append(self)

    async def on_stream_end(self, stream, message, text):  # pragma: no cover - nothing is sent here
        raise AssertionError("nothing is sent")


class Plugin:
    def __init__(self) -> None:
        self.platform = Platform(name="chatty", budgets={"default": RateBudget(rate=50, burst=1)}, client=Client)
        self.__name__ = "chatty_plugin"

    @hookimpl
    def register_platforms(self, register):
        register(self.platform)


async def test_recent_chats_are_this_platforms_conversations_active_within_the_window_newest_first():
    gateway = TestGateway({"platforms": {"chatty": {"enabled": True}}, "conversation": {"catch_up_window": 600}},
                          Plugin())
    async with gateway:
        client = Client.made[-1]
        assert (client.context.catch_up, client.context.catch_up_window) == ("answer", 600.0)
        store = gateway._gateway.store
        turn = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
        store.clock = lambda: time.time() - 7200
        await store.record_turn(ConversationKey("chatty", "old"), turn)
        store.clock = time.time
        await store.record_turn(ConversationKey("chatty", "dm"), turn)
        await store.record_turn(ConversationKey("other", "dm"), turn)
        await store.record_turn(ConversationKey("chatty", "room", "topic"), turn)
        assert await client.context.recent_chats(600) == [("room", "topic"), ("dm", None)]
        assert ("old", None) in await client.context.recent_chats(3 * 3600)


async def test_a_paced_read_is_made_again_after_the_429s_retry_after_and_returns_its_result():
    gateway = TestGateway({"platforms": {"chatty": {"enabled": True}}}, Plugin())
    async with gateway:
        context = Client.made[-1].context
        attempts: list[float] = []

        async def read() -> list[str]:
            attempts.append(time.monotonic())
            if len(attempts) == 1:
                raise RateLimited(0.2, "429")
            return ["a message"]

        assert await context.paced("room", read, what="read history") == ["a message"]
        assert len(attempts) == 2 and attempts[1] - attempts[0] >= 0.2
    alone = PlatformContext("chatty", receive=lambda incoming: None)

    async def once() -> str:
        return "unpaced"

    assert await alone.paced("room", once, what="read") == "unpaced"
    assert await alone.recent_chats(600) == []
