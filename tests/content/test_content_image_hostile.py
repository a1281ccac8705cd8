"""Hostile images through the real path (the reference platform, the demo model), each in a fresh interpreter.

A fresh process, because what is checked is process-wide: which Pillow
plugins were ever imported, whether a ``gs`` placed first on PATH ran
(Pillow caches whether Ghostscript exists), and the process's peak
resident memory (VmHWM).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from files_helpers import image_bytes, pdf_bytes

HELPERS = Path(__file__).resolve().parents[1] / "inbound"

#: Every name Pillow (and anyone else) looks Ghostscript up by.
GHOSTSCRIPT_NAMES = ("gs", "gsc", "gswin32c", "gswin64c", "ghostscript")

EPS = (b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 64 64\n%%EndComments\n"
       b"newpath 0 0 moveto 64 64 lineto stroke\nshowpage\n%%EOF\n")
POSTSCRIPT = b"%!PS-Adobe-3.0\n%%BoundingBox: 0 0 10 10\n(hello) print\nshowpage\n"

SCRIPT = textwrap.dedent("""
    import asyncio, json, sys
    sys.path.insert(0, sys.argv[1])
    from files_helpers import Fetches, big_png
    from hermes_gateway.testing import ReferencePlatform, TestGateway

    args = json.loads(sys.argv[2])

    def peak_kb():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])

    async def main():
        ref, fetches = ReferencePlatform(), Fetches()
        config = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}},
                  "media": {"directory": args["media"], **args.get("media_config", {})}}
        out = {}
        async with TestGateway(config, ref):
            if args["case"] == "postscript":
                # the bytes are made by the test, not here: this process must never touch Pillow but through
                # the gateway (the kit's image_bytes would import Pillow's BMP and PPM plugins itself)
                sent = {name: bytes.fromhex(data) for name, data in args["files"].items()}
                files = [fetches.attachment("image", sent["eps"], filename="photo.png", mime="image/png"),
                         fetches.attachment("image", sent["ps"], filename="scan.jpg"),
                         fetches.attachment("image", sent["pdf"], filename="pic.png"),
                         fetches.attachment("document", sent["eps"], filename="figure.eps", mime="image/x-eps"),
                         fetches.attachment("image", sent["png"], filename="chart.png")]
                await ref.say("1", "what are these?", attachments=files)
                out["screens"] = {"1": ref.chat("1").screen}
            else:
                data = big_png(8900, 8900)
                before = peak_kb()
                chats = [str(n) for n in range(args["count"])]
                await asyncio.gather(*(ref.say(chat, "look", attachments=[
                    fetches.attachment("image", data, filename=f"big{chat}.png")]) for chat in chats))
                out["added_mb"] = (peak_kb() - before) / 1024
                out["screens"] = {chat: ref.chat(chat).screen for chat in chats}
        out["plugins"] = sorted(m for m in sys.modules if m.startswith("PIL.") and m.endswith("ImagePlugin"))
        print(json.dumps(out))

    asyncio.run(main())
""")


def run(tmp_path: Path, env_path: str | None = None, **args: Any) -> dict[str, Any]:
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    if env_path is not None:
        env["PATH"] = env_path
    args["media"] = str(tmp_path / "media")
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(HELPERS), json.dumps(args)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def fake_ghostscripts(directory: Path, record: Path) -> None:
    """Every Ghostscript name, first on PATH: each records its call (and answers --version like gs)."""
    directory.mkdir()
    for name in GHOSTSCRIPT_NAMES:
        program = directory / name
        program.write_text(f'#!/bin/sh\necho "{name} $*" >> "{record}"\necho 10.0\nexit 0\n')
        program.chmod(0o755)


def test_postscript_or_a_pdf_sent_as_an_image_never_runs_ghostscript(tmp_path: Path) -> None:
    """EPS as photo.png, PostScript as scan.jpg, a PDF as pic.png, an EPS as a document: one line each, the
    real image answered; no Ghostscript name on PATH ever runs and no Pillow plugin but the four is loaded."""
    record = tmp_path / "ghostscript-calls"
    fake_ghostscripts(tmp_path / "bin", record)
    out = run(tmp_path, env_path=f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
              case="postscript", files={"eps": EPS.hex(), "ps": POSTSCRIPT.hex(),
                                        "pdf": pdf_bytes("a PDF sent as a photo").hex(),
                                        "png": image_bytes(40, 30).hex()})
    assert not record.exists(), f"Ghostscript ran: {record.read_text()}"
    [reply] = out["screens"]["1"]
    lines = reply.split("\n")
    bad = "not an image I can read (corrupt, or not PNG, JPEG, GIF or WebP)"
    assert lines[:3] == [f"📎 photo.png: {bad}", f"📎 scan.jpg: {bad}", f"📎 pic.png: {bad}"]
    assert lines[-1] == "I see a PNG image of 40x30 pixels."
    assert set(out["plugins"]) <= {"PIL.PngImagePlugin", "PIL.JpegImagePlugin", "PIL.GifImagePlugin",
                                   "PIL.WebPImagePlugin"}, out["plugins"]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from /proc")
def test_six_8900_square_pngs_at_once_add_less_than_1_gb(tmp_path: Path) -> None:
    """Six chats each send a 1.5 MB PNG that decodes to ~317 MB (~700 MB while scaled): refused from the header
    (media.max_image_pixels, 50 MP), one line each."""
    out = run(tmp_path, case="big", count=6)
    assert out["added_mb"] < 1024, out
    for chat, [reply] in out["screens"].items():  # one line about the image, then the words are answered
        first, _, answer = reply.partition("\n\n")
        assert first == f"📎 big{chat}.png: the image is too large to look at (8900x8900 pixels; the limit is 50 " \
                        "megapixels)" and answer.startswith("Hello! I am the built-in demo model")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from /proc")
def test_large_images_allowed_in_are_decoded_one_at_a_time(tmp_path: Path) -> None:
    """The cap raised to let them in, media.max_concurrent_decodes: 1: three sent at once are each looked at,
    decoded in turn, so the process grows by about one decode, not three (~2 GB)."""
    out = run(tmp_path, case="big", count=3,
              media_config={"max_image_pixels": 80_000_000, "max_concurrent_decodes": 1})
    for screen in out["screens"].values():
        assert screen == ["I see a PNG image of 1568x1568 pixels."]
    assert out["added_mb"] < 1024, out
