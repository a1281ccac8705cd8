"""An API client's own ``tools``, ``tool_choice`` and ``parallel_tool_calls``, checked.

The client's function tools are offered to the model, beside the
gateway's own when ``api_server.gateway_tools`` says so (:func:`offers_gateway_tools`;
the agent runs its own, renamed if a client tool took the name; a call of
a client tool ends the turn for the client to run). Anything the gateway
could not pass on faithfully is a 400 naming the parameter: a tool type
other than ``function``, duplicate names, a ``tool_choice`` naming a
function that was not offered. Both endpoints'
shapes are accepted (Chat Completions nests the function, Responses does
not); the result is always the Chat Completions shape.
"""

from __future__ import annotations

from typing import Any

from ..http.errors import bad_request
from .schemas import check_schema, check_schema_name
from .shown import kind_of, shown

#: OpenAI's own limit on the number of tools in one request.
MAX_TOOLS = 128
MAX_DESCRIPTION = 8192


def offers_gateway_tools(mode: str, client_tools: tuple[dict[str, Any], ...]) -> bool:
    """Whether a turn offers the gateway's own tools (``api_server.gateway_tools``): ``always``, ``never``, or
    ``auto``: only when the client brings no tools (an agent framework runs its own loop)."""
    return mode == "always" or (mode == "auto" and not client_tools)


def check_tools(tools: Any, where: str, *, nested: bool) -> tuple[dict[str, Any], ...]:
    """The client's tools as ``{"type": "function", "function": {...}}`` entries (checked)."""
    if tools is None:
        return ()
    if not isinstance(tools, list):
        raise bad_request(f"{where} must be an array of tools, got {kind_of(tools)}.", where)
    if len(tools) > MAX_TOOLS:
        raise bad_request(f"{where} has {len(tools)} tools; at most {MAX_TOOLS} are allowed.", where)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        at = f"{where}[{i}]"
        if not isinstance(tool, dict):
            raise bad_request(f"{at} must be an object, got {kind_of(tool)}.", at)
        if tool.get("type") != "function":
            raise bad_request(f"{at}.type must be 'function' (the gateway passes function tools through and runs "
                              f"its own tools itself), got {shown(tool.get('type'))}.", f"{at}.type")
        if nested:
            function = tool.get("function")
            if not isinstance(function, dict):
                raise bad_request(f"{at}.function must be an object with a name.", f"{at}.function")
            fat = f"{at}.function"
        else:
            function, fat = tool, at
        name = check_schema_name(function.get("name"), f"{fat}.name")
        if name in seen:
            raise bad_request(f"{fat}.name '{name}' is offered twice.", f"{fat}.name")
        seen.add(name)
        entry: dict[str, Any] = {"name": name}
        description = function.get("description")
        if description is not None:
            if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
                raise bad_request(f"{fat}.description must be a string of at most {MAX_DESCRIPTION} characters.",
                                  f"{fat}.description")
            entry["description"] = description
        parameters = function.get("parameters")
        if parameters is not None:
            entry["parameters"] = check_schema(parameters, f"{fat}.parameters")
        strict = function.get("strict")
        if strict is not None:
            if not isinstance(strict, bool):
                raise bad_request(f"{fat}.strict must be a boolean.", f"{fat}.strict")
            entry["strict"] = strict
        out.append({"type": "function", "function": entry})
    return tuple(out)


def check_tool_choice(choice: Any, tools: tuple[dict[str, Any], ...], *, nested: bool,
                      gateway_tools: bool = False) -> Any:
    """``tool_choice`` in Chat Completions shape (None when absent); ``gateway_tools``: the gateway's own
    are offered too (``required`` may then be met by one of them)."""
    if choice is None:
        return None
    names = [t["function"]["name"] for t in tools]
    if isinstance(choice, str):
        if choice not in ("auto", "none", "required"):
            raise bad_request(f"tool_choice must be 'auto', 'none', 'required' or a function, got {shown(choice)}.",
                              "tool_choice")
        if choice == "required" and not tools and not gateway_tools:
            raise bad_request("tool_choice 'required' needs tools.", "tool_choice")
        return choice
    if not isinstance(choice, dict) or choice.get("type") != "function":
        raise bad_request("tool_choice must be 'auto', 'none', 'required' or {\"type\": \"function\", ...} naming "
                          "one of your tools.", "tool_choice")
    function = choice.get("function") if nested or "function" in choice else choice
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or name not in names:
        raise bad_request(f"tool_choice names the function {shown(name)}, which is not among the tools offered.",
                          "tool_choice")
    return {"type": "function", "function": {"name": name}}


def check_parallel(value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise bad_request("parallel_tool_calls must be a boolean.", "parallel_tool_calls")
    return value
