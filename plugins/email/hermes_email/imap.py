"""The mailbox side: one IMAP session (aioimaplib), the new mails in the folder, and marking one \\Seen.

Mails are read with ``BODY.PEEK[]`` (RFC 3501 §6.4.5: PEEK leaves
``\\Seen`` alone), so a mail turns \\Seen only when its reply went out
(:meth:`Mailbox.mark_seen`, by its Message-ID). Position: the folder's
``UIDVALIDITY`` and the last UID handed to the core, kept by the caller
in the gateway's store; ``UID FETCH last+1:*`` always answers the last
mail even when its UID is lower (§6.4.8), so UIDs are filtered again here.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from dataclasses import dataclass
from typing import Any


from .settings import EmailSettings

UIDVALIDITY = re.compile(rb"\[UIDVALIDITY (\d+)\]")
FETCH_SIZE = re.compile(rb"UID (\d+).*RFC822\.SIZE (\d+)|RFC822\.SIZE (\d+).*UID (\d+)")
#: At most this many new mails are looked at per round (the rest come in the next one).
BATCH = 50


class ImapError(Exception):
    """The server refused a command or the connection failed (the text names which, never the password)."""


def ssl_context(settings: EmailSettings) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if not settings.tls_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


@dataclass
class Mailbox:
    """A logged-in IMAP session with the folder selected."""

    client: Any
    uidvalidity: int
    idle: bool                      # the server offers IDLE
    #: A mail came in while :meth:`new_mails` looked (look again before idling: IDLE will not announce it).
    grew: bool = False

    @classmethod
    async def open(cls, settings: EmailSettings) -> "Mailbox":
        import aioimaplib

        where = settings.imap
        try:
            if where.tls:
                client = aioimaplib.IMAP4_SSL(host=where.host, port=where.port, timeout=settings.timeout,
                                              ssl_context=ssl_context(settings))
            else:
                client = aioimaplib.IMAP4(host=where.host, port=where.port, timeout=settings.timeout)
            await client.wait_hello_from_server()
        except (OSError, TimeoutError, ssl.SSLError) as exc:
            raise ImapError(f"cannot reach {where.host}:{where.port} ({type(exc).__name__}: {exc})") from None
        try:
            _check(await client.login(settings.username, settings.password), "LOGIN (username/password refused)")
            selected = await client.select(settings.folder)
            _check(selected, f"SELECT {settings.folder}")
        except BaseException:
            await _close(client)
            raise
        found = next((UIDVALIDITY.search(bytes(line)) for line in selected.lines
                      if UIDVALIDITY.search(bytes(line))), None)
        box = cls(client, int(found.group(1)) if found else 0, client.has_capability("IDLE"))
        box._watch_exists()
        return box

    def _watch_exists(self) -> None:
        """Note every ``* N EXISTS`` (a mail came in), whichever command's answer carries it.

        aioimaplib hands a SEARCH or FETCH only its own untagged lines and
        drops the rest, and the server says EXISTS once: missed there, a mail
        would wait for the next one. (Wraps aioimaplib 2.x's one dispatcher.)
        """
        protocol = self.client.protocol
        dispatch = protocol._untagged_response

        def noted(line: bytes) -> Any:
            if line.endswith(b" EXISTS"):
                self.grew = True
            return dispatch(line)

        protocol._untagged_response = noted

    async def close(self) -> None:
        await _close(self.client)

    async def new_mails(self, after: int) -> list[tuple[int, int]]:
        """The unseen mails with a UID above ``after``: ``(uid, size)``, oldest first, at most :data:`BATCH`."""
        self.grew = False  # set again when a mail comes in from here on
        found = await self.client.uid_search("UNSEEN", f"UID {after + 1}:*", charset=None)
        _check(found, "UID SEARCH")
        uids = sorted(int(u) for line in found.lines[:-1] for u in bytes(line).split() if u.isdigit())
        uids = [u for u in uids if u > after][:BATCH]
        if not uids:
            return []
        sizes = await self.client.uid("fetch", ",".join(map(str, uids)), "(UID RFC822.SIZE)")
        _check(sizes, "UID FETCH (sizes)")
        out = {}
        for line in sizes.lines:
            match = FETCH_SIZE.search(bytes(line))
            if match:
                uid, size = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
                out[int(uid)] = int(size)
        return sorted((u, out.get(u, 0)) for u in uids)

    async def fetch(self, uid: int) -> bytes:
        """The whole mail, without setting \\Seen."""
        answer = await self.client.uid("fetch", str(uid), "(BODY.PEEK[])")
        _check(answer, "UID FETCH (body)")
        body = next((bytes(line) for line in answer.lines if isinstance(line, bytearray)), None)
        if body is None:
            raise ImapError(f"the server sent no body for UID {uid}")
        return body

    async def mark_seen(self, message_id: str) -> bool:
        """Set \\Seen on the mail with this Message-ID (after its reply went out); whether one was found."""
        quoted = message_id.replace("\\", "").replace('"', "")
        found = await self.client.uid_search("HEADER", "Message-ID", f'"{quoted}"', charset=None)
        _check(found, "UID SEARCH (Message-ID)")
        uids = [u.decode() for line in found.lines[:-1] for u in bytes(line).split() if u.isdigit()]
        if not uids:
            return False
        _check(await self.client.uid("store", ",".join(uids), "+FLAGS.SILENT (\\Seen)"), "UID STORE \\Seen")
        return True

    async def wait_for_news(self, seconds: float) -> None:
        """IDLE until the server reports a change (or ``seconds`` pass), then end it."""
        import aioimaplib

        while not self.client.protocol.idle_queue.empty():  # what a past IDLE left (its timer's stop)
            self.client.protocol.idle_queue.get_nowait()
        idle = None
        try:
            idle = await self.client.idle_start(timeout=seconds)
            while not self.grew:
                pushed = await self.client.wait_server_push(timeout=seconds + 5)
                if pushed == aioimaplib.STOP_WAIT_SERVER_PUSH:
                    break
        finally:
            self.client.idle_done()  # DONE, once; then the IDLE's own OK (bounded), also when cancelled
            if idle is not None:
                await asyncio.wait({idle}, timeout=5.0)


def _check(response: Any, what: str) -> None:
    if getattr(response, "result", None) != "OK":
        text = " ".join(bytes(line).decode("utf-8", "replace") for line in getattr(response, "lines", [])[-1:])
        raise ImapError(f"{what} failed: {text[:200]}")


async def _close(client: Any) -> None:
    """LOGOUT, bounded: a server that does not answer is just dropped."""
    try:
        await asyncio.wait_for(client.logout(), 2.0)
    except BaseException:  # noqa: BLE001 - closing: nothing here may keep the caller waiting
        pass
    try:
        if client.protocol is not None and client.protocol.transport is not None:
            client.protocol.transport.close()
    except Exception:
        pass


