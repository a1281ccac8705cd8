"""Small real files a person sends in an emulator: a PNG photo, a PDF, an OGG/Opus voice note.

Every platform's emulator (and the core's file tests) needs the same few
sample files, so they live here once. Made with the standard library only
(importing this module costs nothing an emulator does not already load):
each is a valid file of its format (a PNG Pillow opens, a PDF whose pages'
text a PDF reader extracts, an Ogg Opus stream FFmpeg decodes), small enough
to keep in a test, and different for different arguments, so a test that
compares bytes compares the right file. (For a voice note with audible content, a tone, see
:func:`hermes_gateway.testing.voice_note`.)
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["SILENT_OPUS_FRAME", "ogg_crc", "pdf", "pdf_file", "png", "voice_ogg"]


def png(width: int = 64, height: int = 48, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A ``width`` x ``height`` PNG of one colour (8-bit RGB, one IDAT chunk)."""
    row = b"\x00" + bytes(rgb) * width                      # filter type 0 (None) and the pixels
    raw = zlib.compress(row * height, 9)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def pdf(*pages: str) -> bytes:
    """A PDF with one Helvetica text line per page (one page, "Hello from the PDF", when none is given),
    written object by object with a correct cross-reference table."""
    pages = pages or ("Hello from the PDF",)
    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        content = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 3 0 R >> >> >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    return pdf_file(objects)


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF file of ``objects`` (numbered from 1, the first the catalog), with its cross-reference table: what
    :func:`pdf` writes, for tests that build pages of their own (a hostile PDF)."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


#: A 20 ms Opus frame of silence (TOC 0xF8: CELT fullband 20 ms, mono, one frame): what voice apps send between words.
SILENT_OPUS_FRAME = b"\xf8\xff\xfe"
_PRE_SKIP = 312              # what libopus encoders put in OpusHead
_SAMPLES_PER_FRAME = 960     # 20 ms at Opus's 48 kHz
_FRAMES_PER_PAGE = 50        # one second of audio per Ogg page


def voice_ogg(seconds: float = 1.0, *, serial: int = 0x48524D53) -> bytes:
    """An Ogg Opus voice note of ``seconds`` of silence (mono, 48 kHz), as Telegram, WhatsApp, Discord send them.

    An Ogg stream (RFC 3533) holding an Opus stream (RFC 7845): a page with
    ``OpusHead``, one with ``OpusTags``, then the audio (silent 20 ms frames,
    one second a page), the last page ending the stream. Any decoder plays
    it as that many seconds of silence (less the pre-skip); ``serial`` tells
    two notes apart.
    """
    frames = max(1, round(seconds * 50))
    head = b"OpusHead" + struct.pack("<BBHIhB", 1, 1, _PRE_SKIP, 48000, 0, 0)
    vendor = b"hermes-emulator"
    tags = b"OpusTags" + struct.pack("<I", len(vendor)) + vendor + struct.pack("<I", 0)
    pages = [_ogg_page([head], 0x02, 0, serial, 0), _ogg_page([tags], 0x00, 0, serial, 1)]
    done = 0
    while done < frames:
        count = min(_FRAMES_PER_PAGE, frames - done)
        done += count
        pages.append(_ogg_page([SILENT_OPUS_FRAME] * count, 0x04 if done == frames else 0x00,
                               _PRE_SKIP + done * _SAMPLES_PER_FRAME, serial, len(pages)))
    return b"".join(pages)


def _ogg_page(packets: list[bytes], flags: int, granule: int, serial: int, sequence: int) -> bytes:
    """One Ogg page holding whole ``packets`` (lacing values: 255s then the remainder, per packet)."""
    lacing = bytearray()
    for packet in packets:
        lacing += bytes([255] * (len(packet) // 255) + [len(packet) % 255])
    assert len(lacing) <= 255, "too many packets for one Ogg page"
    header = struct.pack("<4sBBqIIIB", b"OggS", 0, flags, granule, serial, sequence, 0, len(lacing))
    page = bytearray(header + bytes(lacing) + b"".join(packets))
    page[22:26] = struct.pack("<I", ogg_crc(bytes(page)))
    return bytes(page)


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
        table.append(crc & 0xFFFFFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def ogg_crc(data: bytes) -> int:
    """Ogg's CRC-32 of ``data``: polynomial 0x04C11DB7, not reflected, initial value 0, no final xor (not zlib's)."""
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _CRC_TABLE[((crc >> 24) & 0xFF) ^ byte]
    return crc
