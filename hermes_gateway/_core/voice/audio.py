"""Audio conversion with PyAV (its wheels bundle FFmpeg): whatever a platform sends in, what an engine or a platform needs out.

Telegram and WhatsApp voice notes are OGG/Opus; Discord and Slack send
whatever the person uploaded (m4a, mp3, wav...). Engines want plain PCM
(16 kHz mono 16-bit for pocketsphinx) or accept the file as it is (an
OpenAI-compatible endpoint); voice replies must be OGG/Opus for Telegram's
``sendVoice`` and WhatsApp's audio message. Every function here is blocking
(FFmpeg work): callers run them in a thread.
"""

from __future__ import annotations

import io
from pathlib import Path

from ..errors import HermesError

#: Opus's own sample rate; an OGG/Opus voice note is encoded at it.
OPUS_RATE = 48000
#: Longest audio decoded for transcription (a voice note is seconds to minutes; a 3-hour file is not one).
MAX_SECONDS = 20 * 60


class AudioError(HermesError):
    """The file is not audio FFmpeg can read (corrupt, not audio, or a format it does not know)."""


def decode_pcm(source: Path | bytes, *, rate: int = 16000, max_seconds: float = MAX_SECONDS) -> bytes:
    """The audio as 16-bit little-endian mono PCM at ``rate`` Hz (what offline engines take).

    Decoding stops at ``max_seconds`` (the rest is dropped), so a long file
    never grows the result beyond ``rate * 2 * max_seconds`` bytes.
    """
    import av

    out = bytearray()
    limit = int(rate * 2 * max_seconds)
    try:
        with av.open(_opened(source), mode="r") as container:
            streams = container.streams.audio
            if not streams:
                raise AudioError("the file has no audio stream")
            resampler = av.AudioResampler(format="s16", layout="mono", rate=rate)
            for frame in container.decode(streams[0]):
                for piece in resampler.resample(frame):
                    out += bytes(piece.planes[0])[:piece.samples * 2]
                if len(out) >= limit:
                    break
            for piece in resampler.resample(None):
                out += bytes(piece.planes[0])[:piece.samples * 2]
    except AudioError:
        raise
    except Exception as exc:  # av raises its own error types (InvalidDataError, ...) for broken input
        raise AudioError(f"not audio that can be decoded ({type(exc).__name__})") from None
    if not out:
        raise AudioError("the audio is empty")
    return bytes(out[:limit])


def encode_ogg_opus(pcm: bytes, rate: int, *, bitrate: int = 32000) -> bytes:
    """16-bit mono PCM at ``rate`` Hz as an OGG/Opus voice note (48 kHz mono, as Telegram's ``sendVoice`` wants)."""
    import av

    pcm = pcm[:len(pcm) // 2 * 2]
    if not pcm:
        raise AudioError("no audio to encode")
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="ogg") as container:
        stream = container.add_stream("libopus", rate=OPUS_RATE)
        stream.bit_rate = bitrate
        stream.layout = "mono"
        resampler = av.AudioResampler(format="s16", layout="mono", rate=OPUS_RATE)
        step = rate * 2  # one second per frame: memory stays small for long replies
        pieces = []
        for start in range(0, len(pcm), step):
            chunk = pcm[start:start + step]
            frame = av.AudioFrame(format="s16", layout="mono", samples=len(chunk) // 2)
            frame.planes[0].update(chunk)
            frame.sample_rate = rate
            frame.pts = start // 2
            pieces += resampler.resample(frame)
        pieces += resampler.resample(None)
        for piece in pieces:
            for packet in stream.encode(piece):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return buffer.getvalue()


def to_ogg_opus(data: bytes) -> bytes:
    """Any audio file's bytes as an OGG/Opus voice note; bytes that already are one come back unchanged."""
    if is_ogg_opus(data):
        return data
    return encode_ogg_opus(decode_pcm(data, rate=OPUS_RATE), OPUS_RATE)


def is_ogg_opus(data: bytes) -> bool:
    """Whether ``data`` is an OGG container whose first stream is Opus (a voice note as platforms take it)."""
    return data[:4] == b"OggS" and b"OpusHead" in data[:128]


def probe_seconds(source: Path | bytes, *, stop_after: float = MAX_SECONDS) -> float:
    """Seconds of audio in the file, decoded (a header may lie or say nothing) but nothing kept.

    Counting stops a little past ``stop_after``: the caller only needs to
    know the file is longer than that. Raises :class:`AudioError` for a file
    that is not decodable audio, so this is also the corrupt-file check.
    """
    import av

    seconds = 0.0
    try:
        with av.open(_opened(source), mode="r") as container:
            streams = container.streams.audio
            if not streams:
                raise AudioError("the file has no audio stream")
            for frame in container.decode(streams[0]):
                seconds += frame.samples / float(frame.sample_rate or 1)
                if seconds > stop_after:
                    break
    except AudioError:
        raise
    except Exception as exc:  # av's own error types for broken input
        raise AudioError(f"not audio that can be decoded ({type(exc).__name__})") from None
    if seconds <= 0:
        raise AudioError("the audio is empty")
    return seconds


def _opened(source: Path | bytes) -> str | io.BytesIO:
    return io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else str(source)
