"""Small real files for the emulator's people to send: a voice note as Telegram records it (OGG/Opus).

Built by hand, with no codec library: an Ogg stream (RFC 3533) holding an
Opus stream (RFC 7845) — the ``OpusHead`` and ``OpusTags`` headers, then one
20 ms packet of silence per frame (``F8 FF FE``: the silence frame
discord.py sends). Any decoder (FFmpeg, PyAV, libopus) plays it as that many
seconds of silence, so a core that converts or measures voice notes gets a
file it can really decode.
"""

from __future__ import annotations

import struct

#: One 20 ms Opus frame of silence (TOC 0xF8: CELT fullband 20 ms, mono, one frame).
SILENT_FRAME = b"\xf8\xff\xfe"
SAMPLES_PER_FRAME = 960     # 20 ms at Opus's 48 kHz
PRE_SKIP = 312              # what libopus encoders put in OpusHead
FRAMES_PER_PAGE = 50


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
        table.append(crc & 0xFFFFFFFF)
    return table


_CRC = _crc_table()


def _ogg_crc(data: bytes) -> int:
    """Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, no final xor."""
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _CRC[((crc >> 24) & 0xFF) ^ byte]
    return crc


def _page(packets: list[bytes], *, serial: int, sequence: int, granule: int, flags: int) -> bytes:
    lacing = bytearray()
    for packet in packets:
        lacing.extend([255] * (len(packet) // 255) + [len(packet) % 255])
    header = struct.pack("<4sBBqIIIB", b"OggS", 0, flags, granule, serial, sequence, 0, len(lacing))
    page = header + bytes(lacing) + b"".join(packets)
    return page[:22] + struct.pack("<I", _ogg_crc(page)) + page[26:]


def ogg_opus_silence(seconds: float = 0.5, *, serial: int = 0x48524D53) -> bytes:
    """An OGG/Opus voice note of ``seconds`` of silence (mono, 48 kHz), a few hundred bytes."""
    head = struct.pack("<8sBBHIhB", b"OpusHead", 1, 1, PRE_SKIP, 48000, 0, 0)
    vendor = b"hermes-emulator"
    tags = b"OpusTags" + struct.pack("<I", len(vendor)) + vendor + struct.pack("<I", 0)
    frames = max(1, round(seconds * 1000 / 20))
    pages = [_page([head], serial=serial, sequence=0, granule=0, flags=0x02),
             _page([tags], serial=serial, sequence=1, granule=0, flags=0)]
    done = 0
    while done < frames:
        count = min(FRAMES_PER_PAGE, frames - done)
        done += count
        pages.append(_page([SILENT_FRAME] * count, serial=serial, sequence=len(pages),
                           granule=done * SAMPLES_PER_FRAME,
                           flags=0x04 if done == frames else 0))
    return b"".join(pages)
