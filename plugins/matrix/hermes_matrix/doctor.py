"""``hermes-gateway doctor`` for Matrix: the homeserver answers, and the token (or password) is this account's.

The core calls :func:`doctor` (``Platform.doctor``) with the parsed settings
and prints each ``(ok, text)`` as one line, secrets masked.
"""

from __future__ import annotations

from typing import Any

from .settings import MatrixSettings


async def doctor(settings: MatrixSettings) -> list[tuple[bool, str]]:
    """``/versions`` (reachable), then ``whoami`` with the access token or a password login."""
    import aiohttp
    from mautrix.client import ClientAPI
    from mautrix.types import DeviceID, UserID

    from .api import GatewayHTTPAPI

    async with aiohttp.ClientSession() as session:
        http = GatewayHTTPAPI(settings.homeserver, "", client_session=session,
                              request_timeout=min(settings.request_timeout, 15), sync_timeout=0)
        api: Any = ClientAPI(UserID(settings.user_id), DeviceID(settings.device_id), api=http)
        try:
            versions = await api.versions()  # asked without the token
        except Exception as exc:
            return [(False, f"cannot reach the homeserver at {settings.homeserver} ({type(exc).__name__}): "
                            "check platforms.matrix.homeserver and the network")]
        http.token = settings.access_token or ""  # only now: Synapse refuses /versions with a bad token
        lines = [(True, f"homeserver answers (spec {versions.versions[-1] if versions.versions else '?'})")]
        key = "access_token" if settings.access_token else "password"
        try:
            if not settings.access_token:
                from mautrix.types import LoginType, MatrixUserIdentifier

                await api.login(identifier=MatrixUserIdentifier(user=settings.user_id),
                                login_type=LoginType.PASSWORD, password=settings.password,
                                device_id=settings.device_id, store_access_token=True)
            whoami = await api.whoami()
        except Exception as exc:
            code = getattr(exc, "errcode", None) or type(exc).__name__
            return lines + [(False, f"{key}: the homeserver refused it ({code}): set a valid one")]
        if whoami.user_id != settings.user_id:
            return lines + [(False, f"{key} belongs to {whoami.user_id}, not user_id {settings.user_id}")]
        return lines + [(True, f"{key} accepted (logged in as {whoami.user_id})")]
