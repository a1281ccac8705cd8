"""An image a person sent, made ready for a vision model: downscaled, encoded, a data URL.

Vision models look at a bounded number of pixels anyway (about 1568 px on
the longest side for the common ones), and a phone photo is 4000 px and
several MB: sending it whole costs upload time and tokens for nothing. So
the image is turned upright (its EXIF orientation), scaled down to
``media.image_max_side`` and re-encoded (JPEG, or PNG when it has
transparency); one that already fits, in a format every vision API takes,
is sent as it came. The part is the Chat Completions shape
(``{"type": "image_url", "image_url": {"url": "data:..."}}``), the same the
API server passes on; the Responses client turns it into ``input_image``.

Only PNG, JPEG, GIF and WebP are opened (:mod:`..image_formats`): any
other file — an EPS whose decoding would run Ghostscript, a PDF, a BMP —
is "not an image I can read", whatever its name says. The pixels are
counted from the header before anything is decoded: over
``media.max_image_pixels`` (default :data:`MAX_PIXELS`, 50 MP: a 48 MP
phone photo passes; an 8900x8900 RGBA PNG of 300 KB would decode to
~700 MB) the image is refused unread. Decoding is blocking and costs up to
a few hundred MB, so :func:`prepare_image_bounded` runs it in a thread of
a process-wide pool of ``media.max_concurrent_decodes`` threads (default:
the number of cores): six large images sent at once wait their turn
instead of holding six decodes in memory. A file that is not an image, is
truncated or too large raises :class:`ImageError` with a reason for the
person.
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HermesError
from ..image_formats import open_image, pillow

#: Images with more pixels than this are refused unread (``media.max_image_pixels``; a 300 KB PNG can otherwise
#: decode to gigabytes). 50 MP: a 48 MP phone photo passes.
MAX_PIXELS = 50_000_000
#: Formats every vision API accepts as they are.
PASS_THROUGH = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
JPEG_QUALITY = 85


class ImageError(HermesError):
    """The file cannot be shown to the model; the message is the reason the person is told."""


@dataclass(frozen=True)
class PreparedImage:
    """What the model is sent: ``data`` in ``mime``, ``width`` x ``height`` after downscaling."""

    data: bytes
    mime: str
    width: int
    height: int
    source_format: str

    @property
    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def part(self) -> dict[str, Any]:
        """The Chat Completions content part."""
        return {"type": "image_url", "image_url": {"url": self.data_url, "detail": "auto"}}

    @property
    def summary(self) -> str:
        """``JPEG 1568x1176`` (as sent)."""
        return f"{self.mime.split('/', 1)[1].upper()} {self.width}x{self.height}"


def default_decodes() -> int:
    """``media.max_concurrent_decodes`` unset: one decode per core the process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_pool_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None


def _decoders(workers: int) -> ThreadPoolExecutor:
    """The process's decoding threads: ``workers`` of them, shared by every chat and event loop."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != workers:  # a new size (another config in the process): a new pool
            old = _pool
            _pool = (workers, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hermes-image"))
            if old is not None:
                old[1].shutdown(wait=False)  # its running decodes finish; nothing new goes there
        return _pool[1]


async def prepare_image_bounded(path: str | Path, max_side: int, *, max_pixels: int = MAX_PIXELS,
                                workers: int | None = None) -> PreparedImage:
    """:func:`prepare_image` off the event loop, at most ``workers`` decodes at once in the process
    (the others wait, holding no pixels). A cancelled wait drops the decode if it has not started."""
    pool = _decoders(workers or default_decodes())
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(pool, prepare_image, path, max_side, max_pixels)


def prepare_image(path: str | Path, max_side: int, max_pixels: int = MAX_PIXELS) -> PreparedImage:
    """Read, orient and downscale the image at ``path`` (blocking)."""
    try:
        pillow()
        from PIL import Image, ImageOps, UnidentifiedImageError
    except ImportError as exc:  # a dependency of the gateway; only a broken install lacks it
        raise ImageError("images cannot be read here (Pillow is not installed)") from exc
    try:
        with open(path, "rb") as file, open_image(file) as image:
            if image.width * image.height > max_pixels:
                raise ImageError(f"the image is too large to look at ({image.width}x{image.height} pixels; "
                                 f"the limit is {max_pixels / 1e6:g} megapixels)")
            source = image.format or "image"
            fits = max(image.width, image.height) <= max_side
            turned = _orientation(image) not in (0, 1)
            if fits and not turned and source in PASS_THROUGH and not getattr(image, "is_animated", False):
                image.load()  # decoded whole once: a truncated file is refused here, not by the model
                return PreparedImage(Path(path).read_bytes(), PASS_THROUGH[source], image.width, image.height,
                                     source)
            if not fits and source == "JPEG":
                image.draft(None, (max_side, max_side))  # decode at a fraction of the size: less memory
            image.load()
            frame: Image.Image = image
            if not fits:  # scaled in place first (the decoded pixels are held once), then turned
                frame.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
            if turned:
                frame = ImageOps.exif_transpose(frame)
            return _encode(frame, source)
    except ImageError:
        raise
    except Image.DecompressionBombError as exc:
        raise ImageError("the image is too large to look at") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ImageError("not an image I can read (corrupt, or not PNG, JPEG, GIF or WebP)") from exc


def _orientation(image: Any) -> int:
    try:
        return int(image.getexif().get(0x0112, 1))
    except Exception:
        return 1


def _encode(image: Any, source: str) -> PreparedImage:
    out = io.BytesIO()
    has_alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    if has_alpha:
        image = image.convert("RGBA")
        image.save(out, "PNG", optimize=True)
        mime = "image/png"
    else:
        if image.mode != "RGB":
            image = image.convert("RGB")
        image.save(out, "JPEG", quality=JPEG_QUALITY)
        mime = "image/jpeg"
    return PreparedImage(out.getvalue(), mime, image.width, image.height, source)
