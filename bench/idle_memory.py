"""Idle resident memory and start-up CPU of ``hermes-gateway run`` with all four platforms on (issue 39 item 3a).

``python bench/idle_memory.py --repeats 3``: the Telegram, Discord, Slack and WhatsApp emulators (the plugins'
own, on 127.0.0.1) and a ``hermes-gateway demo-llm`` upstream run in this process / a subprocess; a
``hermes-gateway run`` with all four platforms enabled against them (and the API server on) starts, connects
(Discord identified, Slack's socket open), then sits idle for ``--idle`` seconds. Measured per start:

* resident memory (``VmRSS``) and its peak (``VmHWM``) after the idle period, and ``Pss`` (smaps_rollup);
* the CPU the process spent from exec to the end of the idle period (all threads, ``schedstat``, ns);
* the modules imported (``len(sys.modules)`` is not visible from outside: the count of ``.py`` / ``.so``
  files mapped or opened is not either, so ``--modules`` re-runs it once with ``-X importtime`` and lists the
  heaviest top-level packages).

Then the CPU of ``hermes-gateway run --help`` and ``python -c 'import hermes_gateway'`` (children's rusage),
medians of ``--help-runs``. ``--src DIR`` runs another checkout's ``hermes_gateway`` (and its ``plugins/*``
if present) through ``PYTHONPATH`` as "before", interleaved with this tree's in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from soak import Discord, Slack, Telegram, WhatsApp, free_port  # noqa: E402  (the same emulator drivers)

import random  # noqa: E402


def env_for(src: str | None) -> dict[str, str]:
    env = {**os.environ}
    env.pop("HERMES_CONFIG", None)
    if src:
        paths = [src] + [str(p) for p in sorted(Path(src, "plugins").glob("*")) if p.is_dir()]
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def proc_status(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "Threads"):
            out[key] = int(value.split()[0])
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            out["Pss"] = int(line.split()[1])
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


def cpu_ns(pid: int) -> int:
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


class Emulators:
    async def __aenter__(self) -> "Emulators":
        rng = random.Random(1)
        self.surfaces = [cls(rng) for cls in (Telegram, Discord, Slack, WhatsApp)]
        for s in self.surfaces:
            await s.open(1)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        for s in self.surfaces:
            await s.close()

    def config(self, tmp: Path, upstream: str, store: dict[str, Any] | None = None) -> Path:
        data: dict[str, Any] = {
            "model": {"base_url": upstream, "api_key": "sk-bench", "name": "demo"},
            "api_server": {"enabled": True, "host": "127.0.0.1", "port": free_port()},
            "streaming": {"telegram": True, "discord": True, "slack": True, "whatsapp": True},
            "platforms": {s.name: s.section() for s in self.surfaces},
            "store": store or {"path": str(tmp / "state.db")},
        }
        path = tmp / "config.yaml"
        path.write_text(yaml.safe_dump(data))
        return path


async def one_start(emulators: Emulators, config: Path, home: Path, src: str | None, idle: float,
                    generation: int, extra: tuple[str, ...] = ()) -> dict[str, float]:
    env = {**env_for(src), "HERMES_HOME": str(home)}
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(sys.executable, *extra, "-m", "hermes_gateway", "run", "--config",
                                                str(config), env=env, cwd=src or None,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        banner = await asyncio.wait_for(proc.stdout.readline(), 120)
        if b"platforms:" not in banner:
            err = await proc.stderr.read() if proc.stderr else b""
            raise SystemExit(f"run did not start: {banner!r} {err[-2000:]!r}")
        for s in emulators.surfaces:
            await s.ready(generation)
        ready = time.monotonic() - started
        ready_cpu = cpu_ns(proc.pid)
        await asyncio.sleep(idle)
        status = proc_status(proc.pid)
        cpu = cpu_ns(proc.pid)
    finally:
        proc.terminate()
        await proc.communicate()
    return {"rss_mb": status["VmRSS"] / 1024, "hwm_mb": status["VmHWM"] / 1024, "pss_mb": status["Pss"] / 1024,
            "threads": status["Threads"], "fds": status["fds"], "ready_s": ready,
            "start_cpu_s": ready_cpu / 1e9, "cpu_s": cpu / 1e9}


def child_cpu(argv: list[str], env: dict[str, str], cwd: str | None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def heaviest_imports(src: str | None, config: Path, home: Path, top: int) -> list[tuple[str, float]]:
    """Run ``-X importtime`` once up to the banner; cumulative ms per top-level package imported."""
    env = {**env_for(src), "HERMES_HOME": str(home)}
    with tempfile.TemporaryFile() as log:  # a pipe would fill up and block the child before its banner
        proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "hermes_gateway", "run", "--config",
                                 str(config)], env=env, cwd=src or None, stdout=subprocess.PIPE, stderr=log)
        assert proc.stdout is not None
        proc.stdout.readline()
        time.sleep(3)
        proc.terminate()
        proc.communicate()
        log.seek(0)
        err = log.read()
    totals: dict[str, float] = {}
    for line in err.decode(errors="replace").splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m:
            name = m.group(4).split(".")[0]
            totals[name] = totals.get(name, 0.0) + int(m.group(1)) / 1000  # self time, summed per package
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]


async def main_async(args: argparse.Namespace) -> None:
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if args.src:
        trees.insert(0, ("before (--src)", args.src))
    upstream_proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "demo-llm", "--port", "0", stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL)
    assert upstream_proc.stdout is not None
    line = (await asyncio.wait_for(upstream_proc.stdout.readline(), 60)).decode()
    upstream = re.search(r"(http://\S+/v1)", line).group(1)  # type: ignore[union-attr]
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in trees}
    try:
        async with Emulators() as emulators:
            generation = 0
            with tempfile.TemporaryDirectory(prefix="hermes-idle-") as tmpdir:
                tmp = Path(tmpdir)
                home = tmp / "home"
                home.mkdir()
                config = emulators.config(tmp, upstream)
                for _ in range(args.repeats):
                    for name, src in trees:
                        generation += 1
                        r = await one_start(emulators, config, home, src, args.idle, generation)
                        results[name].append(r)
                        print(f"  {name}: " + ", ".join(f"{k} {v:.1f}" for k, v in r.items()), flush=True)
                if args.modules:
                    for name, src in trees:
                        print(f"\nheaviest packages imported by run ({name}), self ms summed:")
                        for pkg, ms in heaviest_imports(src, config, home, args.modules):
                            print(f"  {pkg:30s} {ms:8.1f}")
    finally:
        upstream_proc.terminate()
        await upstream_proc.wait()
    print(f"\nidle {args.idle:.0f} s after connecting, medians of {args.repeats} "
          f"(load average {os.getloadavg()[0]:.1f}):")
    print("| tree | VmRSS MB | peak (VmHWM) MB | Pss MB | threads | fds | ready s | CPU to ready s | CPU to end s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, rows in results.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(f"| {name} | {med['rss_mb']:.1f} | {med['hwm_mb']:.1f} | {med['pss_mb']:.1f} | {med['threads']:.0f} "
              f"| {med['fds']:.0f} | {med['ready_s']:.2f} | {med['start_cpu_s']:.2f} | {med['cpu_s']:.2f} |")
    print(f"\nCPU (user+sys, children's rusage), medians of {args.help_runs}:")
    print("| tree | `run --help` s | `import hermes_gateway` s |")
    print("|---|---:|---:|")
    for name, src in trees:
        env = env_for(src)
        helps = [child_cpu([sys.executable, "-m", "hermes_gateway", "run", "--help"], env, src)
                 for _ in range(args.help_runs)]
        imports = [child_cpu([sys.executable, "-c", "import hermes_gateway"], env, src) for _ in range(args.help_runs)]
        print(f"| {name} | {statistics.median(helps):.3f} | {statistics.median(imports):.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds idle after the platforms connected")
    parser.add_argument("--help-runs", type=int, default=7)
    parser.add_argument("--modules", type=int, default=0, help="list the N heaviest packages imported (importtime)")
    parser.add_argument("--src", default="", help="another checkout (git archive) to measure as 'before'")
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
