"""Real mail servers on 127.0.0.1 for the tests: Dovecot (IMAP) and an aiosmtpd SMTP server delivering into it.

:class:`Dovecot` writes its own configuration (no system config is read:
``dovecot -c FILE -F``), authenticates from a passwd-file of its own, keeps
mail in maildirs under its directory and listens on a free port. It runs
unprivileged as the current user; as root (a CI container) its processes
run as ``nobody`` (Dovecot refuses uid 0 for mail and login processes), so
its directory is then a private one under the system temp dir, owned by
``nobody``. Needs Debian's ``dovecot-imapd``.

:class:`SmtpServer` (aiosmtpd, its own thread) accepts mail for the
Dovecot users and delivers each copy by IMAP APPEND into the recipient's
INBOX, so the person's mailbox shows what the bot sent. ``hold()`` keeps
the next message waiting before it is accepted (a crash "between receipt
and reply"), ``refuse_next(code, text)`` answers the next message with an
SMTP error (``451 4.7.1`` is a rate limit), ``received`` is every message
accepted, raw.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import imaplib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from email.message import EmailMessage
from pathlib import Path
from typing import Any

PASSWORD = "mail-test-password"


def dovecot_binary() -> str | None:
    return shutil.which("dovecot") or (os.path.exists("/usr/sbin/dovecot") and "/usr/sbin/dovecot") or None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Dovecot:
    """One Dovecot IMAP server; ``users`` log in with :data:`PASSWORD`."""

    def __init__(self, directory: Path, users: tuple[str, ...]) -> None:
        self.users = users
        self.root = os.geteuid() == 0
        # as root the processes run as nobody, who cannot enter pytest's private temp dirs
        self.dir = Path(tempfile.mkdtemp(prefix="hermes-dovecot-")) if self.root else directory
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> "Dovecot":
        binary = dovecot_binary()
        if binary is None:
            raise RuntimeError("dovecot is not installed (Debian: apt-get install dovecot-imapd)")
        for sub in ("run", "state", "mail", "home"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "passwd").write_text("".join(f"{u}:{{PLAIN}}{PASSWORD}\n" for u in self.users))
        if self.root:
            user = pwd.getpwnam("nobody")
            uid, gid, name = user.pw_uid, user.pw_gid, "nobody"
            os.chmod(self.dir, 0o755)
            for path in [self.dir, *self.dir.rglob("*")]:
                os.chown(path, uid, gid)
        else:
            uid, gid, name = os.getuid(), os.getgid(), pwd.getpwuid(os.getuid()).pw_name
        for _attempt in range(5):
            self.port = free_port()
            (self.dir / "dovecot.conf").write_text(self._config(uid, gid, name))
            self.process = subprocess.Popen([binary, "-F", "-c", str(self.dir / "dovecot.conf")],
                                            stdout=subprocess.DEVNULL, stderr=open(self.dir / "log", "ab"))
            if self._wait_ready():
                return self
            self.stop(remove=False)
        raise RuntimeError(f"dovecot did not start: {(self.dir / 'log').read_text()[-2000:]}")

    def _config(self, uid: int, gid: int, name: str) -> str:
        group = "nogroup" if self.root else (os.popen("id -gn").read().strip() or name)
        d = self.dir
        return f"""
