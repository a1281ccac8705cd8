"""One listening address served by several processes (``api_server.workers``): the sockets and the worker's mark.

Why the parent binds every socket: with ``SO_REUSEPORT`` each worker needs
its own listening socket on the same address, and the kernel spreads new
connections over them. If each worker bound its own, a configured port 0
would give each a different port, and a port taken between two binds would
fail one worker only. So the parent binds them all, one per worker (the
first picks the port when the config says 0, the others join it), keeps
them, and hands worker ``i`` socket ``i``. A worker that dies leaves its
socket open in the parent: connections the kernel sends it wait in its
backlog until the restarted worker accepts them, instead of being refused.

:class:`WorkerSlot` tells a gateway which worker it is; with more than one,
every response carries ``X-Hermes-Worker: <index>`` (a small number, nothing
about the machine), so a client or a test can see which process answered.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: ``run --help`` and the supervisor need no aiohttp
    from aiohttp import web

from ..errors import StartError
from .listener import listen_backlog

#: The response header naming the worker that answered (only when there are several).
WORKER_HEADER = "X-Hermes-Worker"


@dataclass(frozen=True)
class WorkerSlot:
    """Which of ``count`` workers this process is, the listening socket it serves, and whether it is a replica.

    Worker 0 runs the platforms, schedules and crash recovery besides the
    listener; the others serve HTTP only, unless ``replicas`` (the config has
    ``coordination.url``): then every worker runs everything, coordinated
    like separate replicas (so its platforms must take webhooks, see
    :func:`check_platforms`).
    """

    index: int
    count: int
    sock: socket.socket | None = None
    replicas: bool = False
    #: The key media links are sealed with, the same in every worker (a link may be fetched from any of them).
    media_key: bytes = field(default=b"", repr=False)

    @property
    def runs_platforms(self) -> bool:
        return self.index == 0 or self.replicas


def bind_listeners(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` listening TCP sockets on ``host:port`` with ``SO_REUSEPORT``, all on the same port.

    The first one picks the port when ``port`` is 0; the rest bind to the
    port it got. Raises ``OSError`` (the port is taken, the host cannot be
    bound, the host is a name with several addresses) with nothing left open.
    """
    if not hasattr(socket, "SO_REUSEPORT"):
        raise OSError("api_server.workers above 1 needs SO_REUSEPORT, which this system does not have")
    found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    addresses = sorted({str(item[4][0]) for item in found})
    if len(addresses) > 1:  # one socket per worker and address would be needed; one address keeps it simple
        raise OSError(f"api_server.host {host!r} is several addresses ({', '.join(addresses)}); with "
                      "api_server.workers above 1 give one of them, e.g. 127.0.0.1 or 0.0.0.0")
    family, kind, proto, _, address = found[0]
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(listen_backlog())  # the worker's site listens again with the same
            sock.set_inheritable(True)
            address = sock.getsockname()  # the port the first one got, for the others
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def check_platforms(slot: WorkerSlot, platforms: list[str], webhook_platforms: list[str]) -> None:
    """Refuse, in one line, a platform that several workers cannot serve correctly.

    ``platforms``: those whose client this worker built; ``webhook_platforms``:
    those of them that mounted a route (they receive by webhook).

    * Without ``coordination.url`` only worker 0 runs the platforms, but the
      kernel hands a webhook's connection to any worker, and the others have
      no such route: a share of the updates would get a 404. Refused.
    * With ``coordination.url`` every worker is a replica: a webhook is served
      by whichever worker gets it (dedupe and chat leases are shared), but a
      platform that polls or holds a socket (Telegram polling, Discord, Slack
      Socket Mode) would do so once per worker, as the replica guide forbids.
      Refused too.
    """
    if slot.count <= 1:
        return
    if not slot.replicas and webhook_platforms:
        raise StartError(f"api_server.workers is {slot.count}, but platform {', '.join(webhook_platforms)} receives "
                         "by webhook, which only worker 0 serves: set coordination.url (every worker then runs as "
                         "a replica), use the platform's polling/socket mode, or api_server.workers: 1")
    polling = [name for name in platforms if name not in webhook_platforms]
    if slot.replicas and polling:
        raise StartError(f"api_server.workers is {slot.count} with coordination.url, so every worker is a replica, "
                         f"but platform {', '.join(polling)} polls or holds a socket, which every worker would do: "
                         "use its webhook mode, leave coordination.url out (worker 0 then runs the platforms), or "
                         "api_server.workers: 1")


def mark_responses(app: web.Application, slot: WorkerSlot) -> None:
    """With several workers, every response of ``app`` names the worker that sent it (:data:`WORKER_HEADER`)."""
    if slot.count <= 1:
        return
    value = str(slot.index)

    async def mark(request: web.Request, response: web.StreamResponse) -> None:
        response.headers[WORKER_HEADER] = value

    app.on_response_prepare.append(mark)
