"""``logging.format: json``: one JSON object per log line, with the ids of the turn it came from.

A log collector reads fields, not prose: each line is ``{"time", "level",
"logger", "message"}`` plus, for a line logged inside a turn, the turn's
``platform``, ``chat_id``, ``thread_id``, ``message_id``, ``update_id`` and
``user_id`` (read from the turn's context variable,
:data:`~hermes_gateway._core.messages.turn.LOG_IDS`, so no call site
changes), and ``trace_id`` when the line was written inside a sampled trace
(``telemetry.otlp_endpoint``: :func:`~hermes_gateway._core.telemetry.trace_id`;
the text format then ends the line with `` trace_id=…``). Secrets are already gone from the record when it gets here: the
secret registry rewrites every record as it is created
(:mod:`hermes_gateway._core.secrets`), whichever formatter prints it; the
traceback text is scrubbed once more here since it is formatted late.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone
from typing import Any

from ..messages.turn import LOG_IDS
from ..secrets import scrub
from ..settings.logs import LoggingSettings
from ..telemetry import trace_id

TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"   # main's -v format, the default


class JsonFormatter(logging.Formatter):
    """One compact JSON object per record; never more than one line (newlines inside are escaped)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        ids = LOG_IDS.get()
        if ids:
            entry.update(ids)
        trace = trace_id()
        if trace is not None:
            entry["trace_id"] = trace
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = scrub(record.exc_text)
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """The text format; a line written inside a sampled trace ends with its id (`` trace_id=…``)."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # the line itself, before any traceback
        line = super().formatMessage(record)
        trace = trace_id()
        return line if trace is None else f"{line} trace_id={trace}"


def apply_logging(settings: LoggingSettings) -> None:
    """Switch the root logger's handlers to the configured format (and level, when the config sets one).

    ``main`` has set up a stderr handler with ``-v``'s level before any config
    was read; a ``logging.level`` in the config replaces the default (warning)
    and never quiets what ``-v`` asked for, so ``-vv`` still debugs.
    """
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler(sys.stderr))
    formatter = JsonFormatter() if settings.format == "json" else TextFormatter(TEXT_FORMAT)
    for handler in root.handlers:
        handler.setFormatter(formatter)
    if settings.level is not None:
        level = logging.getLevelName(settings.level.upper())
        if isinstance(level, int) and (root.level == logging.WARNING or level < root.level):
            root.setLevel(level)
