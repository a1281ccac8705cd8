"""open_store: where the config puts the conversations."""

from __future__ import annotations

from pathlib import Path

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.store import ConversationKey, MemoryStore, SQLiteStore, open_store, store_location


def config(store=None):
    return parse_config({"store": store} if store is not None else {}, env={})


def test_the_default_is_state_db_in_the_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes"))
    store = open_store(config())
    assert isinstance(store, SQLiteStore) and store.path == tmp_path / "hermes" / "state.db"


def test_store_path_and_url(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert store_location(config({"path": str(tmp_path / "a.db")})) == str(tmp_path / "a.db")
    assert store_location(config({"url": f"sqlite:///{tmp_path}/b.db"})) == str(tmp_path / "b.db")
    assert store_location(config({"url": "sqlite:///relative.db"})) == "relative.db"
    assert store_location(config({"url": "sqlite:////abs/c.db"})) == "/abs/c.db"
    assert store_location(config({"path": "~/x.db"})) == str(Path("~/x.db").expanduser())


async def test_the_history_limits_come_from_the_config(tmp_path):
    store = open_store(config({"path": str(tmp_path / "s.db"), "history_messages": 2, "history_chars": 1000}))
    key = ConversationKey("cli", "local")
    for n in range(3):
        await store.record_turn(key, [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": "a"}])
    assert [m["content"] for m in await store.history(key)] == ["q2", "a"]
    await store.close()


def test_memory_on_request():
    assert isinstance(open_store(config({"path": ":memory:"})), MemoryStore)
    assert isinstance(open_store(config({"url": "sqlite:///:memory:"})), MemoryStore)


def test_a_postgresql_url_is_accepted_in_both_spellings_and_psycopg_waits_until_used():
    import subprocess
    import sys

    for url in ("postgresql://hermes@db/hermes", "postgres://hermes:pw@db:6543/hermes?sslmode=require"):
        assert config({"url": url}).store.url == url
        assert store_location(config({"url": url})).startswith("PostgreSQL at db:")
    probe = ("import sys; from hermes_gateway._core.config import parse_config; from hermes_gateway._core.store import open_store;"
             "open_store(parse_config({'store': {'path': '/tmp/x.db'}}, env={})); print('psycopg' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip() == "False"


def test_a_store_url_of_another_kind_is_one_line_naming_the_key_without_its_password():
    from hermes_gateway._core.errors import ConfigError

    for url in ("mysql://root:hunter2hunter2@db/hermes", "postgresql://", "https://example.com/db"):
        try:
            config({"url": url})
        except ConfigError as exc:
            text = str(exc)
        else:
            raise AssertionError(f"{url} was accepted")
        assert "store.url" in text and "postgresql://user@host/dbname" in text and "\n" not in text
        assert "hunter2" not in text


def test_hermes_gateway_config_shows_the_store_url_without_its_password(tmp_path):
    import os
    import subprocess
    import sys

    path = tmp_path / "config.yaml"
    path.write_text("store:\n  url: postgresql://hermes:hunter2hunter2@db:5432/hermes\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    shown = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)],
                           capture_output=True, text=True, env={**env, "HOME": str(tmp_path)}, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "postgresql://***@db:5432/hermes" in shown.stdout and "hunter2" not in shown.stdout + shown.stderr
