"""``logging: {format: text | json, level: ...}``: how the gateway writes its log lines on stderr.

``text`` (the default) is the one-line ``LEVEL logger: message`` form a
person reads; ``json`` is one JSON object per line for a log collector
(Loki, journald's JSON export, Cloud Logging), each carrying the ids of the
turn it came from. ``level`` unset keeps the command line's ``-v`` choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FORMATS = ("text", "json")
LEVELS = ("debug", "info", "warning", "error", "critical")


@dataclass(frozen=True)
class LoggingSettings:
    """``logging:``; ``level`` None = as ``-v`` says (warning without it)."""

    format: str = "text"
    level: str | None = None


def parse_logging(parser: Any, value: Any) -> LoggingSettings:
    """The ``logging:`` section (``parser`` is the config's ``_Parser``: one-line errors naming the key)."""
    section = parser.section(value, "logging", ("format", "level"))
    fmt = parser.get(section, "logging", "format", "str", "text")
    if str(fmt).strip().lower() not in FORMATS:
        raise parser.fail("logging.format", f"one of {', '.join(FORMATS)}, got {fmt!r}")
    level = parser.get(section, "logging", "level", "str", None)
    if level is not None and str(level).strip().lower() not in LEVELS:
        raise parser.fail("logging.level", f"one of {', '.join(LEVELS)}, got {level!r}")
    return LoggingSettings(format=str(fmt).strip().lower(), level=None if level is None else str(level).strip().lower())
