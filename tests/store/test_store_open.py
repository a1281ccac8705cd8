"""open_store: where the config puts the conversations."""

from __future__ import annotations

from pathlib import Path

from hermes_gateway.config import parse_config
from hermes_gateway.store import ConversationKey, MemoryStore, SQLiteStore, open_store, store_location


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
