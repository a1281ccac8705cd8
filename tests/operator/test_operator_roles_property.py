"""A property: whatever commands admins and non-admins send, in whatever chats and order, no non-admin ever
changes a chat's model or approves (or revokes) a user. Admins' commands do take effect.

Each example runs a fresh gateway on the reference platform (demo models, memory store) with a few
pending pairing codes, and checks the store after every command.
"""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given, settings, strategies as st

from hermes_gateway import Incoming
from hermes_gateway._core.store import ConversationKey
from hermes_gateway._core.store.operator_records import Pairing
from hermes_gateway.testing import TestGateway
from operator_helpers import reference

ADMINS = ("1", "2")          # "1" listed as reference:1, "2" listed bare (every platform)
OTHERS = ("7", "8")
CHATS = ("a", "b", "g")
CODES = ("AAAA2222", "BBBB3333", "CCCC4444")
CONFIG = {
    "model": {"demo": {"tokens_per_second": 0}},
    "models": {"big": {"name": "big-model"}, "tiny": {"name": "tiny-model"}},
    "personas": {"pirate": {"system_prompt": "Arr."}},
    "access": {"admins": ["reference:1", "2"]},
    "platforms": {"reference": {"enabled": True}},
}
COMMANDS = st.sampled_from([
    "/model big", "/model tiny", "/model default", "/model big-model", "/model", "/model nonsense",
    "/persona pirate", "/persona default", "/help", "/whoami",
    "/approve AAAA-2222", "/approve bbbb3333", "/approve CCCC 4444", "/approve WRONG123",
    "/revoke 50", "/revoke reference:51", "/revoke 52",
])
STEPS = st.lists(st.tuples(st.sampled_from(ADMINS + OTHERS), st.sampled_from(CHATS), COMMANDS), max_size=14)


@settings(deadline=None)
@given(steps=STEPS)
def test_no_non_admin_ever_changes_a_model_or_an_approval(steps):
    asyncio.run(_run(steps))


async def _run(steps) -> None:
    ids = itertools.count(1)
    async with TestGateway(CONFIG, reference()) as gw:
        store = gw._gateway.store
        for n, code in enumerate(CODES):
            await store.add_pairing(Pairing(code, "reference", str(50 + n), "dm", 0.0, 4e9))
        for user, chat, text in steps:
            before_models = {c: (await store.chat_settings(ConversationKey("reference", c))).get("model")
                             for c in CHATS}
            before_approved = {a.user_id for a in await store.approvals()}
            before_pending = {p.code for p in await store.pairings(1.0)}
            n = next(ids)
            await gw.receive(Incoming("reference", chat, text, sender_id=user, update_id=f"u{n}",
                                      message_id=f"m{n}", chat_kind="group" if chat == "g" else "private"))
            after_models = {c: (await store.chat_settings(ConversationKey("reference", c))).get("model")
                            for c in CHATS}
            after_approved = {a.user_id for a in await store.approvals()}
            after_pending = {p.code for p in await store.pairings(1.0)}
            if user in OTHERS:
                assert after_models == before_models, (user, chat, text)
                assert after_approved == before_approved and after_pending == before_pending, (user, chat, text)
            elif text.startswith("/model ") and text.split()[1] in ("big", "big-model"):
                assert after_models[chat] == "big"  # an admin's switch takes effect
            elif text == "/model default":
                assert after_models[chat] is None
