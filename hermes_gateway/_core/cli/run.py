"""``hermes-gateway run``: serve the API and every enabled platform until SIGTERM or Ctrl-C.

On the signal the gateway stops in order (platforms, then open API streams
end with a proper final event, then the listener) and the process exits 0.
A second signal while stopping exits at once (130). ``--loop`` picks the
event loop (:mod:`.event_loop`: uvloop when installed).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from ..errors import StartError
from ..gateway import Gateway
from ..plugins import installed_plugins
from .event_loop import CHOICES, LoopUnavailable, choose_loop
from .heap import settle_heap
from .loading import load_checked, warn

log = logging.getLogger("hermes_gateway._core.cli")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")
    parser.add_argument("--loop", choices=CHOICES, default="auto",
                        help="event loop: uvloop when installed (auto, the default), or asyncio's own")


def run(args: argparse.Namespace) -> int:
    config, plugins = load_checked(args.config)
    try:
        loop_factory, loop_name = choose_loop(getattr(args, "loop", "auto"))
    except LoopUnavailable as exc:
        print(f"hermes-gateway: cannot start: {exc}", file=sys.stderr)
        return 2
    log.info("event loop: %s", loop_name)
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            return runner.run(serve(config, plugins))
    except BrokenPipeError:  # stdout's reader went away (`run | head -1`): main ends quietly
        raise
    except OSError as exc:  # the port is taken, the host cannot be bound, ...
        print(f"hermes-gateway: cannot start: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except StartError as exc:
        print(f"hermes-gateway: cannot start: {exc}", file=sys.stderr)
        return 1


async def serve(config, plugins=None) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)

    def on_signal() -> None:
        if stop.is_set():
            sys.exit(130)  # a second Ctrl-C: the operator wants out now
        stop.set()

    for sig in signals:
        loop.add_signal_handler(sig, on_signal)
    if plugins is None:
        plugins = installed_plugins()
    warn(config, plugins, [name for name in plugins.platforms() if config.platform_enabled(name)])
    try:
        async with Gateway(config, plugins) as gateway:
            parts = []
            if gateway.url:
                served = ["OpenAI-compatible API at /v1"] if config.api_server.enabled else []
                served += [f"web console at {gateway.url}/ui"] if config.web_enabled else []
                parts.append(f"listening on {gateway.url}" + (f" ({', '.join(served)})" if served else ""))
            if gateway.started_platforms:
                parts.append("platforms: " + ", ".join(gateway.started_platforms))
            settle_heap()  # start-up's objects live as long as the process: no collection need walk them
            model = "demo model" if config.model.is_demo else f"model {config.model.endpoint.name}"
            print(f"hermes-gateway: {'; '.join(parts) or 'nothing to serve'}; {model}; Ctrl-C to stop", flush=True)
            await stop.wait()
            print("hermes-gateway: stopping", flush=True)
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
    print("hermes-gateway: stopped", flush=True)
    return 0
