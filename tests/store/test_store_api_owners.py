"""Which API key an API conversation belongs to, read from its chat id: the key's own, nobody else's."""

from __future__ import annotations

from hermes_gateway._core.api_server.replies import record_key
from hermes_gateway._core.store.api_owners import owned_by, owned_chat_id, owner_fingerprint


def test_a_conversation_belongs_to_the_key_that_made_it_only():
    a, b = owner_fingerprint("sk-key-a"), owner_fingerprint("sk-key-b")
    chat = record_key([], "hello", a).chat_id
    assert owned_by(chat, a) and not owned_by(chat, b) and not owned_by(chat, None)
    assert "sk-key-a" not in chat and chat.startswith("k" + a[:16] + "-conv-")
    assert record_key([], "hello", b).chat_id != chat  # the same first message from two keys: two conversations


def test_without_keys_a_conversation_belongs_to_no_key():
    untagged = record_key([], "hello", None).chat_id
    assert untagged.startswith("conv-") and owned_chat_id(None, "conv-x") == "conv-x"
    assert not any(owned_by(untagged, owner_fingerprint(k)) for k in ("sk-key-a", ""))
    for forged in ("k" + "0" * 16, "k" + "0" * 16 + "-", "K" + owner_fingerprint("x")[:16] + "-c",
                   "k" + owner_fingerprint("x")[:15] + "-c"):
        assert not owned_by(forged, owner_fingerprint("x"))
