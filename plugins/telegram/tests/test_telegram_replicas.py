"""Two ``hermes-gateway run`` processes as one Telegram bot, as issue 14 deploys them.

Each replica takes webhooks behind a load balancer (Telegram allows one
poller per bot, so replicas never poll), shares rate budgets, dedupe and the
per-chat lease on one real Redis, and keeps conversations in one real
PostgreSQL. The emulator is strict: a call beyond a chat's budget is a 429,
which is what two replicas with budgets of their own would cause.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import socket
import sys

import aiohttp
import pytest
import yaml
from aiohttp import web

from hermes_gateway import RateBudget
from hermes_gateway.testing import serve_locally
from hermes_telegram.emulator import SECRET_HEADER, BotApiEmulator
from telegram_test_support import TOKEN, eventually

# the repository's recording upstream (tests/agent, on the root pyproject's pythonpath): these tests need the
# whole repository, not only this plugin
scripted_upstream = pytest.importorskip("scripted_upstream", reason="run from the repository root")
ScriptedUpstream, text_stream = scripted_upstream.ScriptedUpstream, scripted_upstream.text_stream

SECRET = "replica-Webhook_secret-0123456789"
PRIVATE = RateBudget(rate=1.0, burst=1)   # Telegram's ~1 message/s in a private chat, enforced by the emulator
#: The same, counted with 0.1 s for a call's transit between two processes: the gateway's replicas charge a
#: call when they send it, the emulator counts it when it arrives, and on a machine loaded by parallel test
#: workers one replica's call can take tens of ms longer on its way than the other's (CI saw two 429s so).
#: Replicas without the shared budget still send at the same moment and meet 429s far past this.
ARRIVALS = RateBudget(rate=1 / 0.9, burst=1)

#: The line a reply a crash cut ends with (conversation.after_crash: note), as the person sees it.
CRASH_NOTE = "— interrupted; please send your message again"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoadBalancer:
    """Round-robin over the replicas' webhook routes; a replica that refuses connections is skipped (nginx's
    ``proxy_next_upstream``)."""

    def __init__(self, backends: list[str]) -> None:
        self.backends = backends
        self._next = itertools.cycle(range(len(backends)))
        self.routed: list[int] = []     # which replica took each update
        self.url = ""

    async def __aenter__(self) -> "LoadBalancer":
        app = web.Application()
        app.router.add_post("/webhooks/telegram", self._forward)
        self._runner = await serve_locally(app)
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/webhooks/telegram"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()

    async def _forward(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = {SECRET_HEADER: request.headers.get(SECRET_HEADER, ""), "Content-Type": "application/json"}
        for _ in self.backends:
            index = next(self._next)
            try:
                status = await self._post(self.backends[index], body, headers)
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                continue
            self.routed.append(index)
            return web.Response(status=status)
        return web.Response(status=502)

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        """One update to one replica: its HTTP status (a connection that fails raises)."""
        async with aiohttp.ClientSession() as http:
            async with http.post(url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=5)) as resp:
                return resp.status


def replica_config(tmp_path, name, *, api, upstream, lb, port, redis_url, postgres_url, lease_ttl=2.0):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"base_url": upstream.url, "name": "test-model", "api_key": "sk-test"},
        "api_server": {"enabled": False, "host": "127.0.0.1", "port": port},
        "streaming": {"telegram": {"enabled": True, "transport": "edit"}},  # edits: every preview is a counted call
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", "base_url": api.base_url,
                                   "mode": "webhook", "webhook_url": lb.url, "webhook_secret": SECRET}},
        "store": {"url": postgres_url},
        # None: each replica paces itself alone (bench/bench_scaleout_telegram.py measures what that costs)
        **({"coordination": {"url": redis_url, "lease_ttl": lease_ttl}} if redis_url else {}),
    }))
    return path


async def start_replica(path, home):
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN, "HERMES_HOME": str(home)}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    banner = await asyncio.wait_for(process.stdout.readline(), 60)
    assert b"platforms: telegram" in banner, (banner, await process.stderr.read(2000))
    return process


async def stop_replica(process) -> bytes:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        try:
            _, err = await asyncio.wait_for(process.communicate(), 30)
            return err
        except asyncio.TimeoutError:
            process.kill()
    await process.wait()
    return b""


def long_reply(words: int, pause: float, last: str) -> list[tuple]:
    """A reply streamed over ``words * pause`` seconds (so several previews are made), ending with ``last``."""
    steps = text_stream(*[f"word{i} " for i in range(words)], last)
    paced: list[tuple] = []
    for step in steps:
        paced.append(step)
        paced.append(("sleep", pause))
    return paced


# ---------------------------------------------------------------- the servers replicas share



@pytest.fixture(scope="module")
def postgres_server():
    from hermes_gateway.testing.postgres import start_or_skip

    server = start_or_skip()
    yield server
    server.cleanup()


@pytest.fixture
def shared(redis_server, postgres_server):
    """What two replicas of one bot share: a Redis (emptied) and a new PostgreSQL database."""
    redis_server.flush()
    name = postgres_server.create_database()
    yield redis_server.url, postgres_server.url(name)
    postgres_server.drop_database(name)


class Replicas:
    """N ``hermes-gateway run`` processes behind one load balancer, on one emulator, upstream, Redis and database."""

    def __init__(self, tmp_path, api, upstream, shared, *, count=2, lease_ttl=2.0):
        self.tmp_path, self.api, self.upstream = tmp_path, api, upstream
        self.redis_url, self.postgres_url = shared
        self.ports = [free_port() for _ in range(count)]
        self.webhooks = [f"http://127.0.0.1:{port}/webhooks/telegram" for port in self.ports]
        self.lease_ttl = lease_ttl
        self.processes: list = []
        self.errors: list[bytes] = []

    async def __aenter__(self) -> "Replicas":
        self.lb = await LoadBalancer(self.webhooks).__aenter__()
        for i, port in enumerate(self.ports):
            path = replica_config(self.tmp_path, f"replica{i}", api=self.api, upstream=self.upstream, lb=self.lb,
                                  port=port, redis_url=self.redis_url, postgres_url=self.postgres_url,
                                  lease_ttl=self.lease_ttl)
            home = self.tmp_path / f"home{i}"
            home.mkdir()
            self.processes.append(await start_replica(path, home))
        return self

    async def __aexit__(self, *exc: object) -> None:
        for process in self.processes:
            self.errors.append(await stop_replica(process))
        await self.lb.__aexit__(*exc)

    async def post_to(self, index: int, update: dict) -> int:
        """Deliver an update straight to one replica (as a retry that reached another replica would)."""
        async with aiohttp.ClientSession() as http:
            async with http.post(self.webhooks[index], json=update, headers={SECRET_HEADER: SECRET}) as resp:
                return resp.status


def sends(api, chat_id) -> list:
    return [c for c in api.chat(chat_id).calls if c.method == "sendMessage" and c.outcome == "ok"]


#: 429s a shared budget may still meet on this shared machine: Redis grants calls one token-time apart, but
#: each call then travels through its replica's own process to the platform, and a pause of one process
#: longer than the grant's margin can land two calls closer than Telegram counts (bench/README.md,
#: "Replicas"). The core waits such a 429 out; what it must never do is call inside the wait (``violations``).
STRAY = 1


def edited_in_order(api, chat_id) -> bool:
    """Whether edits went only ever to the newest message: no two replies were streaming at once."""
    edited = [int(c.params["message_id"]) for c in api.chat(chat_id).calls if c.method == "editMessageText"]
    return edited == sorted(edited)


# ---------------------------------------------------------------- the tests


async def test_two_replicas_answer_one_chat_alternately_once_each_without_flooding_and_share_history(
        tmp_path, shared):
    async with BotApiEmulator(TOKEN, rate_limit=ARRIVALS) as api, ScriptedUpstream() as upstream:
        for turn in range(4):
            upstream.add(*long_reply(24, 0.1, f"end of answer {turn}."))
        async with Replicas(tmp_path, api, upstream, shared) as replicas:
            for turn in range(4):  # each question arrives while the answer before it still streams
                await api.push_message(77, f"question {turn}")
                await eventually(lambda turn=turn: len(api.screen(77)) == turn + 1, lambda: api.chat(77).messages, timeout=30)
            await eventually(lambda: "end of answer 3." in api.screen(77)[-1] and "▌" not in api.screen(77)[-1],
                             lambda: api.chat(77).messages, timeout=30)
            routed = list(replicas.lb.routed)
        screen = api.screen(77)
    assert routed == [0, 1, 0, 1], "the load balancer alternated the updates between the replicas"
    assert len(screen) == 4 and [f"end of answer {t}." in screen[t] for t in range(4)] == [True] * 4, screen
    assert len(sends(api, 77)) == 4, "each reply was sent once"
    assert edited_in_order(api, 77), "one reply at a time in the chat, across replicas"
    assert len(api.chat(77).rate_limited) <= STRAY and api.chat(77).violations == [], \
        "the replicas shared the chat's budget"
    questions = [[m["content"] for m in seen.body["messages"] if m["role"] == "user"]
                 for seen in upstream.requests]
    assert questions[3] == ["question 0", "question 1", "question 2", "question 3"], \
        "each turn carried the turns the other replica answered"
    assert "end of answer 2." in " ".join(str(m.get("content")) for m in upstream.requests[3].body["messages"])


async def test_the_same_update_delivered_to_both_replicas_is_answered_once(tmp_path, shared):
    async with BotApiEmulator(TOKEN, rate_limit=PRIVATE) as api, ScriptedUpstream() as upstream:
        upstream.add(*long_reply(6, 0.05, "answered once."))
        upstream.add(*long_reply(6, 0.05, "answered twice!"))
        update = {"update_id": 9001, "message": {
            "message_id": 1, "date": 0, "text": "hello", "chat": {"id": 78, "type": "private", "first_name": "Ada"},
            "from": {"id": 1001, "is_bot": False, "first_name": "Ada"}}}
        async with Replicas(tmp_path, api, upstream, shared) as replicas:
            statuses = await asyncio.gather(replicas.post_to(0, update), replicas.post_to(1, update))
            await eventually(lambda: api.screen(78) and "answered once." in api.screen(78)[-1]
                             and "▌" not in api.screen(78)[-1], lambda: api.chat(78).messages)
            await asyncio.sleep(1.0)  # a second answer would have started by now
    assert statuses == [200, 200], "both replicas acknowledge the update"
    assert api.screen(78) == [" ".join(f"word{i}" for i in range(6)) + " answered once."]
    assert len(upstream.requests) == 1, "only one replica asked the model"


async def test_a_replica_killed_mid_reply_the_other_finishes_that_reply_then_answers_the_next_message(
        tmp_path, shared):
    async with BotApiEmulator(TOKEN, rate_limit=ARRIVALS) as api, ScriptedUpstream() as upstream:
        upstream.add(*long_reply(60, 0.1, "never shown."))
        upstream.add(*long_reply(6, 0.05, "answered by the survivor."))
        async with Replicas(tmp_path, api, upstream, shared, lease_ttl=2.0) as replicas:
            await api.push_message(79, "a long question")           # the balancer sends it to replica 0
            # (the cursor shows once the store holds the message: the first send has none)
            await eventually(lambda: len(api.screen(79)) == 1 and api.screen(79)[0].endswith("▌"),
                             lambda: api.chat(79).messages)
            victim = replicas.processes[0]
            victim.kill()                                           # SIGKILL: no clean-up at all
            await victim.wait()
            cut = api.screen(79)[0]
            assert cut.endswith("▌")                                # what the dead replica left
            await api.push_message(79, "are you there?")           # replica 0 refuses: replica 1 takes it
            await eventually(lambda: len(api.screen(79)) == 2 and "survivor." in api.screen(79)[1]
                             and "▌" not in api.screen(79)[1], lambda: api.chat(79).messages, timeout=30)
            await asyncio.sleep(1.5)
            routed = list(replicas.lb.routed)
    screen = api.screen(79)
    assert routed == [0, 1]
    # once the dead replica's lease ran out, the survivor finished its reply first: no cursor, the note
    # (the note follows what the store last recorded: at most one edit behind the screen at the kill)
    kept = screen[0].removesuffix("\n\n" + CRASH_NOTE)
    assert screen[0].endswith("\n\n" + CRASH_NOTE) and "▌" not in screen[0], screen
    assert kept.startswith("word0") and cut[: -len(" ▌")].rstrip().startswith(kept), screen
    assert screen[1] == " ".join(f"word{i}" for i in range(6)) + " answered by the survivor."
    assert len(upstream.requests) == 2, "the message the dead replica took is not answered again"
    survivor_saw = [m["content"] for m in upstream.requests[1].body["messages"] if m["role"] == "user"]
    assert survivor_saw == ["a long question", "are you there?"], "the cut turn is in the history"
    assert len(api.chat(79).rate_limited) <= STRAY and api.chat(79).violations == []
