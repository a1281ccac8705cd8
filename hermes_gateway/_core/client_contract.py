"""A platform client's stream methods checked against the stream hook specs, by pluggy, when it is built.

The stream methods of a client (``on_delta``, ``on_stream_end`` ...) are the
stream hooks of :mod:`.hookspecs` written as methods: one contract for every
platform. pluggy checks a hook's argument names against its spec when a
plugin registers; a client is built later (one per account, per run), so
this registers it with a throwaway plugin manager that takes its stream
methods as hook implementations: a misspelt argument (``msg`` for
``message``) fails the start in one line, as it would in a hook, instead of
failing the first reply.
"""

from __future__ import annotations

from typing import Any

import pluggy

from . import hookspecs
from .errors import StartError

#: The hooks a client may implement as methods (the stream hook specs).
STREAM_METHODS = ("supports_edit", "on_stream_start", "on_delta", "on_stream_end", "on_media")


class _ClientMethods(pluggy.PluginManager):
    """Takes a client's stream methods (by name, no marker) as hook implementations."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if name in STREAM_METHODS and callable(getattr(plugin, name, None)):
            return {}
        return None


def check_client_methods(client: Any, *, platform: str, plugin: str) -> None:
    """Refuse a client whose stream methods take arguments the specs do not name (StartError, one line)."""
    manager = _ClientMethods(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    try:
        manager.register(client, name=f"{plugin}:{platform}")
    except pluggy.PluginValidationError as exc:
        detail = " ".join(str(exc).split())
        raise StartError(f"platform {platform} (plugin {plugin}): its client's stream method does not match the "
                         f"hook spec: {detail}") from None
    except (AssertionError, ValueError):
        return  # a method pluggy cannot inspect (a callable object set on the instance): checked when called
