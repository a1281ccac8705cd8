"""What a finished (or failed) turn left behind, shared by both wire formats."""

from __future__ import annotations

from dataclasses import dataclass

from ..events import TurnEnd, UsageReport

#: Failure codes a client sees in ``error.code`` (mid-stream) — and in metrics as the error kind.
UPSTREAM_ERROR = "upstream_error"
STREAM_RESET = "stream_reset"
SHUTDOWN = "server_shutdown"
INTERRUPTED = "interrupted"
INTERNAL = "internal_error"

MESSAGES = {
    UPSTREAM_ERROR: "The model failed to produce a reply; the gateway's log has the details. Please retry.",
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

    @property
    def ok(self) -> bool:
        return self.error_code is None

    def fail(self, code: str, message: str | None = None) -> None:
        if self.error_code is None:
            self.error_code = code
            self.error_message = message or MESSAGES.get(code, code)


def classify_end(end: TurnEnd | None, shutting_down: bool) -> tuple[str | None, str | None]:
    """(error code, client-safe message) for how the agent ended its turn."""
    if end is None:
        return INTERNAL, MESSAGES[INTERNAL]
    if end.error:
        # The agent's reason names upstream URLs: useful in the gateway's log (the agent logs it),
        # not something to hand to every API client.
        return UPSTREAM_ERROR, MESSAGES[UPSTREAM_ERROR]
    if end.interrupted:
        code = SHUTDOWN if shutting_down else INTERRUPTED
        return code, MESSAGES[code]
    return None, None


def total_usage(reports: list[UsageReport], end: TurnEnd | None) -> UsageReport:
    """The turn's usage: the agent's own total when it gave one, else the sum of its reports."""
    if end is not None and end.usage is not None:
        return end.usage
    prompt = sum(r.prompt_tokens for r in reports)
    completion = sum(r.completion_tokens for r in reports)
    return UsageReport(prompt, completion, prompt + completion, estimated=any(r.estimated for r in reports))
