"""The workers' sockets: one address, one socket per worker, the kernel spreading connections over them."""

from __future__ import annotations

import socket

import pytest

from hermes_gateway._core.errors import StartError
from hermes_gateway._core.http.workers import WorkerSlot, bind_listeners, refuse_lone_webhooks


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


def test_webhook_platforms_are_refused_with_several_workers_unless_they_are_replicas():
    refuse_lone_webhooks(WorkerSlot(0, 1), ["telegram"])  # one process: the webhook is always here
    refuse_lone_webhooks(WorkerSlot(0, 2), [])  # polling platforms: worker 0 polls
    refuse_lone_webhooks(WorkerSlot(0, 2, replicas=True), ["telegram"])  # every worker serves it
    with pytest.raises(StartError) as caught:
        refuse_lone_webhooks(WorkerSlot(0, 2), ["telegram", "slack"])
    message = str(caught.value)
    assert "\n" not in message
    assert "api_server.workers is 2" in message and "telegram, slack" in message
    assert "coordination.url" in message
