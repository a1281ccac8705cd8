"""Reminders as a built-in plugin: the ``remind`` tool, ``/reminders`` and ``/cancel``, with ``tools.reminders``.

Registered like any plugin's tools and commands (``register_tools``,
``register_commands``), reading the config those hooks are handed: with
``tools.reminders`` off (the default) it registers nothing. What the tool
and the commands do, and how a reminder is kept and fired, is
:mod:`..outbound.reminders` and the scheduler's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..hookspecs import hookimpl
from ..outbound.reminders import reminder_commands, reminder_tools

if TYPE_CHECKING:
    from ..config import Config
    from ..tools import Tool


@hookimpl
def register_tools(register: Callable[["Tool"], None], config: "Config | None") -> None:
    if config is not None:
        for tool in reminder_tools(config.outbound.reminders):
            register(tool)


@hookimpl
def register_commands(register: Callable[[Any], None], config: "Config | None") -> None:
    if config is not None:
        for command in reminder_commands(config.outbound.reminders):
            register(command)
