"""signal-cli's JSON-RPC errors, as the two exceptions the core knows (docs/plugins.md section 5).

The codes are signal-cli's (``jsonrpc/SignalJsonRpcCommandHandler.java``,
``man/signal-cli-jsonrpc.5.adoc``): -1 user error, -3 IO error, -4 untrusted
identity, -5 rate limit, -6 captcha rejected, and JSON-RPC's own -326xx. A
rate limit carries the send result in ``error.data.response``: each recipient's
``RATE_LIMIT_FAILURE`` with ``retryAfterSeconds`` (the Signal server's
Retry-After, signal-cli 0.14.3+), or with a ``token`` when Signal wants a
captcha solved first (proof required), which no wait fixes.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import DeliveryError, RateLimited, scrub_secrets

RATE_LIMIT = -5
#: When signal-cli reports a rate limit without a wait (older than 0.14.3), this long (Signal publishes none).
DEFAULT_RETRY_AFTER = 30.0
#: Longest wait taken from a daemon's answer (a hostile or broken number would hold the chat forever).
MAX_RETRY_AFTER = 3600.0
FIXES = {
    -1: "signal-cli refused it",
    -3: "signal-cli could not reach Signal",
    -4: "the recipient's safety number changed: trust it with signal-cli trust",
    -6: "Signal's captcha was refused",
    -32601: "signal-cli does not know the method (upgrade signal-cli to 0.13 or later)",
    -32602: "signal-cli refused the parameters",
}


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and value >= 0:
        return float(min(value, MAX_RETRY_AFTER))
    return None


def rate_limit_results(error: dict[str, Any]) -> list[dict[str, Any]]:
    data = error.get("data")
    response = data.get("response") if isinstance(data, dict) else None
    results = response.get("results") if isinstance(response, dict) else None
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def is_rate_limit(error: dict[str, Any]) -> bool:
    return error.get("code") == RATE_LIMIT or any(r.get("type") == "RATE_LIMIT_FAILURE"
                                                  for r in rate_limit_results(error))


def translate(error: Any, what: str) -> Exception:
    """The exception for a JSON-RPC ``error`` object (any shape: a hostile daemon's too)."""
    if not isinstance(error, dict):
        return DeliveryError(f"signal: {what}: the daemon answered an error that is not an object", retryable=True)
    code = error.get("code")
    message = scrub_secrets(str(error.get("message", ""))[:200])
    if is_rate_limit(error):
        results = rate_limit_results(error)
        if any(r.get("token") for r in results):
            return DeliveryError(f"signal: {what}: Signal wants a captcha solved before more messages "
                                 "(proof required): see signal-cli's submitRateLimitChallenge", retryable=False)
        waits = [w for w in (_number(r.get("retryAfterSeconds")) for r in results) if w is not None]
        return RateLimited(max(waits) if waits else DEFAULT_RETRY_AFTER, scope="bot")
    fix = FIXES.get(code) if isinstance(code, int) else None
    retryable = code in (-3, -32603) or not isinstance(code, int)
    text = f"signal: {what}: {fix + ': ' if fix else ''}{message or 'error ' + str(code)}"
    return DeliveryError(text, retryable=retryable)
