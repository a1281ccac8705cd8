"""Gateway.store: opened on first use from the config, closed when the gateway stops."""

from __future__ import annotations

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.store import ConversationKey, SQLiteStore

KEY = ConversationKey("telegram", "1")


def gateway(path) -> Gateway:
    config = parse_config({"api_server": {"port": 0}, "store": {"path": str(path)}}, env={})
    return Gateway(config, make_plugins(load_entry_points=False))


async def test_the_store_opens_on_first_use_and_closes_with_the_gateway(tmp_path):
    path = tmp_path / "state.db"
    gw = gateway(path)
    async with gw:
        store = gw.store
        assert isinstance(store, SQLiteStore) and store.path == path and gw.store is store
        await store.record_turn(KEY, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}])
        assert (tmp_path / "state.db-wal").exists()  # open, in WAL mode
    assert not (tmp_path / "state.db-wal").exists()  # stop closed the last connection: the WAL was folded in
    assert gw.store is not store  # the next use opens it afresh

    async with gateway(path) as again:  # the next gateway on the same file has the conversation
        assert [m["content"] for m in await again.store.history(KEY)] == ["hi", "hey"]


async def test_the_default_store_is_in_the_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    async with Gateway(parse_config({"api_server": {"enabled": False}}, env={}),
                       make_plugins(load_entry_points=False)) as gw:
        await gw.store.record_turn(KEY, [{"role": "user", "content": "hi"}])
    assert (tmp_path / "home" / "state.db").is_file()
