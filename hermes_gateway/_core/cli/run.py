"""``hermes-gateway run``: serve the API and every enabled platform until SIGTERM or Ctrl-C.

On the signal the gateway stops in order (platforms, then open API streams
end with a proper final event, then the listener) and the process exits 0.
A second signal while stopping exits at once (130). ``--loop`` picks the
event loop (:mod:`.event_loop`: uvloop when installed). ``--workers N`` (or
``api_server.workers``) serves the API from N processes on one port
(:mod:`.workers`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys

from ..errors import StartError
from ..http.workers import WorkerSlot
from ..plugins import installed_plugins
from .event_loop import CHOICES, LoopUnavailable, choose_loop
from .heap import settle_heap
from .loading import load_checked, warn
from .workers import check_workers, parse_worker, report_ready, supervise, watch_parent, with_workers, workers_argument

log = logging.getLogger("hermes_gateway._core.cli")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")
    parser.add_argument("--loop", choices=CHOICES, default="auto",
                        help="event loop: uvloop when installed (auto, the default), or asyncio's own")
    parser.add_argument("--workers", metavar="N", type=workers_argument, default=None,
                        help="processes serving the API on one port (default: api_server.workers, else 1; "
                             "auto = one per core)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # I/N/LISTEN_FD/CONTROL_FD: set by the parent only


def without_httpx_cli() -> None:
    """Keep ``import httpx`` (python-telegram-bot's HTTP client, the Teams SDK's) from loading httpx's
    command-line tool: httpx imports ``httpx._main`` whenever click, rich and pygments are importable,
    ~7 MB resident and ~0.1 s of CPU per start that a gateway process never uses (issue 39). httpx
    guards that import and defines a stub ``main`` when it fails; nothing else is affected."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: "not importable"


def run(args: argparse.Namespace) -> int:
    without_httpx_cli()
    config, plugins = load_checked(args.config)
    config = with_workers(config, getattr(args, "workers", None))
    check_workers(config)
    try:
        loop_factory, loop_name = choose_loop(getattr(args, "loop", "auto"))
    except LoopUnavailable as exc:
        print(f"hermes-gateway: cannot start: {exc}", file=sys.stderr)
        return 2
    log.info("event loop: %s", loop_name)
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            if getattr(args, "worker", None):  # one of several workers, started by the parent below
                slot, control = parse_worker(args.worker, config)
                config = with_workers(config, slot.count)  # as the parent counts them (``--workers`` included)
                return runner.run(serve(config, plugins, worker=slot, control=control))
            if config.api_server.workers > 1:
                return runner.run(supervise(config, args))
            return runner.run(serve(config, plugins))
    except BrokenPipeError:  # stdout's reader went away (`run | head -1`): main ends quietly
        raise
    except OSError as exc:  # the port is taken, the host cannot be bound, ...
        print(f"hermes-gateway: cannot start: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except StartError as exc:
        print(f"hermes-gateway: cannot start: {exc}", file=sys.stderr)
        return 1


async def serve(config, plugins=None, *, worker: WorkerSlot | None = None,
                control: socket.socket | None = None) -> int:
    """Run one gateway until SIGTERM/SIGINT. As one of several workers (``worker``), its banner goes to the
    parent over ``control`` instead of stdout, and the parent's exit stops it too."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)

    def on_signal() -> None:
        if stop.is_set():
            sys.exit(130)  # a second Ctrl-C: the operator wants out now
        stop.set()

    for sig in signals:
        loop.add_signal_handler(sig, on_signal)
    if control is not None:
        watch_parent(control, stop)
    if plugins is None:
        plugins = installed_plugins()
    if worker is None or worker.index == 0:  # once, not once per worker
        warn(config, plugins, [name for name in plugins.platforms() if config.platform_enabled(name)])
    from ..gateway import Gateway  # here: ``run --help`` and a bad config need none of it

    try:
        async with Gateway(config, plugins, worker=worker) as gateway:
            parts = []
            if gateway.url:
                served = ["OpenAI-compatible API at /v1"] if config.api_server.enabled else []
                served += [f"web console at {gateway.url}/ui"] if config.web_enabled else []
                parts.append(f"listening on {gateway.url}" + (f" ({', '.join(served)})" if served else ""))
            if gateway.started_platforms:
                parts.append("platforms: " + ", ".join(gateway.started_platforms))
            settle_heap()  # start-up's objects live as long as the process: no collection need walk them
            model = "demo model" if config.model.is_demo else f"model {config.model.endpoint.name}"
            if control is not None:
                report_ready(control, {"parts": parts, "model": model})
            else:
                print(f"hermes-gateway: {'; '.join(parts) or 'nothing to serve'}; {model}; Ctrl-C to stop",
                      flush=True)
            await stop.wait()
            if control is None:
                print("hermes-gateway: stopping", flush=True)
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
    if control is None:
        print("hermes-gateway: stopped", flush=True)
    return 0
