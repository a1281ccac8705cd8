"""Files people send, for the inbound file tests: real images (Pillow), real PDFs, attachments that count fetches."""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field
from typing import AsyncIterator

from hermes_gateway import Attachment, FetchError
from hermes_gateway.testing import samples


@dataclass
class Fetches:
    """Counts every fetch an attachment made (a dropped message must make none) and the bytes handed out."""

    calls: list[str] = field(default_factory=list)
    bytes_out: int = 0

    def attachment(self, kind: str, data: bytes, *, filename: str | None = None, mime: str | None = None,
                   size: int | None = None, declare_size: bool = True, chunk: int = 64 * 1024,
                   fail: Exception | None = None) -> Attachment:
        """An Attachment whose fetch streams ``data`` in ``chunk``-byte pieces (or raises ``fail`` midway)."""
        name = filename or kind

        def fetch() -> AsyncIterator[bytes]:
            self.calls.append(name)
            return self._stream(data, chunk, fail)

        declared = size if size is not None else (len(data) if declare_size else None)
        return Attachment(kind, fetch, mime=mime, size=declared, filename=filename)

    async def _stream(self, data: bytes, chunk: int, fail: Exception | None) -> AsyncIterator[bytes]:
        for i in range(0, len(data), chunk):
            if fail is not None and i >= len(data) // 2:
                raise fail
            self.bytes_out += len(data[i:i + chunk])
            yield data[i:i + chunk]


def image_bytes(width: int, height: int, fmt: str = "PNG", color: tuple[int, ...] = (200, 30, 30),
                mode: str = "RGB", exif_orientation: int | None = None) -> bytes:
    from PIL import Image

    image = Image.new(mode, (width, height), color)
    out = io.BytesIO()
    if exif_orientation is not None:
        exif = Image.Exif()
        exif[0x0112] = exif_orientation
        image.save(out, fmt, exif=exif)
    else:
        image.save(out, fmt)
    return out.getvalue()


@functools.lru_cache(maxsize=4)
def big_png(width: int, height: int) -> bytes:
    """An RGBA PNG of one colour written row by row with zlib: ~1.5 MB of file (8900x8900), built in a second
    without ever holding the pixels (it decodes to ~317 MB, ~700 MB while Pillow scales it)."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    row = b"\0" + bytes((30, 120, 200, 255)) * width
    packer = zlib.compressobj(1)
    data = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def slow_pdf(pages: int, operators: int = 100_000, text_on: dict[int, str] | None = None) -> bytes:
    """A PDF of a few KB whose pages each show ``operators`` single spaces (``( ) Tj``, deflated): pypdf
    spends ~4 s on a page of 100,000 of them and gets no text. ``text_on``: pages showing a line instead."""
    import zlib

    from hermes_gateway.testing.samples import pdf_file

    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    spaces = zlib.compress(b"BT /F1 12 Tf 72 720 Td " + b"( ) Tj " * operators + b"ET")
    for i in range(pages):
        line = (text_on or {}).get(i)
        content = spaces if line is None else zlib.compress(f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET".encode())
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 3 0 R >> >> >>".encode())
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream")
    return pdf_file(objects)


def image_size(data: bytes) -> tuple[str, int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return image.format, image.width, image.height


#: A real PDF, one Helvetica text line per page (the kit's sample, as every emulator sends it).
pdf_bytes = samples.pdf


def broken(message: str = "the platform said 404") -> FetchError:
    return FetchError(message)
