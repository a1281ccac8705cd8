"""Instructions per request of the gateway or the relay, counted by callgrind (run by hand, not in CI).

This machine's noise (±25 % CPU, ±30 ms TTFT between runs of the same code)
hides any change smaller than ~20 % in ``bench_api_server.py``; the number of
user-space instructions a request costs does not move between runs (0.1 %),
so a change can be judged by it before the wall-clock benchmark confirms it.
The kernel's share (``send``, ``recv``, ``epoll``) is not counted.

The target runs under ``valgrind --tool=callgrind`` with counting off; after
a warm-up it is switched on (``callgrind_control -i on``), ``--waves`` waves
of ``--concurrency`` streams of ``--words`` chunks run, then it is switched
off and dumped. With a paced upstream keep the load low (e.g. 2 streams):
under valgrind the target runs ~50× slower, and a saturated target batches
work differently from a real one. Per chunk = the difference between two
``--words`` values divided by the extra chunks.

    .venv/bin/python bench/bench_instructions.py ours --words 3
    .venv/bin/python bench/bench_instructions.py ours --words 30 --pace 20 --concurrency 2 --waves 20
    .venv/bin/python bench/bench_instructions.py relay --words 3
    .venv/bin/python bench/bench_instructions.py ours --src /tmp/other_checkout   # another tree's code
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).parent))
import bench_api_server as harness  # noqa: E402


async def start_counted(args: list[str], env: dict[str, str], cwd: str | None, out: str
                        ) -> tuple[asyncio.subprocess.Process, str]:
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable, *args]
    proc = await asyncio.create_subprocess_exec(*cmd, env=env, cwd=cwd, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL)
    line = (await asyncio.wait_for(proc.stdout.readline(), 600)).decode()
    found = re.search(r"listening on (http://\S+)", line)
    if not found:
        proc.kill()
        raise SystemExit(f"could not start {args}: {line!r}")
    return proc, found.group(1)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=["ours", "relay"])
    parser.add_argument("--words", type=int, default=3, help="chunks per reply")
    parser.add_argument("--pace", type=float, default=0.0, help="upstream tokens per second (0: back to back)")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--waves", type=int, default=5)
    parser.add_argument("--src", help="run this source tree's hermes_gateway instead of the installed one")
    parser.add_argument("--keep", help="copy the callgrind output here (for callgrind_annotate)")
    args = parser.parse_args()
    upstream, upstream_url = await harness.start_process("demo-llm", "--port", "0", "--tokens-per-second",
                                                         str(args.pace), pattern=r"(http://\S+/v1)")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=args.src) if args.src else dict(os.environ)
        out = f"{tmp}/callgrind.out"
        if args.target == "relay":
            proc, url = await start_counted([harness.__file__, "--serve-relay", upstream_url], env, args.src, out)
            model = "demo"
        else:
            config = harness.gateway_config(Path(tmp), upstream_url)
            # cwd: ``-m`` puts the working directory first on sys.path, so --src must be it
            proc, url = await start_counted(["-m", "hermes_gateway", "run", "--config", str(config)], env,
                                            args.src, out)
            model = "hermes-gateway"
        words = " ".join(f"w{i}" for i in range(args.words))
        body = {"model": model, "stream": True, "messages": [{"role": "user", "content": f"echo: {words}"}]}
        endpoint = f"{url}/v1/chat/completions"
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                             timeout=aiohttp.ClientTimeout(total=600)) as session:
                async def wave(run: harness.Run) -> None:
                    await asyncio.gather(*(harness.one_stream(session, endpoint, body, args.words, run)
                                           for _ in range(args.concurrency)))
                for _ in range(2):
                    await wave(harness.Run())
                subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], capture_output=True, check=True)
                run = harness.Run()
                for _ in range(args.waves):
                    await wave(run)
                subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], capture_output=True, check=True)
                subprocess.run(["callgrind_control", "-d", str(proc.pid)], capture_output=True, check=True)
        finally:
            proc.terminate()
            await proc.wait()
            upstream.terminate()
            await upstream.wait()
        if run.errors:
            raise SystemExit(f"{run.errors} streams failed")
        total = 0
        if args.keep:
            for dump in Path(tmp).glob("callgrind.out*"):
                shutil.copy(dump, args.keep + dump.name[len("callgrind.out"):])
        for dump in Path(tmp).glob("callgrind.out*"):
            for line in dump.read_text().splitlines():
                if line.startswith(("summary:", "totals:")):
                    total = max(total, int(line.split()[1]))
    requests = args.concurrency * args.waves
    print(f"{args.target}{' (' + args.src + ')' if args.src else ''}: {total / requests / 1e6:.3f} M instructions "
          f"per request ({requests} requests of {args.words} chunks, pace {args.pace:g}/s)")


if __name__ == "__main__":
    asyncio.run(main())
