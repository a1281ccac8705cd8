"""A kit for testing the gateway and platform plugins without a network.

* :class:`ReferencePlatform` — an in-memory platform with a screen, a
  strict rate budget, length limits, injectable :class:`Fault` s (per chat,
  and ``fail_bot_next`` for a bot-wide 429), an ``append_only`` mode, and
  a call log naming the hook behind each call.
* :func:`run_virtual` — run a coroutine on an event loop whose clock jumps,
  so minutes of pacing take milliseconds.
* :func:`reassemble` — join a screen's messages back into the reply.
* :func:`serve_locally` — serve an emulator's aiohttp app on 127.0.0.1;
  :func:`eventually` — wait for a screen to show what it should.
* :mod:`.conformance` — the checks every platform plugin should pass,
  run against your plugin and your emulator of its platform.
"""

from .._core.delivery.split import reassemble
from .local import eventually, serve_locally
from .reference import Call, Fault, ReferenceChat, ReferencePlatform, ScreenMessage
from .virtual_time import VirtualTimeLoop, run_virtual

__all__ = ["Call", "Fault", "ReferenceChat", "ReferencePlatform", "ScreenMessage", "VirtualTimeLoop",
           "eventually", "reassemble", "run_virtual", "serve_locally"]
