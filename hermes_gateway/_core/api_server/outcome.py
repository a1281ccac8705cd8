"""What a finished (or failed) turn left behind, shared by both wire formats.

An upstream's refusal keeps its meaning (:func:`refusal_error`): a 400 (413, 422) is the client's request
and reaches it as that status with the upstream's message, ``param`` and ``code``
(``context_length_exceeded``); a 429 stays a 429 with the upstream's ``Retry-After``; any other 4xx (401,
403, 404: a key or model the upstream refuses) is the operator's to fix, a 502 that says so and that the
SDKs do not retry (``x-should-retry: false``). A turn that ran out of rounds (``model.max_turns``, the model
still calling the gateway's tools) is a 502 the SDKs do not retry either: the same request would loop the same
way. Only outages (5xx, the network) are "Please retry".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events import TurnEnd, UpstreamRefusal, UsageReport
from ..http.errors import INVALID_REQUEST, SERVER_ERROR, ApiError

#: Failure codes a client sees in ``error.code`` (mid-stream) — and in metrics as the error kind.
UPSTREAM_ERROR = "upstream_error"
UPSTREAM_REFUSED = "upstream_refused"            # the upstream refused the request (400, 413, 422)
UPSTREAM_RATE_LIMITED = "upstream_rate_limited"  # 429
UPSTREAM_MISCONFIGURED = "upstream_misconfigured"  # 401, 403, 404...: the gateway's key or model
MAX_ROUNDS = "max_rounds_exceeded"             # model.max_turns reached with the model still calling tools
STREAM_RESET = "stream_reset"
SHUTDOWN = "server_shutdown"
INTERRUPTED = "interrupted"
INTERNAL = "internal_error"

MESSAGES = {
    UPSTREAM_ERROR: "The model failed to produce a reply; the gateway's log has the details. Please retry.",
    UPSTREAM_MISCONFIGURED: ("The gateway's upstream model refused the gateway's own credentials or settings "
                             "(HTTP {status}); the gateway's operator has to fix this (the gateway's log has the "
                             "details); retrying will not help."),
    MAX_ROUNDS: ("The model kept calling the gateway's tools until the gateway's limit of model calls per request "
                 "(model.max_turns); the gateway's log lists the tools it ran. Retrying the same request would do "
                 "the same."),
    STREAM_RESET: ("The model's stream failed after part of the reply was sent, and the retried reply "
                   "differs from what you received. Please retry the request."),
    SHUTDOWN: "The gateway is shutting down; the reply was cut short. Please retry.",
    INTERRUPTED: "The reply was interrupted before it finished.",
    INTERNAL: "The gateway failed while producing this reply (see the gateway's log).",
}


@dataclass
class Outcome:
    """The text the client received, the usage, and the failure code if the turn did not complete."""

    text: str = ""
    reasoning: str = ""
    usage: UsageReport | None = None
    error_code: str | None = None
    error_message: str | None = None
    end: TurnEnd | None = None
    refused: ApiError | None = None  # what the client is told when the upstream refused (its status and fields)

    @property
    def ok(self) -> bool:
        return self.error_code is None

    def fail(self, code: str, message: str | None = None, refused: ApiError | None = None) -> None:
        if self.error_code is None:
            self.error_code = code
            self.error_message = message or MESSAGES.get(code, code)
            self.refused = refused

    def error_fields(self) -> dict[str, object]:
        """The ``error`` object of a failure after the stream began: the refusal's fields when there was one."""
        refused = self.refused
        if refused is not None:
            return refused.body()["error"]
        return {"message": self.error_message or "", "type": SERVER_ERROR, "param": None, "code": self.error_code}


def classify_end(end: TurnEnd | None, shutting_down: bool) -> tuple[str | None, str | None]:
    """(error code, client-safe message) for how the agent ended its turn."""
    if end is None:
        return INTERNAL, MESSAGES[INTERNAL]
    if end.error:
        # The agent's reason names upstream URLs: useful in the gateway's log (the agent logs it),
        # not something to hand to every API client.
        if end.rounds_exhausted:
            return MAX_ROUNDS, MESSAGES[MAX_ROUNDS]
        refused = refusal_error(end)
        if refused is not None:
            return _KINDS.get(refused.status, UPSTREAM_MISCONFIGURED), refused.message
        return UPSTREAM_ERROR, MESSAGES[UPSTREAM_ERROR]
    if end.interrupted:
        code = SHUTDOWN if shutting_down else INTERRUPTED
        return code, MESSAGES[code]
    return None, None


_KINDS = {400: UPSTREAM_REFUSED, 413: UPSTREAM_REFUSED, 422: UPSTREAM_REFUSED, 429: UPSTREAM_RATE_LIMITED}


def refusal_error(end: TurnEnd | None) -> ApiError | None:
    """The error to answer with when the upstream refused the turn, or it ran out of rounds (None otherwise)."""
    if end is not None and end.error and end.rounds_exhausted:
        return ApiError(502, MESSAGES[MAX_ROUNDS], type=SERVER_ERROR, code=MAX_ROUNDS,
                        headers={"x-should-retry": "false"})
    refusal: UpstreamRefusal | None = end.refusal if end is not None and end.error else None
    if refusal is None:
        return None
    kind = _KINDS.get(refusal.status)
    if kind == UPSTREAM_REFUSED:
        return ApiError(refusal.status, refusal.message, type=refusal.type or INVALID_REQUEST, param=refusal.param,
                        code=refusal.code)
    if kind == UPSTREAM_RATE_LIMITED:
        headers = {"Retry-After": refusal.retry_after} if refusal.retry_after else {}
        if refusal.retry_after_ms:
            headers["retry-after-ms"] = refusal.retry_after_ms
        return ApiError(429, refusal.message, type=refusal.type or "rate_limit_error", param=refusal.param,
                        code=refusal.code or "rate_limit_exceeded", headers=headers)
    # The upstream's words about the gateway's own key (a masked key, an account) are not the client's business.
    return ApiError(502, MESSAGES[UPSTREAM_MISCONFIGURED].format(status=refusal.status), type=SERVER_ERROR,
                    code=UPSTREAM_MISCONFIGURED, headers={"x-should-retry": "false"})


def total_usage(reports: list[UsageReport], end: TurnEnd | None) -> UsageReport:
    """The turn's usage: the agent's own total when it gave one, else the sum of its reports."""
    if end is not None and end.usage is not None:
        return end.usage
    prompt = sum(r.prompt_tokens for r in reports)
    completion = sum(r.completion_tokens for r in reports)
    return UsageReport(prompt, completion, prompt + completion, estimated=any(r.estimated for r in reports))
