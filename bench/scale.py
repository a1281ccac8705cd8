"""N chats at once on one gateway process: budgets, lag, CPU and memory at scale (issue 39; run by hand).

``python bench/scale.py [--chats 1000] [--words 300] [--tps 20]``: the Telegram emulator (in this
process, its per-chat flood rule on: 1 call/s in a private chat, a 429 beyond it) receives one
message in each of N private chats at once; one ``hermes-gateway`` process (a child: this script
with ``--child``) answers them all from the demo upstream (``hermes-gateway demo-llm``, a second
child) at ``--tps`` tokens a second, ``--words`` words each: N streamed replies growing together, the
bot-wide budget (30 calls/s, burst 30) saturated by their previews. ``--platform discord|slack|whatsapp``: the
same on that platform's emulator with its flood rules (:mod:`scale_platforms`), checked against the bot budget its
plugin declares.

The gateway child measures itself (nothing here is counted by the emulator, whose arrival times a
loaded machine bunches up):

* every call leaving the gateway for the Bot API (``telegram.request.BaseRequest.post``, every kind:
  typing, previews, finals; the other platforms: ``aiohttp.ClientSession._request``), checked against the
  declared bot budget as a token bucket: "over budget" counts the calls made when the bucket held less than
  one token;
* every platform call of a reply that failed (not a 429), and whether it may have landed;
* event-loop lag, a 10 ms sleep's lateness, sampled continuously;
* CPU time of the process (all threads, ``time.process_time``) and resident memory every 100 ms, so CPU
  is split into the streaming phase (per upstream chunk) and after the model's last token (per call);
* when each reply's model stream ended (``StreamSession.finish``).

This process reads the emulator's record: 429s, when each chat's final text (no cursor) landed, how many
messages each chat was sent and shows (two: the reply shown twice, or split).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CURSOR = "▌"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_platforms  # noqa: E402  (bench/ is not a package: this script's own directory)


# ---------------------------------------------------------------------------------------------- the gateway child

def profile_clock() -> tuple[Any, ...]:
    """cProfile's timer: wall-clock by default; ``SCALE_PROFILE_CPU=1`` counts the loop thread's CPU time instead
    (a loaded machine's preemption and waits for the GIL then count for nothing)."""
    return (time.thread_time,) if os.environ.get("SCALE_PROFILE_CPU") else ()


def child(config_path: str, out_path: str, stop_path: str) -> None:
    """Run the gateway with the measuring hooks until ``stop_path`` exists; write what it saw to ``out_path``."""
    from hermes_gateway._core.delivery.session import StreamSession
    from hermes_gateway.testing import TestGateway

    platform_name = os.environ.get("SCALE_PLATFORM", "telegram")
    plugin = scale_platforms.load_plugin(platform_name)
    calls: list[tuple[float, str, str, bool]] = []
    finished: dict[str, float] = {}
    scale_platforms.count_calls(platform_name, os.environ.get("SCALE_API", ""), calls)
    finish = StreamSession.finish

    after_profile = os.environ.get("SCALE_PROFILE_AFTER")  # a cProfile of what follows the last model token
    expected = int(os.environ.get("SCALE_CHATS", "0"))
    profiler: Any = None

    def timed_finish(self: StreamSession, *args: Any, **kwargs: Any) -> Any:
        nonlocal profiler
        finished.setdefault(self.stream.chat_id, time.monotonic())
        if len(finished) == expected and not os.path.exists(out_path + ".last_token"):
            # a sampling profiler outside (py-spy) starts here: the window "after the model's last token"
            Path(out_path + ".last_token").write_text(str(os.getpid()))
        if after_profile and profiler is None and len(finished) >= expected:
            import cProfile
            profiler = cProfile.Profile(*profile_clock())
            profiler.enable()
        return finish(self, *args, **kwargs)

    StreamSession.finish = timed_finish  # type: ignore[method-assign]
    feeds = [0]  # deltas fed to the delivery (fewer than chunks when reads batch: agent/read_batching.py)
    feed = StreamSession.feed

    def counted_feed(self: StreamSession, delta: str) -> None:
        feeds[0] += 1
        feed(self, delta)

    StreamSession.feed = counted_feed  # type: ignore[method-assign]
    # every platform call of a reply that failed (not a 429): (monotonic, chat, hook, error, may have landed,
    # retryable); a failed send that is made again is a second send of one message
    call_failures: list[tuple[float, str, str, str, bool, bool]] = []
    from hermes_gateway._core.delivery import calls as core_calls, session as core_session
    from hermes_gateway._core.errors import DeliveryError, RateLimited

    def recording(original: Any) -> Any:
        def platform_call(call: Any, method: str) -> Any:
            async def recorded() -> Any:
                try:
                    return await original(call, method)
                except RateLimited:
                    raise
                except DeliveryError as exc:
                    call_failures.append((time.monotonic(), "", method, str(exc)[:160], exc.maybe_delivered,
                                          exc.retryable))
                    raise
            return recorded()
        return platform_call

    core_session.platform_call = recording(core_session.platform_call)  # type: ignore[attr-defined]
    core_calls.platform_call = recording(core_calls.platform_call)  # type: ignore[attr-defined]
    show = StreamSession._show

    async def show_with_chat(self: StreamSession, *args: Any, **kwargs: Any) -> Any:
        try:
            return await show(self, *args, **kwargs)
        except DeliveryError:
            if call_failures and not call_failures[-1][1]:
                call_failures[-1] = (call_failures[-1][0], self.stream.chat_id, *call_failures[-1][2:])
            raise

    StreamSession._show = show_with_chat  # type: ignore[method-assign]
    from hermes_gateway._core.delivery.pacing import Pacer
    charges: list[float] = []
    charge = Pacer.charge

    def timed_charge(self: Pacer, *args: Any, **kwargs: Any) -> None:
        charges.append(time.monotonic())
        charge(self, *args, **kwargs)

    Pacer.charge = timed_charge  # type: ignore[method-assign]

    async def stall(at: float, seconds: float) -> None:
        """``SCALE_STALL=AT:SECONDS``: hold the loop for SECONDS once AT seconds after the first text call left
        (what a burst of turns does to a loaded gateway), to see what in-flight calls make of it."""
        while not any(kind in ("sendMessage", "create", "chat.postMessage", "send") for _, kind, _, _ in calls[-50:]):
            await asyncio.sleep(0.05)
        await asyncio.sleep(at)
        time.sleep(seconds)  # the whole loop stops, as a long run of callbacks stops it

    import gc
    gc_pauses: list[tuple[int, float]] = []  # (generation, CPU seconds of the collecting thread) of every collection
    gc_started = [0.0]

    def gc_timer(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_started[0] = time.thread_time()
        else:
            gc_pauses.append((info["generation"], time.thread_time() - gc_started[0]))
    gc.callbacks.append(gc_timer)

    async def main() -> None:
        config = json.loads(Path(config_path).read_text())
        if os.environ.get("SCALE_STALL"):
            at, seconds = (float(v) for v in os.environ["SCALE_STALL"].split(":"))
            asyncio.get_running_loop().create_task(stall(at, seconds))
        lags: list[float] = []
        samples: list[tuple[float, float, int]] = []  # (monotonic, cpu seconds, rss bytes)
        page = os.sysconf("SC_PAGE_SIZE")
        if os.environ.get("SCALE_SLOW"):  # asyncio's debug mode logs every callback that holds the loop this long
            loop = asyncio.get_running_loop()
            loop.set_debug(True)
            loop.slow_callback_duration = float(os.environ["SCALE_SLOW"])
        api_server = scale_platforms.BENCHES[platform_name].api_server
        async with TestGateway(config, plugin, shutdown_grace=2.0, api_server=api_server) as gateway:
            if not os.environ.get("SCALE_NO_SETTLE"):  # as ``hermes-gateway run`` does once it has started
                from hermes_gateway._core.cli.heap import settle_heap
                settle_heap()
            if os.environ.get("SCALE_GC_THRESHOLD"):  # an experiment: the collector's gen-0 threshold
                gc.set_threshold(int(os.environ["SCALE_GC_THRESHOLD"]), *gc.get_threshold()[1:])
            Path(out_path + ".ready").write_text(gateway.url or "" if api_server else "")
            n = 0
            while True:
                t = time.monotonic()
                await asyncio.sleep(0.01)
                lags.append(time.monotonic() - t - 0.01)
                n += 1
                if n % 10 == 0:
                    with open("/proc/self/statm") as f:
                        rss = int(f.read().split()[1]) * page
                    samples.append((time.monotonic(), time.process_time(), rss, time.thread_time()))
                    if os.path.exists(stop_path):
                        break
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(after_profile)
            threads: dict[str, float] = {}  # CPU seconds per thread name, all of the run
            for tid in os.listdir("/proc/self/task"):
                try:
                    with open(f"/proc/self/task/{tid}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    with open(f"/proc/self/task/{tid}/comm") as f:
                        name = f.read().strip()
                except OSError:
                    continue
                threads[f"{name}:{tid}"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            with open("/proc/self/status") as f:
                hwm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM"))
            Path(out_path).write_text(json.dumps({"calls": calls, "finished": finished, "lags": lags,
                                                  "samples": samples, "peak_rss": hwm,
                                                  "threads": threads, "charges": charges,
                                                  "call_failures": call_failures, "gc": gc_pauses,
                                                  "feeds": feeds[0]}))

    # the loop ``hermes-gateway run`` serves on (uvloop when installed) unless --loop says otherwise
    from hermes_gateway._core.cli.event_loop import choose_loop
    loop_factory, loop_name = choose_loop(os.environ.get("SCALE_LOOP", "auto"))
    Path(out_path + ".loop").write_text(loop_name)
    profile = os.environ.get("SCALE_PROFILE")
    if not profile:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(main())
        return
    import cProfile
    whole = cProfile.Profile(*profile_clock())
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        whole.runcall(runner.run, main())
    whole.dump_stats(profile)


# ---------------------------------------------------------------------------------------------- the bare client

def bare(url: str, schedule_path: str, out_path: str) -> None:
    """The baseline of "CPU per platform call after the model's last token": the same final texts POSTed by a
    bare aiohttp client (one JSON body each, the answer read and parsed) at the instants the gateway's calls left,
    beside the same 10 ms lag sampler and 100 ms CPU sampler, on the same event loop; its CPU per call (all
    threads) is what the HTTP calls alone cost in Python on this machine at that pace (a paced call wakes an idle
    process: ~1 ms here for one call every 33 ms, ~0.26 ms back to back)."""
    import aiohttp

    schedule = json.loads(Path(schedule_path).read_text())  # [(seconds after the first, chat id, text)]

    async def main() -> None:
        async def sample() -> None:
            n = 0
            while True:
                await asyncio.sleep(0.01)
                n += 1
                if n % 10 == 0:
                    with open("/proc/self/statm") as f:
                        f.read()
                    time.process_time()

        sampler = asyncio.get_running_loop().create_task(sample())
        async with aiohttp.ClientSession() as session:
            async def post(chat: str, text: str) -> None:
                body = json.dumps({"chat_id": chat, "text": text}).encode()
                async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as response:
                    json.loads(await response.read())

            await post(schedule[0][1], "warm-up")  # the connection, as the gateway's was open before
            loop = asyncio.get_running_loop()
            cpu, start = time.process_time(), loop.time()
            pending = []
            for at, chat, text in schedule:
                delay = start + at - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                pending.append(loop.create_task(post(chat, text)))
            await asyncio.gather(*pending)
            cpu = time.process_time() - cpu
        sampler.cancel()
        Path(out_path).write_text(json.dumps({"calls": len(schedule), "cpu_s": cpu}))

    from hermes_gateway._core.cli.event_loop import choose_loop
    loop_factory, _ = choose_loop(os.environ.get("SCALE_LOOP", "auto"))
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(main())


# ---------------------------------------------------------------------------------------------- the parent

def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def over_budget(times: list[float], rate: float, burst: int) -> int:
    """Calls made while the declared token bucket held less than one token (0: the budget held)."""
    tokens, last, over = float(burst), None, 0
    for t in sorted(times):
        if last is not None:
            tokens = min(float(burst), tokens + (t - last) * rate)
        last = t
        if tokens < 1.0 - 1e-6:
            over += 1  # the platform would refuse it (a refused call takes no token)
        else:
            tokens -= 1.0
    return over


def _per_chat(calls: list[Any], kinds: frozenset[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, k, chat, _ in calls:
        if k in kinds:
            counts[chat] = counts.get(chat, 0) + 1
    return counts


def _leaving_by_chat(calls: list[Any], not_chat: frozenset[str]) -> dict[str, list[float]]:
    """When each chat's calls left the gateway (calls the gateway could not name a chat for are left out)."""
    by_chat: dict[str, list[float]] = {}
    for t, kind, chat, _ in calls:
        if chat and kind not in not_chat:
            by_chat.setdefault(chat, []).append(t)
    return by_chat


def max_in_window(times: list[float], window: float = 1.0) -> int:
    ordered, best, lo = sorted(times), 0, 0
    for hi, t in enumerate(ordered):
        while ordered[lo] <= t - window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


async def bare_baseline(bench: Any, seen: dict[str, Any], last_final: float, words: str, tmp: Path) -> dict[str, Any]:
    """Replay the gateway's calls after the models' last token from a bare client (:func:`bare`), same go."""
    last_token = max(seen["finished"].values())
    window = sorted((t, chat) for t, kind, chat, _ in seen["calls"]
                    if kind not in bench.not_chat_kinds and last_token < t <= last_final)
    if not window:
        return {}
    schedule = tmp / "bare_schedule.json"
    schedule.write_text(json.dumps([(t - window[0][0], chat, words) for t, chat in window]))
    out = tmp / "bare.json"
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--bare", f"{bench.api.base_url}{bench.token}/sendMessage", str(schedule), str(out))
    await child.wait()
    figures = json.loads(out.read_text())
    return {"bare_client_calls": figures["calls"], "bare_client_ms_per_call": figures["cpu_s"] / figures["calls"] * 1e3}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    words = " ".join(f"w{i % 97}" for i in range(args.words))
    tmp = Path(tempfile.mkdtemp(prefix="scale-"))
    upstream = subprocess.Popen([sys.executable, "-c", "from hermes_gateway._core.cli.main import main; raise SystemExit(main())", "demo-llm", "--port", "0",
                                 "--tokens-per-second", str(args.tps)], stdout=subprocess.PIPE, text=True)
    bench = scale_platforms.BENCHES[args.platform]()
    chat_budget, bot_budget = bench.budgets()
    try:
        line = upstream.stdout.readline() if upstream.stdout else ""
        base_url = next(w for w in line.split() if w.startswith("http"))
        async with bench:
            bench.prepare(args.chats)
            config = {
                "model": {"base_url": base_url, "name": "demo", "api_key": "sk-demo"},
                "store": {"path": str(tmp / "store.db")},
                "streaming": {bench.name: {"enabled": True, "edit_interval": 1.5, "min_tokens": 20}},
                "platforms": {bench.name: {"enabled": True, **bench.section()}},
            }
            (tmp / "config.json").write_text(json.dumps(config))
            out, stop = str(tmp / "out.json"), str(tmp / "stop")
            log = open(tmp / "gateway.log", "w")  # the gateway's own log lines (warnings), kept out of the figures
            api_base = {"telegram": "base_url", "discord": "api_base_url", "slack": "api_base_url",
                        "whatsapp": "api_base_url"}
            env = {**os.environ, "SCALE_CHATS": str(args.chats), "SCALE_PLATFORM": bench.name, "SCALE_LOOP": args.loop,
                   "SCALE_API": str(bench.section().get(api_base.get(bench.name, ""), ""))}
            gateway = subprocess.Popen([sys.executable, __file__, "--child", str(tmp / "config.json"), out, stop],
                                       stderr=log, env=env)
            try:
                while not os.path.exists(out + ".ready"):
                    if gateway.poll() is not None:
                        raise SystemExit(f"the gateway child exited before it was ready (see {tmp / 'gateway.log'})")
                    await asyncio.sleep(0.1)
                gateway_url = Path(out + ".ready").read_text() or None
                emulator_lags: list[float] = []  # this process (the emulator's) is late too on a loaded machine

                async def sample_emulator_lag() -> None:
                    while True:
                        t = time.monotonic()
                        await asyncio.sleep(0.01)
                        emulator_lags.append(time.monotonic() - t - 0.01)

                sampler = asyncio.get_running_loop().create_task(sample_emulator_lag())
                started = time.monotonic()
                for chat in range(args.chats):
                    await bench.push(chat, f"echo: {words}", gateway_url)
                pushed = time.monotonic() - started
                if args.stall_emulator:  # the emulator's process stops answering for a while (a loaded machine)
                    at, seconds = (float(v) for v in args.stall_emulator.split(":"))
                    asyncio.get_running_loop().call_later(at, time.sleep, seconds)
                # every final needs one call of the bot's budget at least
                deadline = started + args.words / args.tps + args.chats / bot_budget.rate * 1.5 + 120
                final_at: dict[int, float] = {}
                while len(final_at) < args.chats and time.monotonic() < deadline:
                    await asyncio.sleep(1.0)
                    for chat in range(args.chats):
                        if chat in final_at:
                            continue
                        screen = bench.screen(chat)
                        if screen and screen[-1] == words:
                            done = [c.at for c in bench.calls(chat) if c.ok and c.method in bench.text_kinds
                                    and c.text == words]
                            final_at[chat] = done[-1] if done else time.monotonic()
                Path(stop).write_text("1")
                sampler.cancel()
                gateway.wait(timeout=120)
            finally:
                if gateway.poll() is None:
                    gateway.kill()
            seen = json.loads(Path(out).read_text())
            records = [bench.calls(c) for c in range(args.chats)]
            refused = sum(1 for r in records for c in r if c.refused)
            if args.debug:
                for c in range(min(3, args.chats)):
                    screen = bench.screen(c)
                    print([(round(x.at - started, 3), x.method, x.ok, len(x.text or "")) for x in records[c]],
                          screen[-1][:80] if screen else None)
                for r in records:
                    if any(x.refused for x in r):
                        print([(round(x.at - started, 3), x.method, x.ok, x.refused) for x in r])
            # sends per chat: a reply is one message here (300 words < 2,000 characters), so a chat with two
            # accepted message-creating calls shows its reply twice (or split); the gateway's own record says
            # whether the second left the gateway or was the emulator counting a retried request twice
            sends = [sum(1 for x in r if x.ok and x.method in bench.send_kinds) for r in records]
            twice = [c for c, n in enumerate(sends) if n > 1]
            screens = [bench.screen(c) for c in range(args.chats)]
            if args.debug:
                for c in twice[:10]:
                    print("chat", c, "screen", [t[:30] for t in screens[c]],
                          [(round(x.at - started, 3), x.method, x.ok, len(x.text or "")) for x in records[c]])
            violations = sum(bench.violations(c) for c in range(args.chats))
            arrivals = [x.at for r in records for x in r]
            strict = sum(1 for r in records for a, b in zip(r, r[1:]) if b.at - a.at < 1.0)
            previews = sorted(x.at for r in records for x in r if x.ok and x.method in bench.text_kinds
                              and CURSOR in (x.text or ""))
            baseline = await bare_baseline(bench, seen, max(final_at.values(), default=0.0), words, tmp) \
                if bench.name == "telegram" and args.baseline and final_at else {}
    finally:
        upstream.terminate()
        upstream.wait()
    keys = {bench.key(c): c for c in range(args.chats)}
    finished = {keys[k]: v for k, v in seen["finished"].items() if k in keys}
    waits = [final_at[c] - finished[c] for c in final_at if c in finished]
    # previews that left the gateway while some final had waited over 1.1 s (longer than its own chat's refill)
    # and had not left yet: finals first means none
    texts = [(t, keys.get(chat, -1), cursor) for t, kind, chat, cursor in seen["calls"]
             if kind in bench.text_kinds]
    final_left = {chat: t for t, chat, cursor in texts if not cursor}  # the last call without cursor
    ends = sorted(finished[c] + 1.1 for c in final_left if c in finished)
    done = sorted(final_left.values())
    ahead = sum(1 for t, _, cursor in texts
                if cursor and bisect.bisect_left(ends, t) > bisect.bisect_right(done, t))
    done = sorted(final_at.values())
    if args.debug and waits:
        worst = max((c for c in final_at if c in finished), key=lambda c: final_at[c] - finished[c])
        t0 = finished[worst]
        print("worst chat", worst, "finished at", round(t0 - started, 2), [(round(c.at - t0, 3), c.method, c.ok, len(c.text or ""),
                                                                            CURSOR in (c.text or "")) for c in records[worst]])
        print("previews arriving during its wait:", sum(1 for t in previews if t0 + 1.1 < t < final_at[worst]))
    if args.debug:
        for failure in seen["call_failures"][:20]:
            print("call failed:", round(failure[0] - started, 2), failure[1:])
    gw_calls = seen["calls"]
    times = [t for t, kind, _, _ in gw_calls if kind not in bench.not_chat_kinds]
    kinds: dict[str, list[float]] = {}
    for t, kind, _, _ in gw_calls:
        kinds.setdefault(kind, []).append(t)
    samples = seen["samples"]
    last_token = max(finished.values()) if finished else started
    last_final = max(done) if done else last_token

    def cpu_at(t: float, which: int = 1) -> float:
        return min(samples, key=lambda s: abs(s[0] - t))[which]

    stream_cpu = cpu_at(last_token) - cpu_at(started)
    after_cpu = cpu_at(last_final) - cpu_at(last_token)
    after_loop = cpu_at(last_final, 3) - cpu_at(last_token, 3)
    stream_loop = cpu_at(last_token, 3) - cpu_at(started, 3)
    after_calls = sum(1 for t in times if last_token < t <= last_final)
    lags = seen["lags"]
    return {
        "platform": bench.name, "event_loop": Path(out + ".loop").read_text(), "bot_budget": f"{bot_budget.rate:g}/s burst {bot_budget.burst}",
        "chats": args.chats, "finals": len(final_at), "lost": args.chats - len(final_at),
        "pushed_s": pushed, "platform_calls": len(times), "429s": refused, "calls_inside_a_429": violations,
        "arrivals_under_1s_apart_in_a_chat": strict,
        "gateway_calls_over_chat_budget": sum(over_budget(v, chat_budget.rate, chat_budget.burst)
                                              for v in _leaving_by_chat(gw_calls, bench.not_chat_kinds).values()),
        "arrivals_max_per_s_at_emulator": max_in_window(arrivals),
        "gateway_max_per_s": max_in_window(times), "gateway_over_bot_budget": over_budget(times, bot_budget.rate, bot_budget.burst),
        "charges_over_bot_budget": over_budget(seen["charges"], bot_budget.rate, bot_budget.burst),
        "charges": len(seen["charges"]), "charges_max_per_s": max_in_window(seen["charges"]),
        "by_kind": {k: len(v) for k, v in sorted(kinds.items())},
        "chats_with_2plus_sends_at_emulator": len(twice),
        "chats_with_2plus_sends_leaving_gateway": sum(
            1 for n in _per_chat(gw_calls, bench.send_kinds).values() if n > 1),
        "chats_with_2plus_messages_on_screen": sum(1 for screen in screens if len(screen) > 1),
        "failed_calls (may have landed)": f"{len(seen['call_failures'])} "
                                           f"({sum(1 for f in seen['call_failures'] if f[4])})",
        "final_wait_p50_s": pct(waits, 50), "final_wait_p99_s": pct(waits, 99), "final_wait_max_s": max(waits or [0]),
        "previews_ahead_of_a_waiting_final": ahead,
        "emulator_lag_p99_max_ms": f"{pct(emulator_lags, 99) * 1e3:.0f} / {max(emulator_lags or [0]) * 1e3:.0f}",
        "lag_p50_ms": pct(lags, 50) * 1e3, "lag_p99_ms": pct(lags, 99) * 1e3, "lag_max_ms": max(lags) * 1e3,
        "deltas_fed_per_chunk": seen.get("feeds", 0) / max(1, len(finished) * args.words),
        "cpu_stream_s": stream_cpu, "us_per_chunk": stream_cpu / max(1, len(finished) * args.words) * 1e6,
        "cpu_after_s": after_cpu, "calls_after": after_calls, "ms_per_call_after": after_cpu / max(1, after_calls) * 1e3,
        "ms_per_call_after_loop_thread": after_loop / max(1, after_calls) * 1e3,
        **baseline, "after_vs_bare_client": after_cpu / max(1, after_calls) * 1e3 / baseline["bare_client_ms_per_call"]
        if baseline else None,
        "us_per_chunk_loop_thread": stream_loop / max(1, len(finished) * args.words) * 1e6,
        "cpu_by_thread_s": {k: round(v, 2) for k, v in seen["threads"].items()},
        "gc_ms_by_generation": {g: round(sum(s for gen, s in seen["gc"] if gen == g) * 1e3, 1) for g in (0, 1, 2)},
        "gc_runs_by_generation": {g: sum(1 for gen, _ in seen["gc"] if gen == g) for g in (0, 1, 2)},
        "gc_max_pause_ms": round(max((s for _, s in seen["gc"]), default=0.0) * 1e3, 1),
        "rss_peak_mb": seen["peak_rss"] / 2**20, "rss_after_mb": samples[-1][2] / 2**20,
        "seconds": last_final - started, "loop": args.loop, "loadavg": os.getloadavg(), "gateway_log": str(tmp / "gateway.log"),
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:5])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--bare":
        bare(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chats", type=int, default=1000)
    parser.add_argument("--platform", choices=sorted(scale_platforms.BENCHES), default="telegram",
                        help="whose emulator the chats are on (default telegram)")
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--tps", type=float, default=20.0, help="the upstream's tokens per second per reply")
    parser.add_argument("--debug", action="store_true", help="print the calls of each chat that met a 429")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--loop", choices=("asyncio", "uvloop", "auto"), default="auto",
                        help="the gateway child's event loop: 'auto' (the default) is what hermes-gateway run serves "
                             "on, uvloop when installed; 'asyncio' as all figures before 2026-12-05 10:30")
    parser.add_argument("--no-baseline", dest="baseline", action="store_false",
                        help="skip the bare client's replay of the calls after the last token (Telegram only)")
    parser.add_argument("--stall-emulator", metavar="AT:SECONDS",
                        help="hold the emulator's process SECONDS long, AT seconds after the messages went in")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:>36}: {value:.2f}" if isinstance(value, float) else f"{key:>36}: {value}")


if __name__ == "__main__":
    main()
