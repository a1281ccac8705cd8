"""Bearer-key auth for ``/v1/*`` and the refusal to serve the open internet without keys.

Keys are compared with :func:`hmac.compare_digest` against *every* configured
key (no early exit), so response timing says nothing about how much of a
guess was right. Keys never appear in logs or error messages.
"""

from __future__ import annotations

import hmac

from ..config import ApiServerConfig
from ..errors import ConfigError
from ..http.errors import ApiError
from ..http.guards import is_loopback

WWW_AUTHENTICATE = {"WWW-Authenticate": 'Bearer realm="hermes-gateway"'}


def matching_key(presented: str, keys: tuple[bytes, ...]) -> int | None:
    """The index of the key equal to ``presented``, or None; every key is compared, in constant time each."""
    candidate = presented.encode("utf-8", "surrogatepass")
    found = None
    for index, key in enumerate(keys):
        if hmac.compare_digest(candidate, key):
            found = index
    return found


def key_matches(presented: str, keys: tuple[bytes, ...]) -> bool:
    return matching_key(presented, keys) is not None


def check_authorization(header: str | None, keys: tuple[bytes, ...]) -> int | None:
    """Raise a 401 in OpenAI's shape unless ``header`` is ``Bearer <one of keys>``.

    Returns which key it was (its index), so stored responses can belong to
    the key that created them; None when no keys are configured.
    """
    if not keys:
        return None
    if not header:
        raise ApiError(401, "Missing API key. Send it as 'Authorization: Bearer <key>'.",
                       param=None, code="invalid_api_key", headers=WWW_AUTHENTICATE)
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise ApiError(401, "Malformed Authorization header. Send 'Authorization: Bearer <key>'.",
                       code="invalid_api_key", headers=WWW_AUTHENTICATE)
    index = matching_key(value.strip(), keys)
    if index is None:
        raise ApiError(401, "Incorrect API key provided.", code="invalid_api_key", headers=WWW_AUTHENTICATE)
    return index


def check_bind_safety(cfg: ApiServerConfig, source: str) -> None:
    """Refuse to serve a non-loopback address with no keys unless explicitly allowed."""
    if cfg.api_keys or cfg.allow_unauthenticated or is_loopback(cfg.host):
        return
    raise ConfigError(source, "api_server.api_keys",
                      f"at least one key when api_server.host is {cfg.host!r} (not loopback): anyone who can "
                      "reach it could use your model; or set api_server.allow_unauthenticated: true")
