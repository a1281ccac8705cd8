"""``run --workers N`` / ``api_server.workers``: the values accepted, the mistakes refused in one line, and the
supervisor's promises (a crash-looping worker stops the gateway; a worker that ignores SIGTERM is killed after
the bounded stop), checked with tiny stand-in workers so no gateway needs to start."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest
import yaml

from hermes_gateway._core.cli import workers as workers_module
from hermes_gateway._core.cli.main import main
from hermes_gateway._core.cli.workers import Supervisor
from hermes_gateway._core.config import parse_config


def write(tmp_path, api: dict, **extra) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"api_server": {"port": 0, **api}, "store": {"path": str(tmp_path / "s.db")},
                                    "model": {"demo": {"tokens_per_second": 0}}, **extra}))
    return str(path)


@pytest.mark.parametrize("value, shown", [(0, "got 0"), (65, "got 65"), ("two", "got 'two'"), (True, "got True"),
                                          (1.5, "got 1.5"), ([2], "got a list")])
def test_a_bad_workers_value_is_one_line_naming_file_and_key(tmp_path, capsys, value, shown):
    path = write(tmp_path, {"workers": value})
    assert main(["run", "--config", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"hermes-gateway: config error: {path}: api_server.workers: a whole number from 1 to 64, "
                   f"or auto (one per core), {shown}")


def test_auto_is_one_per_core_and_numbers_may_be_strings():
    assert parse_config({"api_server": {"workers": "auto"}}, env={}).api_server.workers == os.cpu_count()
    assert parse_config({"api_server": {"workers": "3"}}, env={}).api_server.workers == 3
    assert parse_config({}, env={}).api_server.workers == 1


def test_the_flag_is_checked_like_the_key(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["run", "--config", write(tmp_path, {}), "--workers", "0"])
    assert exited.value.code == 2
    assert "--workers: expected a whole number from 1 to 64, or auto; got '0'" in capsys.readouterr().err


def test_several_workers_cannot_share_a_memory_store(tmp_path, capsys):
    path = write(tmp_path, {}, store={"path": ":memory:"})
    assert main(["run", "--config", path, "--workers", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"hermes-gateway: config error: {path}: store.path: a file or PostgreSQL with "
                          "api_server.workers: 2") and "\n" not in err


def test_several_workers_need_the_api_server(tmp_path, capsys):
    path = write(tmp_path, {"enabled": False, "workers": 2})
    assert main(["run", "--config", path]) == 2
    assert "api_server.workers: 1 while api_server.enabled is false" in capsys.readouterr().err


def test_the_web_console_stays_in_one_process(tmp_path, capsys):
    # off by default with several workers (its sessions and chats live in one process), refused when asked for
    assert not parse_config({"api_server": {"workers": 2}}, env={}).web_enabled
    assert parse_config({"api_server": {"workers": 1}}, env={}).web_enabled
    path = write(tmp_path, {}, web={"enabled": True})
    assert main(["run", "--config", path, "--workers", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"hermes-gateway: config error: {path}: web.enabled: false with api_server.workers: 2 (the "
                   "console's sessions and chats live in one process; run it with workers: 1)")


# -- the supervisor, with stand-in workers --------------------------------------------------------------------

STAND_IN = r"""
import json, os, signal, socket, sys, time
index, count, listen_fd, control_fd = (int(p) for p in sys.argv[sys.argv.index("--worker") + 1].split("/"))
mode = sys.argv[1]
control = socket.socket(fileno=control_fd)
assert len(bytes.fromhex(control.recv(128).decode().strip())) == 32  # the media link key comes first
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
control.sendall(json.dumps({"ready": True, "parts": [f"listening on fd {listen_fd}"], "model": "stand-in"}).encode()
                + b"\n")
if mode == "crash" and index == 1:
    sys.exit(3)
while control.recv(64):
    pass
"""


def stand_in_config(tmp_path, grace: float):
    return parse_config({"api_server": {"port": 0, "workers": 2}, "conversation": {"shutdown_grace": grace},
                         "store": {"path": str(tmp_path / "s.db")}}, env={})


async def test_a_worker_that_keeps_dying_is_restarted_a_bounded_number_of_times_then_stops_all(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(workers_module, "RESTART_DELAY", 0.01)
    monkeypatch.setattr(workers_module, "RESTART_LIMIT", 3)
    supervisor = Supervisor(stand_in_config(tmp_path, 0.5), [sys.executable, "-c", STAND_IN, "crash"])
    assert await asyncio.wait_for(supervisor.run(), 60) == 1
    out, err = capsys.readouterr()
    assert "2 workers (pids " in out and "Ctrl-C to stop" in out
    assert "hermes-gateway: worker 1 exited with code 3, its 4th death in 60 s; stopping" in err
    assert not any(worker.alive for worker in supervisor.workers)


async def test_a_worker_that_ignores_sigterm_is_killed_after_the_bounded_stop(tmp_path, capsys):
    grace = 0.5
    supervisor = Supervisor(stand_in_config(tmp_path, grace), [sys.executable, "-c", STAND_IN, "stubborn"])
    running = asyncio.ensure_future(supervisor.run())
    while "Ctrl-C to stop" not in capsys.readouterr().out:
        assert not running.done()
        await asyncio.sleep(0.05)
    started = time.monotonic()
    supervisor.stopping.set()  # what SIGTERM does
    assert await asyncio.wait_for(running, 30) == 0
    took = time.monotonic() - started
    assert grace + workers_module.STOP_MARGIN - 0.5 < took < grace + workers_module.STOP_MARGIN + 5
    assert not any(worker.alive for worker in supervisor.workers)
    assert [worker.process.returncode for worker in supervisor.workers] == [-9, -9]


def test_a_taken_port_stops_the_start_in_one_line_before_any_worker(tmp_path, capsys):
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        path = write(tmp_path, {"port": taken.getsockname()[1], "workers": 2})
        assert main(["run", "--config", path]) == 1
    finally:
        taken.close()
    assert capsys.readouterr().err.strip() == "hermes-gateway: cannot start: Address already in use"
