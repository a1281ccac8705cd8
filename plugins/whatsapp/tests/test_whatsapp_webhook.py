"""The webhook's pure parts: the signature, the handshake, and reading whatever Meta (or anyone) sends."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_whatsapp.emulator import GraphApiEmulator
from hermes_whatsapp.webhook import MediaRef, handshake, parse, signature, verify_signature
from whatsapp_test_support import APP_SECRET, PHONE_ID, TOKEN, USER, VERIFY_TOKEN

META = GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET)  # only its payload builders: not started


def test_the_signature_is_hmac_sha256_of_the_raw_body():
    body = b'{"object":"whatsapp_business_account","entry":[]}'
    # the same HMAC computed independently: hashlib/hmac would only repeat the code under test
    assert signature("secret", b"") == "sha256=f9e66e179b6747ae54108f82f8ade8b3c25d76fd30afde6c395822c530196169"
    good = signature(APP_SECRET, body)
    assert verify_signature(APP_SECRET, body, good)
    assert verify_signature(APP_SECRET, body, good.upper().replace("SHA256", "sha256"))  # hex case does not matter
    assert not verify_signature(APP_SECRET, body + b" ", good)
    assert not verify_signature("another-app-secret", body, good)
    assert not verify_signature(APP_SECRET, body, None)
    assert not verify_signature(APP_SECRET, body, "")
    assert not verify_signature(APP_SECRET, body, good[len("sha256="):])
    assert not verify_signature(APP_SECRET, body, "sha256=ünïcode")


def test_the_handshake_echoes_the_challenge_only_for_our_token():
    query = {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1158201444"}
    assert handshake(query, VERIFY_TOKEN) == "1158201444"
    assert handshake({**query, "hub.verify_token": "wrong-token"}, VERIFY_TOKEN) is None
    assert handshake({**query, "hub.mode": "unsubscribe"}, VERIFY_TOKEN) is None
    assert handshake({k: v for k, v in query.items() if k != "hub.challenge"}, VERIFY_TOKEN) is None
    assert handshake({}, VERIFY_TOKEN) is None


def encode(payload) -> bytes:
    return json.dumps(payload).encode()


def test_a_text_message_is_read_with_its_sender_and_id():
    payload = META.text_message(USER, "Hallo!", name="Grace")
    found = parse(encode(payload), PHONE_ID)
    [message] = found.messages
    assert (message.sender, message.kind, message.text, message.name) == (USER, "text", "Hallo!", "Grace")
    assert message.wamid.startswith("wamid.") and not found.problems and not found.statuses


def test_a_media_message_is_read_with_its_media_id_type_hash_and_caption():
    payload = META.media_message(USER, "document", b"%PDF-1.4 x", caption="the contract", filename="c.pdf")
    [message] = parse(encode(payload), PHONE_ID).messages
    stored = META.files.files[message.media.media_id]
    assert (message.kind, message.text) == ("document", "the contract")
    assert message.media == MediaRef(stored.media_id, "application/pdf", stored.sha256, "c.pdf", voice=False)
    voice = parse(encode(META.media_message(USER, "audio")), PHONE_ID).messages[0]
    music = parse(encode(META.media_message(USER, "audio", b"ID3", voice=False)), PHONE_ID).messages[0]
    assert (voice.media.voice, voice.text, music.media.voice) == (True, "", False)


def test_a_media_message_without_its_media_id_is_a_problem_but_still_a_message():
    payload = META.media_message(USER, "image", caption="look")
    del payload["entry"][0]["changes"][0]["value"]["messages"][0]["image"]["id"]
    found = parse(encode(payload), PHONE_ID)
    [message] = found.messages
    assert (message.kind, message.media, message.text) == ("image", None, "look")
    assert found.problems == ["an image message without its media id"]


def test_a_forwarded_message_is_quoted_as_someone_elses_words():
    payloads = [META.text_message(USER, "Deploy at 5.\nNot before.") for _ in range(3)]
    payloads[0]["entry"][0]["changes"][0]["value"]["messages"][0]["context"] = {"forwarded": True}
    payloads[1]["entry"][0]["changes"][0]["value"]["messages"][0]["context"] = {"frequently_forwarded": True}
    texts = [parse(encode(p), PHONE_ID).messages[0].text for p in payloads]
    assert texts == ["[forwarded message]\n> Deploy at 5.\n> Not before."] * 2 + ["Deploy at 5.\nNot before."]


def test_buttons_and_list_replies_are_text():
    payload = META.text_message(USER, "x")
    raw = payload["entry"][0]["changes"][0]["value"]["messages"][0]
    raw.update({"type": "interactive", "interactive": {"type": "list_reply", "list_reply": {"id": "1",
                                                                                          "title": "Option A"}}})
    del raw["text"]
    [message] = parse(encode(payload), PHONE_ID).messages
    assert (message.kind, message.text) == ("interactive", "Option A")


def test_statuses_with_errors():
    payload = META.status_update("wamid.OUT1", "failed", USER, errors=[{"code": 131026, "title": "Undeliverable"}])
    [status] = parse(encode(payload), PHONE_ID).statuses
    assert (status.wamid, status.status, status.recipient, status.errors) == \
        ("wamid.OUT1", "failed", USER, ((131026, "Undeliverable"),))


def test_another_numbers_delivery_is_not_ours():
    found = parse(encode(META.text_message(USER, "hi")), "999999999")
    assert found.empty and found.other_numbers == {PHONE_ID} and not found.problems


def test_account_updates_are_not_messages_and_not_problems():
    payload = {"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [
        {"field": "account_update", "value": {"event": "VERIFIED_ACCOUNT"}}]}]}
    found = parse(encode(payload), PHONE_ID)
    assert found.empty and not found.problems


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["object", "entry", "changes", "field", "value", "metadata", "phone_number_id", "messages",
                         "statuses", "id", "from", "type", "text", "body", "status", "errors", "code", "contacts",
                         "profile", "name", "wa_id", "interactive", "button_reply", "title"]) | st.text(max_size=4),
        inner, max_size=6),
    max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(st.one_of(json_values, json_values.map(lambda v: {"object": "whatsapp_business_account", "entry": v})),
       st.booleans())
def test_any_body_is_read_without_an_exception(value, as_bytes):
    body = encode(value) if not as_bytes else encode(value)[:-1]  # also cut off: not JSON any more
    found = parse(body, PHONE_ID)
    assert all(isinstance(p, str) and "\n" not in p for p in found.problems)
    assert all(m.sender and m.wamid for m in found.messages)


def bundled(*statuses):
    """One change carrying a valid text message and the given status entries (as Meta may batch them)."""
    payload = META.text_message(USER, "echo: still here")
    payload["entry"][0]["changes"][0]["value"]["statuses"] = list(statuses)
    return payload


def test_a_malformed_status_entry_costs_only_itself():
    good = {"id": "wamid.OUT2", "status": "read", "recipient_id": USER}
    for odd in ({"id": "wamid.OUT1", "status": "failed", "errors": 5},
                {"id": "wamid.OUT1", "status": "failed", "errors": {"code": 1}},
                {"id": "wamid.OUT1", "status": "failed", "errors": [{"code": 1, "title": {"nested": True}}]},
                {"id": "wamid.OUT1", "status": "x" * 10_000},
                {"id": 7, "status": "read"}, "not an object"):
        found = parse(encode(bundled(odd, good)), PHONE_ID)
        assert [m.text for m in found.messages] == ["echo: still here"], odd
        assert found.statuses[-1] == parse(encode(bundled(good)), PHONE_ID).statuses[0]
        assert all(s.status in ("failed", "read", "other") for s in found.statuses)
