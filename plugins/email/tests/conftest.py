"""Fixtures for the email plugin's tests: one real Dovecot and one SMTP server per test process (session scope).

Each test takes mailboxes of its own (:meth:`MailServers.user`), so tests
share the servers but never a mailbox. Without Dovecot (Debian's
``dovecot-imapd``) every test here is skipped in one line.
"""

from __future__ import annotations

import pytest

from email_support import MailServers
from hermes_email.servers import dovecot_binary


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    """Conversations and update ids go to a temporary HERMES_HOME, also when this directory is the rootdir."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "email")


@pytest.fixture(scope="session")
def mail(tmp_path_factory):
    if dovecot_binary() is None:
        pytest.skip("dovecot is not installed (Debian: apt-get install dovecot-imapd)")
    servers = MailServers(tmp_path_factory.mktemp("dovecot")).start()
    try:
        yield servers
    finally:
        servers.stop()
