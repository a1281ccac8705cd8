"""The one parser every number of ``config.yaml`` goes through: finite, of the right kind, within its range.

Why one: each section used to compare a value with its minimum itself, and
``nan`` compares false with everything, so ``.nan`` passed every range
check (``web.session_hours: .nan`` made every console request fail,
``conversation.shutdown_grace: .nan`` made a stop crash); ``.inf`` passed
every minimum and overflowed where a whole number was expected. Here a
number is refused unless it is finite and within ``[minimum, maximum]``;
a boolean is not a number (YAML reads ``yes`` as true). The error text says
the range, so the config's one line names file, key and range.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import HermesError


class NumberError(HermesError, ValueError):
    """A value that is not a number in its range: ``expected`` (the range, then ``got ...``) is what the config's
    one line says after the key; ``wanted`` and ``got`` are its two halves, for a key that accepts more."""

    def __init__(self, wanted: str, got: str) -> None:
        self.wanted, self.got = wanted, got
        self.expected = f"{wanted}, {got}"
        super().__init__(self.expected)


def describe_range(*, whole: bool, minimum: float | None, maximum: float | None, unit: str = "") -> str:
    """``a whole number from 1 to 64``, ``a number >= 0``, ``a number`` (``unit`` follows each bound)."""
    what = "a whole number" if whole else "a number"
    if minimum is not None and maximum is not None:
        return f"{what} from {show_number(minimum)}{unit} to {show_number(maximum)}{unit}"
    if minimum is not None:
        return f"{what} >= {show_number(minimum)}{unit}"
    if maximum is not None:
        return f"{what} <= {show_number(maximum)}{unit}"
    return what


def show_number(value: float) -> str:
    """``1,000,000``, ``0.001``, ``8,760``: a bound as people read it."""
    if isinstance(value, int) or (math.isfinite(value) and float(value).is_integer() and abs(value) < 1e18):
        return f"{int(value):,}"
    return f"{value:g}"


def parse_number(value: Any, *, whole: bool = False, minimum: float | None = None,
                 maximum: float | None = None, unit: str = "") -> int | float:
    """``value`` (a YAML number, or a string holding one) as an int (``whole``) or float in its range.

    Raises :class:`NumberError` for a boolean, a non-number, nan or an infinity, a fraction where a whole
    number is expected, and anything outside ``[minimum, maximum]``; its text names the range.
    """
    expected = describe_range(whole=whole, minimum=minimum, maximum=maximum, unit=unit)
    number: int | float
    if isinstance(value, bool):
        raise NumberError(expected, f"got {value!r}")
    if isinstance(value, (int, float)):
        number = value
    elif isinstance(value, str):
        try:
            number = int(value.strip()) if whole else float(value.strip())
        except ValueError:
            try:
                number = float(value.strip())  # "3.0" for a whole number: judged below like the float 3.0
            except ValueError:
                raise NumberError(expected, f"got {_show(value)}") from None
    else:
        raise NumberError(expected, f"got {_kind(value)}")
    if isinstance(number, float) and not math.isfinite(number):
        raise NumberError(f"{expected} (finite)", f"got {number!r}")
    if whole:
        if isinstance(number, float):
            if not number.is_integer():
                raise NumberError(expected, f"got {number!r}")
            number = int(number)
    else:
        number = float(number)
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        raise NumberError(expected, f"got {_show(number) if isinstance(number, int) else show_number(number)}")
    return number


def _kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", type(None): "nothing"}.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
