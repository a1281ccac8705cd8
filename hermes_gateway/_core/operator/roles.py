"""Who is an admin, and who may run which command.

Two roles: ``admin`` (listed in ``access.admins`` as ``platform:user_id``,
or ``user_id`` for every platform) and ``everyone``. A command says who may
run it (:attr:`Command.who`); ``commands.<name>.who`` in the config
overrides that. The check is made where commands run (the inbound
runtime), for every platform alike; ``/help`` lists only what the asking
person may run.
"""

from __future__ import annotations

from typing import Any

from ..messages.incoming import Incoming

ADMIN = "admin"
EVERYONE = "everyone"


def role_of(config: Any, incoming: Incoming) -> str:
    """``"admin"`` or ``"everyone"`` for the sender of ``incoming``."""
    access = config.operator.access
    return ADMIN if access.is_admin(incoming.platform, incoming.sender_id) else EVERYONE


def required_role(config: Any, command: Any) -> str:
    """Who may run ``command``: the config's ``commands.<name>.who``, else the command's own ``who``."""
    return config.operator.command_roles.get(command.name) or getattr(command, "who", EVERYONE)


def may_run(config: Any, incoming: Incoming, command: Any) -> bool:
    """Whether the sender of ``incoming`` may run ``command``."""
    return required_role(config, command) == EVERYONE or role_of(config, incoming) == ADMIN


def refusal(command: Any) -> str:
    """The one line a refused command gets (``/whoami`` shows the id an operator would list)."""
    return f"⛔ /{command.name} is for admins only. (/whoami shows your id.)"
