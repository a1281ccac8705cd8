"""``send_to_chat``: text and files into a chat through the delivery core, onto the reference platform's screen."""

from __future__ import annotations

import pytest

from hermes_gateway import MediaLimits, RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.errors import ConfigError
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.outbound.home import resolve_chat
from hermes_gateway._core.outbound.send import FileUnreadable, delivered_all, read_files, send_to_chat
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway.testing import Fault, ReferencePlatform


def gateway_with(platform: ReferencePlatform, **sections) -> Gateway:
    config = parse_config({"store": {"path": ":memory:"}, **sections}, source="config.yaml", env={})
    return Gateway(config, make_plugins(builtins=(), load_entry_points=False, extra=[platform]), serve=False)


async def test_text_and_a_file_arrive_once_each(tmp_path):
    platform = ReferencePlatform(media=MediaLimits())
    report_file = tmp_path / "report.txt"
    report_file.write_bytes(b"all systems nominal\n")
    media = read_files([report_file])
    async with gateway_with(platform) as gateway:
        report = await send_to_chat(gateway.delivery, "reference", "ops", "Morning report", media=media)
    chat = platform.chat("ops")
    assert delivered_all(report, media) is None
    texts = [m.text for m in chat.messages if m.media is None]
    files = [m.media for m in chat.messages if m.media is not None]
    assert texts == ["Morning report"]
    assert [(f.filename, f.data) for f in files] == [("report.txt", b"all systems nominal\n")]
    assert [c.kind for c in chat.calls if c.outcome == "ok"].count("send") == 1


async def test_a_long_text_is_split_at_the_platform_limit_and_paced_through_429s():
    platform = ReferencePlatform(max_message_length=100, budgets={"default": RateBudget(rate=20.0, burst=5)})
    text = " ".join(f"word{i}" for i in range(80))
    async with gateway_with(platform) as gateway:
        platform.chat("c").fail_next(Fault.rate_limited(0.2))
        report = await send_to_chat(gateway.delivery, "reference", "c", text)
    chat = platform.chat("c")
    assert report.delivered and report.rate_limited == 1
    assert " ".join(chat.screen).split() == text.split()  # every word once, in order, nothing repeated
    assert all(len(m) <= 100 for m in chat.screen) and len(chat.screen) > 1


async def test_a_chat_that_refuses_is_reported_in_one_line():
    platform = ReferencePlatform()
    async with gateway_with(platform) as gateway:
        platform.chat("gone").fail_next(Fault.error(retryable=False), times=5)
        report = await send_to_chat(gateway.delivery, "reference", "gone", "hello?")
    problem = delivered_all(report, ())
    assert problem is not None and "\n" not in problem


def test_home_means_the_platforms_home_chat():
    config = parse_config({"platforms": {"reference": {"home_chat": " 1234 "}}}, source="config.yaml", env={})
    assert resolve_chat(config, "reference", "home") == "1234"
    assert resolve_chat(config, "reference", "77") == "77"


def test_home_without_a_home_chat_names_the_key():
    config = parse_config({"platforms": {"reference": {}}}, source="config.yaml", env={})
    with pytest.raises(ConfigError) as caught:
        resolve_chat(config, "reference", "home")
    assert str(caught.value) == ("config.yaml: platforms.reference.home_chat: a chat id, since 'home' was asked for "
                                 "as the chat of reference")


def test_a_missing_file_fails_before_anything_is_sent(tmp_path):
    with pytest.raises(FileUnreadable) as caught:
        read_files([tmp_path / "nope.pdf"])
    assert "nope.pdf" in str(caught.value) and "\n" not in str(caught.value)



async def test_two_replicas_sharing_redis_send_within_the_chats_budget(redis_server):
    import asyncio

    redis_server.flush()
    strict = RateBudget(rate=4.0, burst=1)   # what the platform declares, and enforces to the call
    platform = ReferencePlatform(budgets={"default": strict})
    coordination = {"coordination": {"url": redis_server.url}}
    replicas = [gateway_with(platform, **coordination), gateway_with(platform, **coordination)]
    for replica in replicas:
        await replica.start()
    try:
        reports = await asyncio.gather(*(send_to_chat(replica.delivery, "reference", "team", f"alert {i} from {n}")
                                         for i in range(4) for n, replica in enumerate(replicas)))
    finally:
        for replica in replicas:
            await replica.stop()
    chat = platform.chat("team")
    assert all(r.delivered for r in reports)
    assert sorted(chat.screen) == sorted(f"alert {i} from {n}" for i in range(4) for n in range(2))
    assert chat.throttled == 0 and chat.violations == []


async def test_alone_the_same_sends_would_meet_429s():
    """The check above can fail: two replicas with budgets of their own flood the chat."""
    import asyncio

    strict = RateBudget(rate=4.0, burst=1)
    platform = ReferencePlatform(budgets={"default": strict})
    replicas = [gateway_with(platform), gateway_with(platform)]
    for replica in replicas:
        await replica.start()
    try:
        await asyncio.gather(*(send_to_chat(replica.delivery, "reference", "team", f"alert {i} from {n}")
                               for i in range(4) for n, replica in enumerate(replicas)))
    finally:
        for replica in replicas:
            await replica.stop()
    assert platform.chat("team").throttled > 0


async def test_files_alone_are_sent_without_an_empty_message(tmp_path):
    platform = ReferencePlatform(media=MediaLimits())
    (tmp_path / "a.txt").write_bytes(b"a")
    media = read_files([tmp_path / "a.txt"])
    async with gateway_with(platform) as gateway:
        report = await send_to_chat(gateway.delivery, "reference", "f", "", media=media)
    chat = platform.chat("f")
    assert delivered_all(report, media) is None
    assert [m.media.filename for m in chat.messages if m.media] == ["a.txt"]
    assert [m.text for m in chat.messages if m.media is None] == []
