"""Memory of a 20 MB upload: it must never be held whole in memory more than once (issue 22).

Each case runs in a fresh child process (so ``ru_maxrss`` is its own) and
reports the Python heap's peak over the case (``tracemalloc``) and how far
the process's peak RSS rose above its RSS before the case (``VmHWM``, reset
through ``/proc/self/clear_refs``; Linux), against the upload's size:

* ``download``: a 20 MB file streamed by its plugin in 64 KB chunks into the
  media directory (:func:`hermes_gateway._core.content.downloads.download`);
* ``turn, document``: a whole turn on the reference platform with the demo
  model: a 20 MB text document is fetched, stored, read for its first
  ``media.document_max_chars`` characters, answered;
* ``turn, image``: the same with a 20 MB PNG (5000 x 5000 noise-free pixels
  compress well, so it is a 4,500 x 3,000 gradient with noise, about 19 MB) downscaled to
  1568 px: decoding it costs its pixels (width x height x 3), never the
  upload twice;
* ``baseline: bytes(20 MB)``: what holding the upload once costs.

Run: ``.venv/bin/python bench/bench_inbound_memory.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

MB = 1024 * 1024
SIZE = 20 * MB
CHUNK = 64 * 1024


def chunks_of(data_source, size: int):
    """A plugin's fetch: ``size`` bytes made chunk by chunk (never all at once)."""
    async def fetch():
        sent = 0
        while sent < size:
            piece = data_source(min(CHUNK, size - sent))
            sent += len(piece)
            yield piece
    return fetch


def text_piece(n: int) -> bytes:
    return (b"lorem ipsum dolor sit amet " * (n // 27 + 1))[:n]


async def case_download(directory: Path) -> None:
    from hermes_gateway import Attachment
    from hermes_gateway._core.content.downloads import Received, download

    got = await download(Attachment("document", chunks_of(text_piece, SIZE), size=SIZE, filename="big.txt"),
                         directory, SIZE)
    assert isinstance(got, Received) and got.size == SIZE


async def run_turn(directory: Path, attachment) -> list[str]:
    from hermes_gateway.testing import ReferencePlatform, TestGateway

    ref = ReferencePlatform()
    config = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}},
              "media": {"directory": str(directory)}}
    async with TestGateway(config, ref):
        await ref.say("1", "describe: this", attachments=[attachment])
    return ref.chat("1").screen


async def case_document(directory: Path) -> None:
    from hermes_gateway import Attachment

    screen = await run_turn(directory, Attachment("document", chunks_of(text_piece, SIZE), size=SIZE,
                                                  filename="big.txt"))
    assert "big.txt" in screen[0], screen


def big_png(path: Path) -> int:
    from PIL import Image

    width, height = 4500, 3000
    image = Image.radial_gradient("L").resize((width, height)).convert("RGB")
    noise = Image.effect_noise((width, height), 64).convert("RGB")
    Image.blend(image, noise, 0.5).save(path, "PNG", compress_level=1)
    return path.stat().st_size


async def case_image(directory: Path) -> None:
    from hermes_gateway import Attachment

    source = directory.parent / "source.png"
    size = source.stat().st_size
    handle = open(source, "rb")
    screen = await run_turn(directory, Attachment("image", chunks_of(handle.read, size), size=size,
                                                  filename="photo.png"))
    assert "JPEG image of 1568x1045" in screen[0], screen


async def case_baseline(directory: Path) -> None:
    data = b"\x01" * SIZE  # touched pages (bytes(n) would be zero pages the kernel never backs)
    assert len(data) == SIZE


CASES = {"download": case_download, "turn, document": case_document, "turn, image": case_image,
         "baseline: bytes(20 MB)": case_baseline}


def _status(field: str) -> int:
    """A size from /proc/self/status, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def child(name: str, directory: str) -> None:
    import hermes_gateway.testing  # noqa: F401  imports are not the upload's cost
    import hermes_gateway._core.agent  # noqa: F401
    import PIL.Image  # noqa: F401
    import pypdf  # noqa: F401

    Path("/proc/self/clear_refs").write_text("5")  # Linux: the peak RSS (VmHWM) starts again from now
    before = _status("VmRSS")
    tracemalloc.start()
    asyncio.run(CASES[name](Path(directory)))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = _status("VmHWM")
    print(json.dumps({"peak_heap": peak, "rss_growth": after - before}))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source.png"
        png_size = big_png(source)
        rows = []
        for name in CASES:
            media = Path(tmp) / "media"
            out = subprocess.run([sys.executable, __file__, "--child", name, str(media)], capture_output=True,
                                 text=True, check=True, env={**os.environ, "HERMES_HOME": tmp})
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append((name, figures["peak_heap"], figures["rss_growth"]))
        print(f"upload: 20 MB (the image case: a {png_size / MB:.1f} MB PNG of 4500x3000)\n")
        print("| case | Python heap peak | peak RSS growth |")
        print("| --- | ---: | ---: |")
        for name, heap, rss in rows:
            print(f"| {name} | {heap / MB:.1f} MB | {rss / MB:.1f} MB |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
