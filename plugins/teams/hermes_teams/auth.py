"""Inbound activities are signed by the Bot Framework: the JWT in ``Authorization`` checked before any body is read.

The rules (bot-docs ``rest-api/bot-framework-rest-connector-authentication``):
the token is RS256, signed by a key of the JWKS that the Bot Framework's
OpenID metadata names (``jwks_uri``), issued by
``https://api.botframework.com``, for the bot's app id as audience, not
expired (5 minutes of clock skew), and its ``serviceurl`` claim equals the
activity's ``serviceUrl``; a key that lists ``endorsements`` must endorse
the activity's ``channelId``. The claim checks are the Teams SDK's own
(``microsoft_teams.apps.auth.TokenValidator``: issuers, audiences
``<id>``/``api://<id>``/``api://botid-<id>``, exp/iat, leeway 300 s,
``serviceurl``). The SDK fetches the keys with ``jwt.PyJWKClient``, a
blocking ``urllib`` call on the event loop, so the keys come from here
instead: fetched with aiohttp, cached, and refetched on an unknown ``kid``
at most once per :data:`REFRESH_AT_MOST_EVERY` seconds (a flood of forged
tokens with made-up key ids costs no request to Microsoft).
"""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import aiohttp

log = logging.getLogger(__name__)
#: The SDK's validator logs every refused token at ERROR: a stranger's flood of forged requests would fill the
#: log with errors. The endpoint logs each refusal itself, at INFO, in one line.
logging.getLogger("microsoft_teams.apps.auth.token_validator").setLevel(logging.CRITICAL)

#: Least seconds between two JWKS fetches caused by an unknown key id.
REFRESH_AT_MOST_EVERY = 300.0
#: Keys are fetched again after this long anyway (Microsoft rotates them; bot-docs: "at least once every 24 hours").
KEYS_MAX_AGE = 24 * 3600.0
_MAX_KEYS_BYTES = 256 * 1024
#: Where the shared aiohttp session comes from (the client opens it lazily).
SessionSource = Callable[[], Awaitable[aiohttp.ClientSession]]


class Unauthorized(Exception):
    """The request is not the Bot Framework's: answered 401, nothing else happens. The text is for the log."""


@dataclass(frozen=True)
class Verified:
    """A token that passed: its claims and the endorsements of the key that signed it (None: the key lists none)."""

    claims: dict[str, Any]
    endorsements: tuple[str, ...] | None

    def check_activity(self, service_url: str | None, channel_id: str | None) -> None:
        """The checks that need the activity: its serviceUrl is the token's, and the key endorses its channel."""
        claimed = str(self.claims.get("serviceurl") or "").rstrip("/")
        if not service_url or claimed != service_url.rstrip("/"):
            raise Unauthorized("the activity's serviceUrl is not the token's serviceurl claim")
        if self.endorsements is not None and (channel_id or "") not in self.endorsements:
            raise Unauthorized("the signing key does not endorse the activity's channelId")


class _KeyLookup:
    """What the SDK's validator asks for a signing key: answered from keys already fetched (no I/O)."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}       # kid -> jwt.PyJWK
        self.endorsements: dict[str, tuple[str, ...] | None] = {}

    def get_signing_key_from_jwt(self, token: str) -> Any:
        import jwt

        kid = jwt.get_unverified_header(token).get("kid")
        key = self.keys.get(str(kid))
        if key is None:
            raise jwt.InvalidTokenError("unknown signing key")
        return key


class InboundAuth:
    """Verifies the bearer token of one inbound request, for one bot (``app_id``)."""

    def __init__(self, app_id: str, openid_metadata_url: str, issuer: str, session: SessionSource) -> None:
        with warnings.catch_warnings():  # the apps package warns about a preview feature this plugin never uses
            warnings.simplefilter("ignore")
            from microsoft_teams.apps.auth.token_validator import JwtValidationOptions, TokenValidator

        self._lookup = _KeyLookup()
        options = JwtValidationOptions(valid_issuers=[issuer], valid_audiences=[app_id, f"api://{app_id}",
                                                                                 f"api://botid-{app_id}"],
                                       jwks_uri="")
        validator = TokenValidator.__new__(TokenValidator)   # its __init__ builds the blocking PyJWKClient
        validator.options = options
        validator._jwks_client = self._lookup  # type: ignore[assignment]
        self._validator = validator
        self._metadata_url = openid_metadata_url
        self._session = session
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def verify(self, authorization: str) -> Verified:
        """The token's claims, or :class:`Unauthorized`. Reads only the header: call it before the body."""
        import jwt

        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or len(token) > 16_384:
            raise Unauthorized("no bearer token")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise Unauthorized("not a JWT") from None
        if header.get("alg") != "RS256":
            raise Unauthorized("not RS256")
        kid = str(header.get("kid"))
        await self._keys_for(kid)
        try:
            claims = await self._validator.validate_token(token)
        except jwt.PyJWTError as exc:
            raise Unauthorized(f"{type(exc).__name__}: {exc}") from None
        return Verified(claims, self._lookup.endorsements.get(kid))

    async def _keys_for(self, kid: str) -> None:
        now = time.monotonic()
        stale = not self._fetched_at or now - self._fetched_at > KEYS_MAX_AGE
        unknown = kid not in self._lookup.keys and now - self._fetched_at > REFRESH_AT_MOST_EVERY
        if not (stale or unknown):
            return
        async with self._lock:
            if self._fetched_at and time.monotonic() - self._fetched_at < 1 and not stale:
                return  # another request fetched them while this one waited
            try:
                await self._fetch()
            except Exception as exc:  # keys unreachable: the request cannot be checked, so it is refused
                self._fetched_at = time.monotonic()
                log.warning("teams: could not fetch the Bot Framework's signing keys: %s: %s",
                            type(exc).__name__, exc)
                raise Unauthorized("signing keys unavailable") from None

    async def _fetch(self) -> None:
        import jwt

        session = await self._session()
        metadata = await _get_json(session, self._metadata_url)
        jwks_uri = metadata.get("jwks_uri") if isinstance(metadata, dict) else None
        if not isinstance(jwks_uri, str):
            raise ValueError("the OpenID metadata has no jwks_uri")
        jwks = await _get_json(session, jwks_uri)
        keys: dict[str, Any] = {}
        endorsements: dict[str, tuple[str, ...] | None] = {}
        for entry in (jwks.get("keys") if isinstance(jwks, dict) else None) or []:
            try:
                key = jwt.PyJWK(entry, algorithm="RS256")
            except jwt.PyJWTError:
                continue
            kid = str(entry.get("kid"))
            keys[kid] = key
            listed = entry.get("endorsements")
            endorsements[kid] = tuple(str(e) for e in listed) if isinstance(listed, list) else None
        self._lookup.keys, self._lookup.endorsements = keys, endorsements
        self._fetched_at = time.monotonic()


async def _get_json(session: aiohttp.ClientSession, url: str) -> Any:
    async with session.get(url, timeout=aiohttp.ClientTimeout(total=20)) as response:
        response.raise_for_status()
        body = await response.content.read(_MAX_KEYS_BYTES + 1)
        if len(body) > _MAX_KEYS_BYTES:
            raise ValueError(f"{url} answered more than {_MAX_KEYS_BYTES} bytes")
        import json

        return json.loads(body)

