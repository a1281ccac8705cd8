"""Which API key an API conversation belongs to, told by its stored key alone (never the API key itself).

The API server records its conversations under platform ``api``; with
``api_server.api_keys`` set, each chat id starts with a tag of the key that
made it (``k`` and the first 16 hex digits of :func:`owner_fingerprint`):
``k0123456789abcdef-conv-…``. The web console reads that tag to show a
person signed in with a key that key's own conversations and nobody
else's, without a table of its own or a lookup in the responses. The
fingerprint is one-way and keyed to this purpose, so the tag (listed by
``hermes-gateway history``) reveals nothing of the key. Conversations made
without keys (a loopback API) carry no tag: only the operator sees them.
"""

from __future__ import annotations

import hashlib
import re

#: The platform name API conversations are recorded (and listed) under.
API_PLATFORM = "api"
#: How many hex digits of the fingerprint tag a chat id (64 bits: no two configured keys share one).
TAG_DIGITS = 16
_TAGGED = re.compile(rf"k([0-9a-f]{{{TAG_DIGITS}}})-.+", re.ASCII | re.DOTALL)


def owner_fingerprint(api_key: str) -> str:
    """Who owns a response or conversation: a one-way fingerprint of the API key that made it."""
    key = api_key.encode("utf-8", "surrogatepass")
    return hashlib.sha256(b"hermes-gateway response owner\0" + key).hexdigest()[:32]


def owned_chat_id(owner: str | None, name: str) -> str:
    """``name`` as the chat id of ``owner``'s conversation (unchanged without an owner: no keys configured)."""
    return f"k{owner[:TAG_DIGITS]}-{name}" if owner else name


def owned_by(chat_id: str, owner: str | None) -> bool:
    """Whether the API conversation ``chat_id`` was made with the key whose fingerprint is ``owner``."""
    match = _TAGGED.fullmatch(chat_id)
    return owner is not None and match is not None and match.group(1) == owner[:TAG_DIGITS]
