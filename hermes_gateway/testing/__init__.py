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
* :class:`PlatformRunner` — build and start one platform plugin's client as
  the gateway does (settings parsed, a context, routes served on 127.0.0.1),
  and stream replies into it through the real delivery core;
  :class:`TestGateway` — the whole gateway from a config mapping, with only
  the plugins you give it.
* :class:`SentMedia` — an attachment an emulator received (what tests compare).
* :class:`AudioApiServer` — OpenAI's audio API (transcriptions, speech) on
  127.0.0.1, recording each upload (:class:`AudioUpload`); :func:`voice_note`
  — an OGG/Opus voice note to send it.
* :mod:`.samples` — small real files every emulator's people send: a PNG
  (``samples.png``), a one-page PDF (``samples.pdf``), an OGG/Opus voice
  note of silence (``samples.voice_ogg``); standard library only.
* :func:`serve_file` — an emulator's file download answered as a file host
  does (in chunks, zeros past the data up to a declared size, chunked or
  stalled on request), reporting the bytes that went out for its log.
* :mod:`.conformance` — the checks every platform plugin should pass,
  run against your plugin and your emulator of its platform.
"""

from .._core.builtin.reference_platform import Call, Fault, ReferenceChat, ReferencePlatform, ScreenMessage, SentMedia
from .._core.delivery.split import reassemble
from .audio import AudioApiServer, AudioUpload, voice_note
from . import samples
from .files import serve_file
from .local import eventually, serve_locally
from .platforms import PlatformRunner, TestGateway, plugins_for, with_limits
from .store import stored_history
from .tools import builtin_tool
from .virtual_time import VirtualTimeLoop, run_virtual

__all__ = ["AudioApiServer", "AudioUpload", "Call", "Fault", "PlatformRunner", "ReferenceChat", "ReferencePlatform",
           "ScreenMessage", "SentMedia", "TestGateway", "VirtualTimeLoop", "builtin_tool", "eventually",
           "plugins_for", "reassemble", "run_virtual", "samples", "serve_file", "serve_locally", "stored_history", "voice_note", "with_limits"]
