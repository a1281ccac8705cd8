"""A real Synapse homeserver for the tests, on 127.0.0.1, started once per test process.

:func:`start_synapse` writes a config of its own (SQLite, one client
listener on a free port of 127.0.0.1, no federation, no presence, cheap
password hashing, registration only through the shared secret), starts
``python -m synapse.app.homeserver`` and waits for
``/_matrix/client/versions``. ``rc_message`` is Synapse's stock one (0.2
events a second, burst 10), every other ``rc_*`` limit is lifted; each
account is exempted from it with the admin API (``override_ratelimit``
0/0) unless a test asks for an account with the stock limit
(``register(..., stock_limit=True)``: the admin API only takes whole
numbers, so 0.2/s can only be the server's own). :class:`Synapse`
registers users (``/_synapse/admin/v1/register`` with the shared secret's
HMAC) and stops the server.

The tests skip in one line when ``matrix-synapse`` is not installed.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVER_NAME = "localhost"
#: Every limit Synapse has, lifted (a test sets a stock one on its own bot).
UNLIMITED = {"per_second": 10_000, "burst_count": 10_000}
#: Synapse's default rc_message (synapse/config/ratelimiting.py).
STOCK_RC_MESSAGE = {"per_second": 0.2, "burst_count": 10}
#: Seconds Synapse gets to answer /versions after it was started (its imports take a few on a loaded machine).
START_TIMEOUT = 120.0


@dataclass(frozen=True)
class Account:
    user_id: str
    access_token: str
    password: str

    @property
    def localpart(self) -> str:
        return self.user_id[1:].split(":", 1)[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(directory: Path, port: int, shared_secret: str) -> Path:
    import signedjson.key
    import yaml

    key = io.StringIO()
    signedjson.key.write_signing_keys(key, [signedjson.key.generate_signing_key("a_test")])
    (directory / "signing.key").write_text(key.getvalue())
    (directory / "log.yaml").write_text(yaml.safe_dump({
        "version": 1,
        "formatters": {"plain": {"format": "%(asctime)s %(name)s %(levelname)s %(message)s"}},
        "handlers": {"file": {"class": "logging.FileHandler", "filename": str(directory / "synapse.log"),
                              "formatter": "plain"}},
        "root": {"level": "WARNING", "handlers": ["file"]},
        "disable_existing_loggers": False,
    }))
    config: dict[str, Any] = {
        "server_name": SERVER_NAME,
        "public_baseurl": f"http://127.0.0.1:{port}/",
        "pid_file": str(directory / "homeserver.pid"),
        "listeners": [{"port": port, "bind_addresses": ["127.0.0.1"], "type": "http", "tls": False,
                       "x_forwarded": False, "resources": [{"names": ["client"], "compress": False}]}],
        "database": {"name": "sqlite3", "args": {"database": str(directory / "homeserver.db")}},
        "log_config": str(directory / "log.yaml"),
        "media_store_path": str(directory / "media"),
        "signing_key_path": str(directory / "signing.key"),
        "registration_shared_secret": shared_secret,
        "macaroon_secret_key": secrets.token_hex(16),
        "form_secret": secrets.token_hex(16),
        "report_stats": False,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "federation_domain_whitelist": [],
        "enable_registration": False,
        "presence": {"enabled": False},
        "url_preview_enabled": False,
        "enable_metrics": False,
        "bcrypt_rounds": 4,
        "max_upload_size": "10M",
        "rc_message": STOCK_RC_MESSAGE,
        "rc_registration": UNLIMITED,
        "rc_login": {"address": UNLIMITED, "account": UNLIMITED, "failed_attempts": UNLIMITED},
        "rc_joins": {"local": UNLIMITED, "remote": UNLIMITED},
        "rc_joins_per_room": UNLIMITED,
        "rc_invites": {"per_room": UNLIMITED, "per_user": UNLIMITED, "per_issuer": UNLIMITED},
        "rc_room_creation": UNLIMITED,
        "rc_media_create": UNLIMITED,
        "rc_admin_redaction": UNLIMITED,
    }
    path = directory / "homeserver.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


class Synapse:
    """One running homeserver: ``url``, users registered on demand, :meth:`stop`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.shared_secret = secrets.token_hex(16)
        self.config = write_config(directory, self.port, self.shared_secret)
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.start_cpu = 0.0
        self._admin: Account | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "synapse.app.homeserver", "-c", str(self.config)], cwd=self.directory,
            stdout=subprocess.DEVNULL, stderr=open(self.directory / "stderr.log", "wb"))
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"synapse exited with {self.process.returncode}: "
                                   + (self.directory / "stderr.log").read_text()[-2000:])
            try:
                with urllib.request.urlopen(self.url + "/_matrix/client/versions", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"synapse did not answer within {START_TIMEOUT:.0f} s")
            time.sleep(0.1)
        self.start_cpu = process_cpu(self.process.pid)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def request(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json",
                                                  **({"Authorization": f"Bearer {token}"} if token else {})})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read() or b"{}")

    def register(self, prefix: str, *, admin: bool = False, stock_limit: bool = False) -> Account:
        """A new account ``@prefix-XXXX:localhost`` with a password and an access token, exempt from
        ``rc_message`` unless ``stock_limit``."""
        user = f"{prefix}-{secrets.token_hex(3)}"
        password = secrets.token_urlsafe(12)
        nonce = self.request("GET", "/_synapse/admin/v1/register")["nonce"]
        mac = hmac.new(self.shared_secret.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), user.encode(), password.encode(),
                                 b"admin" if admin else b"notadmin"]))
        answer = self.request("POST", "/_synapse/admin/v1/register",
                              {"nonce": nonce, "username": user, "password": password, "admin": admin,
                               "mac": mac.hexdigest()})
        account = Account(answer["user_id"], answer["access_token"], password)
        if not stock_limit:
            admin_token = account.access_token if admin else self.admin().access_token
            self.request("POST", f"/_synapse/admin/v1/users/{urllib.request.quote(account.user_id)}/"
                                 "override_ratelimit", {"messages_per_second": 0, "burst_count": 0},
                         token=admin_token)
        return account

    def admin(self) -> Account:
        if self._admin is None:
            self._admin = self.register("admin", admin=True)
        return self._admin


def process_cpu(pid: int) -> float:
    """User + system CPU seconds the process ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def synapse_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("synapse") is not None
