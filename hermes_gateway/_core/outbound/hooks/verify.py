"""Whether a call to a hook comes from who holds its secret: checked before the body is parsed, in constant time.

* ``github``: ``X-Hub-Signature-256: sha256=<hex>``, the HMAC-SHA256 of the raw body under the secret
  (GitHub has no timestamp: a replay is caught by the delivery id, ``X-GitHub-Delivery``);
* ``hmac-sha256``: the same HMAC in ``X-Signature-256`` (``sha256=<hex>`` or bare hex), and, when the sender
  adds ``X-Signature-Timestamp`` (Unix seconds), a request more than :data:`MAX_AGE` old (or ahead) is stale;
* ``bearer``: ``Authorization: Bearer <secret>``, checked before any of the body is read.

Every refusal says what was missing or wrong in general words only: never the
expected value, never how close a guess came.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Mapping

from ...errors import HermesError

#: How old (or how far ahead) ``X-Signature-Timestamp`` may be, in seconds.
MAX_AGE = 300.0
GITHUB_HEADER = "X-Hub-Signature-256"
HMAC_HEADER = "X-Signature-256"
TIMESTAMP_HEADER = "X-Signature-Timestamp"


class Refused(HermesError):
    """The call is not the hook owner's: the one line the caller is told (a 401)."""


def signature_header(verify: str) -> str | None:
    """The header the signature of ``verify`` comes in (None for ``bearer``)."""
    return {"github": GITHUB_HEADER, "hmac-sha256": HMAC_HEADER}.get(verify)


def check_before_body(verify: str, secret: str, headers: Mapping[str, str], now: float) -> None:
    """What can be checked without the body: the token itself, or that a signature (and a fresh timestamp) is there.

    A call without them is refused before a byte of its body is read.
    """
    if verify == "bearer":
        scheme, _, token = headers.get("Authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Refused("This hook needs 'Authorization: Bearer <secret>'.")
        if not hmac.compare_digest(token.strip().encode(), secret.encode()):
            raise Refused("The bearer token is not this hook's.")
        return
    header = signature_header(verify) or HMAC_HEADER
    if not headers.get(header, "").strip():
        raise Refused(f"This hook needs a '{header}: sha256=<hex>' signature of the body.")
    if verify == "hmac-sha256" and TIMESTAMP_HEADER in headers:
        try:
            sent = float(headers[TIMESTAMP_HEADER].strip())
        except ValueError:
            raise Refused(f"'{TIMESTAMP_HEADER}' must be Unix seconds.") from None
        if abs(now - sent) > MAX_AGE:
            raise Refused(f"The request is stale: '{TIMESTAMP_HEADER}' is more than {MAX_AGE:g} s from now.")


def check_signature(verify: str, secret: str, headers: Mapping[str, str], body: bytes) -> None:
    """The body's HMAC-SHA256 under ``secret`` against the header's (``bearer``: nothing more to check)."""
    header = signature_header(verify)
    if header is None:
        return
    given = headers.get(header, "").strip().lower()
    if given.startswith("sha256="):
        given = given[len("sha256="):]
    elif verify == "github":
        raise Refused(f"'{header}' must be 'sha256=<hex>'.")
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise Refused(f"The '{header}' signature does not match the body.")
