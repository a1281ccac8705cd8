"""``hermes-gateway demo-llm``: serve the built-in demo model as an OpenAI-compatible endpoint.

Point any OpenAI client (or ``model.base_url`` of another gateway) at the
printed URL. Tests and benchmarks use it as a real upstream over a socket.
Its pace is ``--tokens-per-second``, else ``model.demo.tokens_per_second``
of the config (found as ``run`` finds it), else 30.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from ..demo.server import serve


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="TCP port (0 = any free port; default 8000)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--tokens-per-second", type=float, default=None, metavar="N",
                        help="pace of the streamed tokens (0 = as fast as possible; default: the config's "
                             "model.demo.tokens_per_second, else 30)")
    parser.add_argument("--config", metavar="FILE", help="config file for model.demo.tokens_per_second (default: "
                                                        "$HERMES_CONFIG, ./config.yaml, ~/.hermes/config.yaml)")


def run(args: argparse.Namespace) -> int:
    if args.tokens_per_second is None:
        from ..config import load_config  # a ConfigError is one line and exit 2, as for every command

        args.tokens_per_second = load_config(args.config, allow_unset_env=True).model.demo_tokens_per_second
    if args.tokens_per_second < 0:
        print("hermes-gateway demo-llm: --tokens-per-second must be >= 0", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print("hermes-gateway demo-llm: --port must be between 0 and 65535", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(args.host, args.port, args.tokens_per_second))
    except OSError as exc:
        print(f"hermes-gateway demo-llm: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    return 0


async def _serve(host: str, port: int, tokens_per_second: float) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix
            pass
    async with serve(host, port, tokens_per_second) as base_url:
        print(f"demo-llm: serving the demo model at {base_url} (Chat Completions, Responses, models); "
              f"Ctrl-C to stop", flush=True)
        await stop.wait()
