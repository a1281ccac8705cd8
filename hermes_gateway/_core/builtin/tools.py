"""Built-in tools: the current time, a safe arithmetic evaluator, and a QR code.

Small on purpose: they let the demo model and the tests exercise the whole
tool loop without a network. ``qr_code`` returns an image (a
:class:`~hermes_gateway._core.tools.ToolResult` with media), so attachments can
be tried with the demo model: ``tool: qr_code {"text": "hello"}``. ``calculate`` walks the expression's syntax
tree and allows numbers and arithmetic only, so no input can run code,
read names or build huge numbers.
"""

from __future__ import annotations

import ast
import io
import math
import operator
from datetime import datetime, timezone
from typing import Any, Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import HermesError
from ..hookspecs import hookimpl
from ..media import Media
from ..tools import Tool, ToolResult

MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 10 ** 100
MAX_QR_TEXT = 1000  # a QR code stays scannable on a phone screen; segno itself allows ~2,900 bytes

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "sqrt": math.sqrt, "abs": abs, "round": round, "floor": math.floor, "ceil": math.ceil,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "log": math.log, "exp": math.exp,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}


class CalculationError(HermesError, ValueError):
    """The expression is not plain arithmetic, or its result would be unreasonable."""


def evaluate(expression: str) -> int | float:
    """Evaluate arithmetic like ``(2 + 3) * 4 / 5`` or ``sqrt(2) ** 2`` without ``eval``."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalculationError("expected a non-empty arithmetic expression")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculationError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise CalculationError(f"not an arithmetic expression: {expression!r}") from None
    return _eval(tree.body)


def _eval(node: ast.AST) -> int | float:
    # a number, not a bool (an int subclass) nor a complex
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalculationError(f"exponent larger than {MAX_EXPONENT}")
        try:
            result = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise CalculationError("division by zero") from None
        except OverflowError:
            raise CalculationError("result too large") from None
        return _bounded(result)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
            and not node.keywords and len(node.args) in (1, 2)):
        args = [_eval(a) for a in node.args]
        try:
            return _bounded(_FUNCTIONS[node.func.id](*args))
        except (ValueError, OverflowError, TypeError) as exc:
            raise CalculationError(f"{node.func.id}: {exc}") from None
    raise CalculationError(f"unsupported element {type(node).__name__} (only numbers, + - * / // % ** and "
                           f"{', '.join(sorted(_FUNCTIONS))} are allowed)")


def _bounded(value: Any) -> int | float:
    if isinstance(value, complex):
        raise CalculationError("result is not a real number")
    if isinstance(value, int) and abs(value) > MAX_MAGNITUDE:
        raise CalculationError("result too large")
    return value


def calculate(expression: str) -> str:
    """The tool: the value of ``expression`` as text (integers stay exact)."""
    value = evaluate(expression)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return str(value)


def current_time(timezone_name: str = "UTC") -> str:
    """The tool: the current date and time in an IANA time zone, ISO 8601."""
    try:
        zone = timezone.utc if timezone_name.upper() == "UTC" else ZoneInfo(timezone_name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {timezone_name!r} (use an IANA name like Europe/Paris)") from None
    return datetime.now(zone).isoformat(timespec="seconds")


def qr_code(text: str) -> ToolResult:
    """The tool: a PNG QR code of ``text`` (segno: pure Python), for the person to scan."""
    import segno  # only when the tool runs: the CLI starts without it

    if not isinstance(text, str) or not text:
        raise ValueError("expected the text to encode, a non-empty string")
    if len(text) > MAX_QR_TEXT:
        raise ValueError(f"text longer than {MAX_QR_TEXT} characters")
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="png", scale=8, border=2)
    caption = text if len(text) <= 200 else text[:199] + "…"
    return ToolResult(text=f"A QR code for {len(text)} characters of text.",
                      media=[Media(data=out.getvalue(), mime="image/png", filename="qr.png", caption=caption)])


QR_CODE = Tool(
    name="qr_code",
    description="Make a QR code image of a text or link; the person receives the image.",
    function=qr_code,
    parameters={"type": "object",
                "properties": {"text": {"type": "string", "description": "the text or URL to encode"}},
                "required": ["text"]},
)

CALCULATE = Tool(
    name="calculate",
    description="Evaluate an arithmetic expression exactly, e.g. '(2 + 3) * 4' or 'sqrt(2) ** 2'.",
    function=calculate,
    parameters={"type": "object",
                "properties": {"expression": {"type": "string", "description": "the arithmetic expression"}},
                "required": ["expression"]},
)

CURRENT_TIME = Tool(
    name="current_time",
    description="The current date and time, ISO 8601, in the given IANA time zone (default UTC).",
    function=current_time,
    parameters={"type": "object",
                "properties": {"timezone_name": {"type": "string", "description": "IANA zone, e.g. Europe/Paris"}}},
)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(CURRENT_TIME)
    register(CALCULATE)
    register(QR_CODE)
