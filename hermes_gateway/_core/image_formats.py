"""The image formats the gateway reads — PNG, JPEG, GIF, WebP — through Pillow, and no other Pillow plugin, ever.

Pillow's ``Image.open`` tries every format it knows: it imports the plugin a
file name's extension points to, then its five common plugins
(``preinit``), then on a miss all of them (``init``). One of them, EPS,
runs Ghostscript (``gs``) when the image is decoded, so a PostScript file
sent as ``photo.png`` would run a stranger's program wherever ``gs`` is
installed; others parse formats no vision model takes. So every image the
gateway reads (a person's upload, an image a client sends the demo model)
is opened here: from an open file, never a name (no extension lookup),
trying only :data:`ALLOWED`, whose four plugins are imported by name; and
Pillow's ``preinit`` is marked done, so BMP and PPM are not imported
either. ``init`` then never runs in the gateway (nothing else of the
gateway calls ``Image.open``): no other plugin module is ever loaded.
"""

from __future__ import annotations

from typing import IO, Any

#: The formats the vision path takes (what every vision API accepts).
ALLOWED = ("PNG", "JPEG", "GIF", "WEBP")


def pillow() -> Any:
    """``PIL.Image`` with the four plugins of :data:`ALLOWED` registered, and Pillow's own preinit marked done.

    Raises ImportError when Pillow is not installed (a broken install: it is a dependency)."""
    from PIL import GifImagePlugin, Image, JpegImagePlugin, PngImagePlugin, WebPImagePlugin

    assert GifImagePlugin and JpegImagePlugin and PngImagePlugin and WebPImagePlugin  # registered by import
    if getattr(Image, "_initialized", 1) < 1:  # preinit would import BMP and PPM besides ours: it is done now
        Image._initialized = 1
    return Image


def open_image(fp: IO[bytes]) -> Any:
    """``Image.open`` of an open binary file, trying only :data:`ALLOWED` (the header is read, nothing decoded).

    Raises ``PIL.UnidentifiedImageError`` for anything else (an EPS, a PDF, a BMP ...)."""
    image = pillow()
    formats = [name for name in ALLOWED if name in image.OPEN]  # never one Pillow would have to init() for
    return image.open(fp, formats=formats)