protocols = imap
listen = 127.0.0.1
base_dir = {d}/run
state_dir = {d}/state
log_path = {d}/log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:{d}/mail/%u
default_internal_user = {name}
default_internal_group = {group}
default_login_user = {name}
first_valid_uid = 1
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {d}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={d}/home/%u
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {self.port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
service stats {{
  chroot =
}}
protocol imap {{
  mail_max_userip_connections = 200
}}
# IDLE is told of new mail by inotify; where a busy machine has run out of watches, Dovecot looks every
# mailbox_idle_check_interval instead (30 s by default: longer than a test should wait)
mailbox_idle_check_interval = 1 secs
"""

    def _wait_ready(self, bound: float = 30.0) -> bool:
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    if s.recv(100).startswith(b"* OK"):
                        return True
            except OSError:
                time.sleep(0.05)
        return False

    def stop(self, remove: bool = True) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if remove and self.root:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- a person's view of a mailbox (blocking imaplib: call through asyncio.to_thread) ---------

    def imap(self, user: str) -> imaplib.IMAP4:
        client = imaplib.IMAP4("127.0.0.1", self.port, timeout=30)
        client.login(user, PASSWORD)
        return client

    def deliver(self, user: str, raw: bytes, folder: str = "INBOX") -> None:
        """Put a mail into ``user``'s folder, as their mail server's delivery would."""
        client = self.imap(user)
        try:
            status, data = client.append(folder, None, None, raw)
            if status != "OK":
                raise RuntimeError(f"APPEND for {user} failed: {data!r}")
        finally:
            client.logout()

    def mailbox(self, user: str, folder: str = "INBOX") -> list[tuple[EmailMessage, bool]]:
        """Every mail in ``user``'s folder, oldest first, with whether it is \\Seen."""
        client = self.imap(user)
        try:
            client.select(folder, readonly=True)
            _, data = client.uid("fetch", "1:*", "(FLAGS BODY.PEEK[])")
            out = []
            for item in data:
                if isinstance(item, tuple):
                    message = email.message_from_bytes(item[1], policy=email.policy.default)
                    out.append((message, b"\\Seen" in item[0]))
            return out
        finally:
            client.logout()

    async def amailbox(self, user: str, folder: str = "INBOX") -> list[tuple[EmailMessage, bool]]:
        return await asyncio.to_thread(self.mailbox, user, folder)

    async def adeliver(self, user: str, raw: bytes) -> None:
        await asyncio.to_thread(self.deliver, user, raw)


class SmtpServer:
    """aiosmtpd on 127.0.0.1 (AUTH over plain text allowed: loopback), delivering into :class:`Dovecot`."""

    def __init__(self, dovecot: Dovecot) -> None:
        self.dovecot = dovecot
        self.received: list[bytes] = []
        self._refusals: list[tuple[int, str]] = []
        self._held = threading.Event()
        self._holding = False
        self.waiting = threading.Event()   # a held message is waiting
        self.controller: Any = None
        self.port = 0
        self.lock = threading.Lock()

    def start(self) -> "SmtpServer":
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult

        def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> Any:
            ok = getattr(auth_data, "password", b"") in (PASSWORD.encode(), PASSWORD)
            return AuthResult(success=ok, handled=False)  # a refusal is answered 535

        self.port = free_port()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, authenticator=authenticate,
                                     auth_require_tls=False)
        self.controller.start()
        return self

    def stop(self) -> None:
        self._held.set()
        if self.controller is not None:
            self.controller.stop()

    def hold(self) -> None:
        """The next messages wait (unanswered) until :meth:`release` — then they are refused, never delivered."""
        with self.lock:
            self._holding = True
            self._held.clear()

    def release(self) -> None:
        with self.lock:
            self._holding = False
            self._held.set()

    def refuse_next(self, code: int, text: str) -> None:
        with self.lock:
            self._refusals.append((code, text))

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        if address.lower() not in self.dovecot.users:
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address.lower())
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            refusal = self._refusals.pop(0) if self._refusals else None
            holding = self._holding
        if refusal is not None:
            return f"{refusal[0]} {refusal[1]}"
        if holding:
            self.waiting.set()
            await asyncio.get_running_loop().run_in_executor(None, self._held.wait)
            return "451 4.3.0 held by the test, not delivered"
        raw = bytes(envelope.content)
        for rcpt in envelope.rcpt_tos:
            await asyncio.get_running_loop().run_in_executor(None, self.dovecot.deliver, rcpt, raw)
        with self.lock:
            self.received.append(raw)
        return "250 2.0.0 delivered"
