"""The email tests' helpers: the two servers, a person's mail, the bot's settings, and reading a mailbox."""

from __future__ import annotations

import asyncio
import itertools
import os
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

from hermes_email.servers import PASSWORD, Dovecot, SmtpServer

_numbers = itertools.count(0)
#: Mailboxes made per server (each test takes a few).
POOL = 300


class MailServers:
    """Dovecot and the SMTP server; mailboxes are made per test (the passwd-file is re-read by Dovecot)."""

    def __init__(self, directory: Path) -> None:
        # Dovecot reads its passwd-file once a second at most: every mailbox a test may take is made up front
        self.pool = [f"user{i}-{os.getpid()}@example.org" for i in range(POOL)]
        self.dovecot = Dovecot(directory, tuple(self.pool))
        self.smtp = SmtpServer(self.dovecot)

    def start(self) -> "MailServers":
        self.dovecot.start()
        self.smtp.start()
        return self

    def stop(self) -> None:
        self.smtp.stop()
        self.dovecot.stop()

    def user(self, name: str) -> str:
        """A mailbox no other test uses (``name`` is for the reader of the test)."""
        return self.pool[next(_numbers)]

    def settings(self, bot: str, **more: Any) -> dict[str, Any]:
        return {"imap_url": f"imap://127.0.0.1:{self.dovecot.port}", "smtp_url": f"smtp://127.0.0.1:{self.smtp.port}",
                "username": bot, "password": PASSWORD, "address": bot, "poll_interval": 1, **more}

    async def send(self, to: str, raw: bytes) -> None:
        """A mail arrives in ``to``'s INBOX (as the mail server would put it there)."""
        await self.dovecot.adeliver(to, raw)

    async def inbox(self, user: str) -> list[tuple[EmailMessage, bool]]:
        return await self.dovecot.amailbox(user)


def person_mail(sender: str, to: str, text: str, *, subject: str = "A question", message_id: str | None = None,
                in_reply_to: str | None = None, references: str | None = None,
                headers: dict[str, str] | None = None,
                files: list[tuple[str, str, bytes]] = ()) -> tuple[str, bytes]:  # type: ignore[assignment]
    """A person's mail: its Message-ID and bytes."""
    message = EmailMessage()
    message["From"] = f"A Person <{sender}>"
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = message_id or make_msgid(domain="example.org")
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
    if references:
        message["References"] = references
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(text)
    for filename, mime, data in files:
        maintype, subtype = mime.split("/")
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    return str(message["Message-ID"]), message.as_bytes()


def config(servers: MailServers, bot: str, **more: Any) -> dict[str, Any]:
    return {"model": {"demo": {"tokens_per_second": 1000}},
            "platforms": {"email": {"enabled": True, **servers.settings(bot, **more)}}}


def body(message: EmailMessage) -> str:
    part = message.get_body(("plain",))
    return part.get_content().strip() if part is not None else ""


async def until(condition: Any, what: Any, timeout: float = 30.0) -> None:
    """Poll an async ``condition()`` until it holds (a bound that only catches hangs)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await condition():
        if loop.time() > deadline:
            raise AssertionError(f"still not there after {timeout}s: {await what()!r}")
        await asyncio.sleep(0.05)
