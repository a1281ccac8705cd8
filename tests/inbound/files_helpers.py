"""Files people send, for the inbound file tests: real images (Pillow), real PDFs, attachments that count fetches."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import AsyncIterator

from hermes_gateway import Attachment, FetchError


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


def image_size(data: bytes) -> tuple[str, int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return image.format, image.width, image.height


def pdf_bytes(*pages: str) -> bytes:
    """A real PDF (one Helvetica text line per page), written object by object with a correct xref table."""
    objects: list[bytes] = []
    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 3 0 R >> >> >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def broken(message: str = "the platform said 404") -> FetchError:
    return FetchError(message)
