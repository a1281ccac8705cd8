"""Approve or reject a pending pairing request from the dashboard: the ``pairing`` command's own code path.

Approving redeems the person's pending code with
:func:`..operator.store_ops.approve_code` (what ``/approve CODE`` and
``hermes-gateway pairing approve CODE`` call), so the person's next message
is answered, on every replica. Rejecting forgets the pending code with the
store's ``revoke_user`` (what ``pairing revoke`` calls): the person is asked
again, with a new code, if they write again. The dashboard names the request
by platform and user; the code itself never reaches the browser.
"""

from __future__ import annotations

import time
from typing import Any

from ..errors import HermesError
from ..operator.store_ops import approve_code

#: Longest platform name or user id accepted (anything longer is no user of any platform here).
MAX_ID = 256


class PairingRefused(HermesError, ValueError):
    """Why a decision could not be made, in one line for the operator (the route answers 4xx with it)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def checked_ids(body: dict[str, Any]) -> tuple[str, str]:
    """``platform`` and ``user_id`` of a request body, or :class:`PairingRefused` (400)."""
    platform, user = body.get("platform"), body.get("user_id")
    if not isinstance(platform, str) or not isinstance(user, str) or not platform or not user:
        raise PairingRefused(400, "platform and user_id are required strings")
    if len(platform) > MAX_ID or len(user) > MAX_ID:
        raise PairingRefused(400, f"platform and user_id are at most {MAX_ID} characters")
    return platform, user


async def decide(store: Any, platform: str, user_id: str, approve: bool, *, by: str) -> dict[str, Any]:
    """Approve (``approve=True``) or reject the pending request of ``platform:user_id``; what was done."""
    now = time.time()
    pending = await store.pairing_for(platform, user_id, now)
    if pending is None:
        raise PairingRefused(404, f"no pending pairing request from {platform}:{user_id} (approved, rejected or "
                                  "expired meanwhile)")
    if approve:
        approved = await approve_code(store, pending.code, by, now)
        if approved is None:
            raise PairingRefused(409, "the request expired or was decided meanwhile")
        return {"approved": True, "platform": approved.platform, "user_id": approved.user_id}
    await store.revoke_user(platform, user_id)
    return {"approved": False, "platform": platform, "user_id": user_id}
