"""The scheduler on a virtual clock: cron in a time zone across both DST changes, ``every``, catch-up, restarts."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from hermes_gateway import RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.outbound.scheduler import POLL, Scheduler
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.store import MemoryStore
from hermes_gateway.testing import ReferencePlatform, run_virtual

BERLIN = ZoneInfo("Europe/Berlin")
FAST = {"default": RateBudget(rate=50.0, burst=10)}


def utc(*parts: int) -> float:
    return datetime(*parts, tzinfo=timezone.utc).timestamp()


def berlin(at: float) -> str:
    return datetime.fromtimestamp(at, tz=BERLIN).strftime("%Y-%m-%d %H:%M %Z")


class Clocked:
    """A gateway (nothing served) whose scheduler reads a wall clock that moves with the virtual loop."""

    def __init__(self, start: float, schedules: list[dict], platform: ReferencePlatform, store: MemoryStore,
                 **sections) -> None:
        config = parse_config({"schedules": schedules, **sections}, source="config.yaml", env={})
        self.gateway = Gateway(config, make_plugins(builtins=(), load_entry_points=False, extra=[platform]),
                               serve=False)
        self.gateway.store = store
        self.start = start
        self.base = None
        self.sent: list[tuple[float, str]] = []
        platform.on_call = lambda chat, call: self.sent.append((self.now(), call.text)) \
            if call.kind == "send" and call.outcome == "ok" else None

    def now(self) -> float:
        loop = asyncio.get_running_loop()
        if self.base is None:
            self.base = self.start - loop.time()
        return self.base + loop.time()

    async def run_for(self, seconds: float, *, poll: float = POLL) -> None:
        await self.gateway.start()
        scheduler = self.gateway.scheduler = Scheduler(self.gateway.turn_parts, lambda: self.gateway.inbound,
                                                       clock=self.now, poll=poll)
        scheduler.start()
        await asyncio.sleep(seconds)
        await scheduler.stop()
        await self.gateway.stop()


def test_cron_runs_at_local_time_across_both_dst_changes():
    async def main():
        platform = ReferencePlatform(budgets=FAST)
        # 02:30 does not exist in Berlin on 2026-03-29 and happens twice on 2026-10-25
        schedules = [{"name": "night", "cron": "30 2 * * *", "timezone": "Europe/Berlin", "platform": "reference",
                      "chat": "ops", "text": "nightly check"},
                     {"name": "morning", "cron": "0 8 * * 1-5", "timezone": "Europe/Berlin", "platform": "reference",
                      "chat": "team", "text": "good morning"}]
        # polled hourly, not every 30 s: the occurrences come from next_run alone (a poll only looks again), and
        # 96 wakes a run, one inside each DST hour, instead of 11,520 keep 4 virtual days from costing seconds
        spring = Clocked(utc(2026, 3, 27, 12), schedules, platform, MemoryStore())
        await spring.run_for(4 * 86400, poll=3600)
        autumn = Clocked(utc(2026, 10, 23, 12), schedules, platform, MemoryStore())
        await autumn.run_for(4 * 86400, poll=3600)
        return spring.sent, autumn.sent

    spring, autumn = run_virtual(main())
    assert [(berlin(at), text) for at, text in spring] == [
        ("2026-03-28 02:30 CET", "nightly check"),
        ("2026-03-29 03:00 CEST", "nightly check"),      # the skipped 02:30 runs right after the gap
        ("2026-03-30 02:30 CEST", "nightly check"),
        ("2026-03-30 08:00 CEST", "good morning"),       # Monday, 08:00 local in summer time
        ("2026-03-31 02:30 CEST", "nightly check"),
        ("2026-03-31 08:00 CEST", "good morning"),       # (Saturday and Sunday had none)
    ]
    assert [(berlin(at), text) for at, text in autumn] == [
        ("2026-10-24 02:30 CEST", "nightly check"),
        ("2026-10-25 02:30 CEST", "nightly check"),      # the repeated 02:30 runs once
        ("2026-10-26 02:30 CET", "nightly check"),
        ("2026-10-26 08:00 CET", "good morning"),
        ("2026-10-27 02:30 CET", "nightly check"),
        ("2026-10-27 08:00 CET", "good morning"),
    ]


def test_every_runs_on_its_grid_and_a_restart_does_not_repeat_an_occurrence():
    async def main():
        platform = ReferencePlatform(budgets=FAST)
        store = MemoryStore()
        schedules = [{"name": "tick", "every": "10s", "platform": "reference", "chat": "c", "text": "tick",
                      "catch_up": "once"}]
        first = Clocked(utc(2026, 1, 1, 0, 0, 3), schedules, platform, store)
        await first.run_for(25)            # 00:00:10, 00:00:20
        second = Clocked(utc(2026, 1, 1, 0, 0, 28), schedules, platform, store)
        await second.run_for(15)           # nothing missed; 00:00:30, 00:00:40
        third = Clocked(utc(2026, 1, 1, 0, 1, 15), schedules, platform, store)
        await third.run_for(1)             # down for 00:00:50 .. 00:01:10: catch_up once runs 00:01:10 now
        return [round(at - utc(2026, 1, 1)) for at, _ in first.sent + second.sent + third.sent]

    assert run_virtual(main()) == [10, 20, 30, 40, 75]


def test_catch_up_skip_lets_missed_occurrences_go():
    async def main():
        platform = ReferencePlatform(budgets=FAST)
        store = MemoryStore()
        schedules = [{"name": "tick", "every": "10s", "platform": "reference", "chat": "c", "text": "tick"}]
        first = Clocked(utc(2026, 1, 1, 0, 0, 3), schedules, platform, store)
        await first.run_for(10)
        later = Clocked(utc(2026, 1, 1, 0, 5, 3), schedules, platform, store)
        await later.run_for(10)
        return [round(at - utc(2026, 1, 1)) for at, _ in first.sent + later.sent]

    assert run_virtual(main()) == [10, 310]


def test_two_schedulers_sharing_a_store_run_each_occurrence_once():
    async def main():
        platform = ReferencePlatform(budgets=FAST)
        store = MemoryStore()
        schedules = [{"name": "tick", "every": "10s", "platform": "reference", "chat": "c", "text": "tick"}]
        replicas = [Clocked(utc(2026, 1, 1), schedules, platform, store) for _ in range(2)]
        await asyncio.gather(*(r.run_for(55) for r in replicas))
        # the platform's call hook is the last replica's recorder: it sees every send into the chat
        return [round(at - utc(2026, 1, 1)) for at, _ in replicas[-1].sent], platform.chat("c").screen

    sent, screen = run_virtual(main())
    assert sent == [10, 20, 30, 40, 50] and screen == ["tick"] * 5


async def test_an_occurrence_waits_for_the_reply_being_written_in_its_chat():
    """Delivered through the chat's lane: never streamed beside a reply, right after it instead."""
    from hermes_gateway import Incoming
    from hermes_gateway.testing import TestGateway, eventually

    ref = ReferencePlatform(budgets={"default": RateBudget(rate=100.0, burst=20)})
    calls: list[tuple[str, str]] = []
    ref.on_call = lambda chat, call: calls.append((call.kind, call.text)) if call.outcome == "ok" else None
    words = " ".join(f"w{i}" for i in range(60))
    config = {"model": {"demo": {"tokens_per_second": 25}},
              "streaming": {"enabled": True, "edit_interval": 0.2, "min_tokens": 2},
              "platforms": {"reference": {"enabled": True}},
              "schedules": [{"name": "pulse", "every": "1s", "platform": "reference", "chat": "a", "text": "pulse"}]}
    async with TestGateway(config, ref) as gw:
        await gw.receive(Incoming("reference", "a", f"echo: {words}", sender_id="u", update_id="1", message_id="1"))
        await eventually(lambda: ref.chat("a").screen.count("pulse") >= 1, lambda: ref.chat("a").screen)
    texts = [text for kind, text in calls if kind in ("send", "edit")]
    reply = [i for i, text in enumerate(texts) if text.startswith("w0")]
    between = texts[reply[0]:reply[-1]]
    assert "pulse" not in between, "a pulse was sent while the reply was being written"
    assert texts[reply[-1]] == words and reply[-1] - reply[0] >= 2, "the reply streamed"
