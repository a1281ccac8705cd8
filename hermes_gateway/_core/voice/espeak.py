"""The built-in offline speech engine: eSpeak NG as the ``espeakng-loader`` wheel ships it (library and voices inside).

Used for voice replies when ``voice.speech`` names no endpoint, so
``voice.reply`` works on a fresh machine with nothing but ``pip install``.
It sounds robotic but is intelligible, fast (a reply in well under a
second) and runs everywhere the wheel installs. The library is called
through ``ctypes`` in synchronous mode: it keeps global state, so one lock
serialises all synthesis, which runs in a worker thread (never on the
event loop).
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Any

from ..errors import HermesError

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_RATE = 1  # espeakRATE: words per minute

_lock = threading.Lock()
_engine: "_Engine | None" = None


class SpeechUnavailable(HermesError):
    """The bundled engine cannot run here (the wheel is missing or its library does not load)."""


class _Engine:
    """One loaded libespeak-ng: its sample rate and the samples its callback collects."""

    CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)

    def __init__(self) -> None:
        try:
            import espeakng_loader
            self.lib = ctypes.CDLL(espeakng_loader.get_library_path())
            data = Path(espeakng_loader.get_data_path())
        except (ImportError, OSError, RuntimeError) as exc:
            raise SpeechUnavailable(f"the espeakng-loader package is not usable: {exc}") from None
        self.lib.espeak_Initialize.restype = ctypes.c_int
        self.lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        home = _short_home(data)
        self.rate = self.lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, str(home).encode(), 0)
        if self.rate <= 0:
            raise SpeechUnavailable("eSpeak NG did not start (its data directory is missing?)")
        self.samples = bytearray()
        self._callback = self.CALLBACK(self._collect)  # kept referenced: the library calls it later
        self.lib.espeak_SetSynthCallback(self._callback)
        self.lib.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
                                          ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
        self.lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self.lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]

    def _collect(self, wav: Any, count: int, events: Any) -> int:
        if count > 0 and wav:
            self.samples += ctypes.string_at(wav, count * 2)
        return 0  # go on

    def speak(self, text: str, voice: str, words_per_minute: int) -> bytes:
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise SpeechUnavailable(f"eSpeak NG has no voice {voice!r}")
        self.lib.espeak_SetParameter(_RATE, words_per_minute, 0)
        self.samples = bytearray()
        data = text.encode("utf-8") + b"\0"
        if self.lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None) != 0:
            raise SpeechUnavailable("eSpeak NG could not speak the text")
        self.lib.espeak_Synchronize()
        return bytes(self.samples)


#: eSpeak NG copies its data directory's path into a fixed-size buffer and crashes the process on a longer one
#: (a virtualenv in a deep folder); beyond this many bytes the data is reached through a short link instead.
_MAX_HOME_BYTES = 100


def _short_home(data: Path) -> Path:
    """A folder holding ``espeak-ng-data`` whose path eSpeak NG can take: the package's own when short enough,
    else a link to it in a fresh temporary folder (kept for the life of the process)."""
    if len(str(data.parent).encode()) <= _MAX_HOME_BYTES:
        return data.parent
    import atexit
    import shutil
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="hermes-espeak-"))
    (home / data.name).symlink_to(data, target_is_directory=True)
    atexit.register(shutil.rmtree, home, True)  # the link only: the package's data stays
    return home


def synthesize(text: str, voice: str = "en-us", words_per_minute: int = 165) -> tuple[bytes, int]:
    """``text`` spoken: (16-bit mono PCM, sample rate). Blocking: call it in a thread."""
    global _engine
    with _lock:
        if _engine is None:
            _engine = _Engine()
        return _engine.speak(text, voice, words_per_minute), _engine.rate


def available() -> bool:
    """Whether the bundled engine can be loaded (the package is installed)."""
    try:
        import espeakng_loader  # noqa: F401
    except ImportError:
        return False
    return True
