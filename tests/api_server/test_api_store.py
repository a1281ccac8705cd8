"""The response store behind previous_response_id."""

from hermes_gateway.api_server.store import ResponseStore, StoredResponse


def item(n):
    return StoredResponse({"id": f"r{n}"}, ({"role": "user", "content": str(n)},))


def test_oldest_is_evicted_and_reads_refresh():
    store = ResponseStore(capacity=2)
    store.put("r1", item(1))
    store.put("r2", item(2))
    assert store.get("r1") is not None  # r1 is now the newest
    store.put("r3", item(3))
    assert store.get("r2") is None
    assert store.get("r1").conversation[0]["content"] == "1"
    assert len(store) == 2
    assert store.delete("r1") and not store.delete("r1")


def test_a_response_belongs_to_the_key_that_made_it():
    store = ResponseStore()
    store.put("r1", StoredResponse({"id": "r1"}, (), owner=0))
    assert store.get("r1", 1) is None and not store.delete("r1", 1)
    assert store.get("r1", 0) is not None and store.delete("r1", 0)
