"""What the demo model "sees" in an image: its format and size, read with Pillow.

Enough for vision requests to be testable offline: a client sends an
``image_url`` / ``input_image`` part and the reply says what arrived. A
``data:`` URL is decoded; an http(s) URL is not fetched (the demo model
runs offline), only named.
"""

from __future__ import annotations

import base64
import binascii
import io

#: Pixels beyond which Pillow's decompression-bomb guard would warn; the demo reads headers only anyway.
_MAX_DATA_URL = 20 * 1024 * 1024


def describe_image(url: str) -> str:
    """One sentence about the image at ``url``."""
    if not url.startswith("data:"):
        shown = url if len(url) <= 80 else url[:77] + "..."
        return f"an image at {shown} (the demo model does not fetch links)"
    head, _, payload = url.partition(",")
    if ";base64" not in head or len(payload) > _MAX_DATA_URL:
        return "an image I could not read (a data: URL must be base64)"
    try:
        data = base64.b64decode(payload, validate=False)
    except (binascii.Error, ValueError):
        return "an image I could not read (bad base64)"
    try:
        from PIL import UnidentifiedImageError

        from ..image_formats import open_image
    except ImportError:  # Pillow is optional for the gateway; the demo then only counts bytes
        return f"an image of {len(data)} bytes"
    try:
        with open_image(io.BytesIO(data)) as image:  # PNG, JPEG, GIF, WebP only: no other plugin is loaded
            return f"a {image.format} image of {image.width}x{image.height} pixels"
    except (UnidentifiedImageError, OSError, ValueError):
        return f"{len(data)} bytes that are not an image I know"
