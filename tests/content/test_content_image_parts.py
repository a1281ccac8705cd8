"""Images for a vision model: downscaled to media.image_max_side, upright, a data URL; bad files a reason."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from hermes_gateway._core.content import image_parts
from hermes_gateway._core.content.image_parts import ImageError, prepare_image

from files_helpers import big_png, image_bytes, image_size


def write(tmp_path: Path, data: bytes, name: str = "img") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_a_large_photo_is_scaled_to_the_longest_side_keeping_its_shape(tmp_path: Path) -> None:
    image = prepare_image(write(tmp_path, image_bytes(4000, 3000, "JPEG")), 1568)
    assert (image.width, image.height) == (1568, 1176)
    assert image_size(image.data) == ("JPEG", 1568, 1176) and image.mime == "image/jpeg"
    part = image.part()
    assert part["type"] == "image_url"
    head, _, payload = part["image_url"]["url"].partition(",")
    assert head == "data:image/jpeg;base64" and base64.b64decode(payload) == image.data


def test_a_portrait_png_is_scaled_by_its_height(tmp_path: Path) -> None:
    image = prepare_image(write(tmp_path, image_bytes(500, 2000)), 1000)
    assert (image.width, image.height) == (250, 1000)


def test_transparency_survives_as_png(tmp_path: Path) -> None:
    image = prepare_image(write(tmp_path, image_bytes(3000, 100, mode="RGBA", color=(1, 2, 3, 0))), 300)
    assert image.mime == "image/png" and image_size(image.data) == ("PNG", 300, 10)


def test_an_image_that_fits_goes_as_it_came(tmp_path: Path) -> None:
    data = image_bytes(640, 480, "PNG")
    image = prepare_image(write(tmp_path, data), 1568)
    assert image.data == data and image.mime == "image/png" and image.summary == "PNG 640x480"


@pytest.mark.parametrize("fmt", ["BMP", "TIFF", "PPM", "ICO"])
def test_an_image_in_a_format_the_vision_path_does_not_use_is_refused_unread(tmp_path: Path, fmt: str) -> None:
    """Only PNG, JPEG, GIF and WebP are opened: Pillow's other plugins (EPS runs Ghostscript) are never tried."""
    with pytest.raises(ImageError, match=r"not an image I can read \(corrupt, or not PNG, JPEG, GIF or WebP\)"):
        prepare_image(write(tmp_path, image_bytes(64, 32, fmt), name="photo.png"), 1568)


@pytest.mark.parametrize("fmt", ["GIF", "WEBP"])
def test_gif_and_webp_are_read(tmp_path: Path, fmt: str) -> None:
    image = prepare_image(write(tmp_path, image_bytes(3000, 30, fmt), name="x.bin"), 300)
    assert image.source_format == fmt and (image.width, image.height) == (300, 3)


def test_a_sideways_phone_photo_is_turned_upright(tmp_path: Path) -> None:
    image = prepare_image(write(tmp_path, image_bytes(400, 100, "JPEG", exif_orientation=6)), 1568)
    assert (image.width, image.height) == (100, 400)


@pytest.mark.parametrize("data", [b"not an image at all", image_bytes(300, 300, "PNG")[:120], b""])
def test_a_corrupt_file_is_a_reason_not_a_crash(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(ImageError, match="not an image I can read"):
        prepare_image(write(tmp_path, data), 1568)


def test_a_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match=r"too large to look at \(100x100 pixels; the limit is 0.001 megapixels\)"):
        prepare_image(write(tmp_path, image_bytes(100, 100)), 1568, max_pixels=1000)


def test_the_default_pixel_cap_refuses_an_8900_square_png_from_its_header(tmp_path: Path) -> None:
    """300 KB of PNG that would decode to ~700 MB: refused from the header (a hand-made PNG: never decoded here)."""
    assert image_parts.MAX_PIXELS == 50_000_000
    with pytest.raises(ImageError, match="8900x8900 pixels; the limit is 50 megapixels"):
        prepare_image(write(tmp_path, big_png(8900, 8900)), 1568)


def test_a_large_sideways_photo_is_scaled_and_turned(tmp_path: Path) -> None:
    image = prepare_image(write(tmp_path, image_bytes(4000, 1000, "JPEG", exif_orientation=6)), 1568)
    assert (image.width, image.height) == (392, 1568) and image_size(image.data) == ("JPEG", 392, 1568)
