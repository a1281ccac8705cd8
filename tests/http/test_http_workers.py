"""The workers' sockets: one address, one socket per worker, the kernel spreading connections over them."""

from __future__ import annotations

import socket

import pytest

from hermes_gateway._core.errors import StartError
from hermes_gateway._core.http.workers import WorkerSlot, bind_listeners, check_platforms


def test_port_zero_gives_every_socket_the_same_port_and_the_kernel_uses_them_all():
    sockets = bind_listeners("127.0.0.1", 0, 2)
    try:
        ports = {sock.getsockname()[1] for sock in sockets}
        assert len(ports) == 1 and ports != {0}
        port = ports.pop()
        for sock in sockets:
            sock.setblocking(False)
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]  # 40 source ports
        accepted = []
        for sock in sockets:
            count = 0
            while True:
                try:
                    conn, _ = sock.accept()
                except BlockingIOError:
                    break
                conn.close()
                count += 1
            accepted.append(count)
        for client in clients:
            client.close()
        assert sum(accepted) == 40 and min(accepted) > 0, accepted
    finally:
        for sock in sockets:
            sock.close()


def test_a_taken_port_fails_whole_and_leaves_nothing_bound():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with pytest.raises(OSError):
            bind_listeners("127.0.0.1", port, 2)
    finally:
        taken.close()
    again = bind_listeners("127.0.0.1", port, 2)  # nothing of the failed attempt holds the port
    for sock in again:
        sock.close()


def test_a_host_of_several_addresses_is_refused_in_one_line(monkeypatch):
    def resolve(host, port, **kw):
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", port, 0, 0)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)  # "localhost" on a machine that has both
    with pytest.raises(OSError) as caught:
        bind_listeners("localhost", 0, 2)
    assert str(caught.value) == ("api_server.host 'localhost' is several addresses (127.0.0.1, ::1); with "
                                 "api_server.workers above 1 give one of them, e.g. 127.0.0.1 or 0.0.0.0")


def test_without_coordination_webhook_platforms_are_refused_with_several_workers():
    check_platforms(WorkerSlot(0, 1), ["telegram"], ["telegram"])  # one process: the webhook is always here
    check_platforms(WorkerSlot(0, 2), ["discord"], [])  # polling platforms: worker 0 polls
    with pytest.raises(StartError) as caught:
        check_platforms(WorkerSlot(0, 2), ["telegram", "slack", "discord"], ["telegram", "slack"])
    message = str(caught.value)
    assert "\n" not in message
    assert "api_server.workers is 2, but platform telegram, slack receives by webhook" in message
    assert "coordination.url" in message


def test_as_replicas_polling_platforms_are_refused_with_several_workers():
    check_platforms(WorkerSlot(1, 2, replicas=True), ["telegram"], ["telegram"])  # every worker serves it
    check_platforms(WorkerSlot(0, 1, replicas=True), ["discord"], [])  # one worker: one poller
    with pytest.raises(StartError) as caught:
        check_platforms(WorkerSlot(1, 3, replicas=True), ["telegram", "discord"], ["telegram"])
    message = str(caught.value)
    assert "\n" not in message
    assert "every worker is a replica, but platform discord polls or holds a socket" in message
