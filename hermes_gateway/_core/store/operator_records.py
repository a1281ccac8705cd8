"""What the store keeps for running one bot for many people: chat choices, approvals, pairing codes, usage.

They live in the conversation store (SQLite, memory or PostgreSQL) beside
the conversations, so a chat's ``/model`` or ``/persona`` choice survives a
restart, and an approval made on one replica is honoured at once by every
other replica sharing the database (each check reads the store; nothing is
cached).

:class:`OperatorRecords` is the seam: every backend implements it (the
memory one here, :mod:`.operator_sqlite` and :mod:`.operator_postgres`), and
one contract test module runs against all three.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # base.py imports this module
    from .base import ConversationKey


@dataclass(frozen=True, slots=True)
class Pairing:
    """A pending pairing: an unknown user got ``code`` in ``chat_id`` and waits for an approval."""

    code: str
    platform: str
    user_id: str
    chat_id: str
    created: float
    expires: float


@dataclass(frozen=True, slots=True)
class Approval:
    """A user allowed in by a pairing (``hermes-gateway pairing approve`` or an admin's ``/approve``)."""

    platform: str
    user_id: str
    approved_at: float
    approved_by: str


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One turn's token usage: which chat, who, which model; ``estimated`` when the upstream gave none."""

    at: float
    platform: str
    chat_id: str
    thread_id: str | None
    user_id: str
    model: str
    input_tokens: int
    output_tokens: int
    estimated: bool = False


class OperatorRecords:
    """The operator's records; a backend that does not keep them says so in one line (a StoreError)."""

    location: str = "(store)"

    def _not_kept(self, what: str) -> Any:
        from .base import StoreError  # (base.py imports this module)

        raise StoreError(f"{self.location}: this store does not keep {what}")

    # -- a chat's own choices (/model, /persona) ------------------------------------------------------------

    async def chat_settings(self, key: ConversationKey) -> dict[str, str]:
        """The chat's stored choices by name (``{"model": "big", "persona": "pirate"}``); empty if none."""
        return {}

    async def set_chat_setting(self, key: ConversationKey, name: str, value: str | None) -> None:
        """Store (or, with None, forget) one choice of the chat."""
        self._not_kept("chat settings")

    # -- pairing and approvals ------------------------------------------------------------------------------

    async def is_approved(self, platform: str, user_id: str) -> bool:
        return False

    async def approvals(self) -> list[Approval]:
        return []

    async def approve_user(self, platform: str, user_id: str, by: str, now: float) -> None:
        self._not_kept("approvals")

    async def revoke_user(self, platform: str, user_id: str) -> bool:
        """Forget an approval (and any pending code of the user); False if there was neither."""
        return False

    async def pairing_for(self, platform: str, user_id: str, now: float) -> Pairing | None:
        """The user's pending, unexpired pairing, if any."""
        return None

    async def add_pairing(self, pairing: Pairing) -> Pairing:
        """Keep a new code for the user, replacing an expired one; returns the code that stands (an
        unexpired one another replica just made wins)."""
        return self._not_kept("pairing codes")

    async def pairings(self, now: float) -> list[Pairing]:
        """Pending, unexpired pairings, the oldest first."""
        return []

    async def redeem_pairing(self, code: str, by: str, now: float) -> Pairing | None:
        """Approve the user of an unexpired ``code`` and remove the code, in one transaction; None when
        the code is unknown or expired (nothing changes then)."""
        return None

    # -- usage --------------------------------------------------------------------------------------------

    async def record_usage(self, record: UsageRecord) -> None:
        self._not_kept("usage")

    async def usage(self, since: float = 0.0) -> list[UsageRecord]:
        """Every usage record at or after ``since`` (Unix time), oldest first."""
        return []


class MemoryOperatorRecords(OperatorRecords):
    """The records in dicts (the :class:`~.memory.MemoryStore`'s; kept across ``close()`` like it)."""

    def _records(self) -> dict[str, Any]:
        state = self.__dict__.get("_operator_state")
        if state is None:
            state = self.__dict__["_operator_state"] = {"settings": {}, "approved": {}, "pairings": {},
                                                        "usage": []}
        return state

    async def chat_settings(self, key: ConversationKey) -> dict[str, str]:
        return dict(self._records()["settings"].get(_parts(key), {}))

    async def set_chat_setting(self, key: ConversationKey, name: str, value: str | None) -> None:
        settings = self._records()["settings"].setdefault(_parts(key), {})
        if value is None:
            settings.pop(name, None)
        else:
            settings[name] = str(value)

    async def is_approved(self, platform: str, user_id: str) -> bool:
        return (platform, user_id) in self._records()["approved"]

    async def approvals(self) -> list[Approval]:
        return sorted(self._records()["approved"].values(), key=lambda a: a.approved_at)

    async def approve_user(self, platform: str, user_id: str, by: str, now: float) -> None:
        self._records()["approved"].setdefault((platform, user_id), Approval(platform, user_id, now, by))

    async def revoke_user(self, platform: str, user_id: str) -> bool:
        records = self._records()
        found = records["approved"].pop((platform, user_id), None) is not None
        for code, pairing in list(records["pairings"].items()):
            if (pairing.platform, pairing.user_id) == (platform, user_id):
                del records["pairings"][code]
                found = True
        return found

    async def pairing_for(self, platform: str, user_id: str, now: float) -> Pairing | None:
        for pairing in self._records()["pairings"].values():
            if (pairing.platform, pairing.user_id) == (platform, user_id) and pairing.expires > now:
                return pairing
        return None

    async def add_pairing(self, pairing: Pairing) -> Pairing:
        standing = await self.pairing_for(pairing.platform, pairing.user_id, pairing.created)
        if standing is not None:
            return standing
        pairings = self._records()["pairings"]
        for code, old in list(pairings.items()):
            if (old.platform, old.user_id) == (pairing.platform, pairing.user_id):
                del pairings[code]
        pairings[pairing.code] = pairing
        return pairing

    async def pairings(self, now: float) -> list[Pairing]:
        return sorted((p for p in self._records()["pairings"].values() if p.expires > now), key=lambda p: p.created)

    async def redeem_pairing(self, code: str, by: str, now: float) -> Pairing | None:
        pairings = self._records()["pairings"]
        pairing = pairings.get(code)
        if pairing is None or pairing.expires <= now:
            return None
        del pairings[code]
        await self.approve_user(pairing.platform, pairing.user_id, by, now)
        return pairing

    async def record_usage(self, record: UsageRecord) -> None:
        self._records()["usage"].append(record)

    async def usage(self, since: float = 0.0) -> list[UsageRecord]:
        return [r for r in self._records()["usage"] if r.at >= since]


def _parts(key: ConversationKey) -> tuple[str, str, str]:
    from .codec import key_parts

    return key_parts(key)
