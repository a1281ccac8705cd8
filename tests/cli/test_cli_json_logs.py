"""The JSON log formatter: one object per line, the turn's ids from its context, secrets masked as in text logs."""

from __future__ import annotations

import io
import json
import logging

from hermes_gateway._core.cli.json_logs import JsonFormatter
from hermes_gateway._core.messages.incoming import Incoming
from hermes_gateway._core.messages.turn import LOG_IDS, log_ids
from hermes_gateway._core.secrets import protect


def _logged(*emit) -> list[dict]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("hermes_gateway.test_json_logs")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        for fn in emit:
            fn(logger)
    finally:
        logger.removeHandler(handler)
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_line_inside_a_turn_carries_its_ids_and_one_outside_does_not():
    incoming = Incoming(platform="telegram", chat_id="42", text="hi", sender_id="7", update_id="1001",
                        message_id="55", thread_id=None)

    def in_turn(logger: logging.Logger) -> None:
        token = LOG_IDS.set(log_ids(incoming))
        try:
            logger.info("inside\nwith a newline")
        finally:
            LOG_IDS.reset(token)
    first, second = _logged(in_turn, lambda logger: logger.warning("outside"))
    assert first["message"] == "inside\nwith a newline" and first["level"] == "info"
    assert {k: first[k] for k in ("platform", "chat_id", "user_id", "update_id", "message_id")} == {
        "platform": "telegram", "chat_id": "42", "user_id": "7", "update_id": "1001", "message_id": "55"}
    assert "thread_id" not in first and "text" not in first
    assert second["message"] == "outside" and "chat_id" not in second
    assert first["logger"] == "hermes_gateway.test_json_logs" and first["time"].endswith("+00:00")


def test_a_registered_secret_is_masked_in_the_message_and_the_traceback():
    secret = "sk-json-logs-secret-0123456789"
    protect(secret, mask="<api-key>")

    def failing(logger: logging.Logger) -> None:
        try:
            raise RuntimeError(f"upstream refused {secret}")
        except RuntimeError:
            logger.exception("call with %s failed", secret)
    (record,) = _logged(failing)
    assert secret not in json.dumps(record)
    assert "<api-key>" in record["message"] and "<api-key>" in record["exception"]
