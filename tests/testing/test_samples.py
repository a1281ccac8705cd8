"""The kit's sample files (``hermes_gateway.testing.samples``) are valid files of their formats.

Every emulator sends them, so what the core reads from them is real.
"""

from __future__ import annotations

import io
import re
import struct
import zlib

import pytest

from hermes_gateway.testing import samples


def test_the_photo_is_a_png_of_the_size_asked():
    Image = pytest.importorskip("PIL.Image")
    with Image.open(io.BytesIO(samples.png(64, 48))) as image:
        image.load()
        assert (image.format, image.size, image.getpixel((10, 10))) == ("PNG", (64, 48), (200, 40, 40))
    assert samples.png(64, 48) != samples.png(65, 48)


def test_the_pdf_has_a_correct_cross_reference_table_and_shows_its_text():
    data = samples.pdf("Quarterly (draft) numbers")
    assert data.startswith(b"%PDF-1.4\n") and data.rstrip().endswith(b"%%EOF")
    startxref = int(re.search(rb"startxref\n(\d+)", data).group(1))
    assert data[startxref:].startswith(b"xref\n0 6\n")
    offsets = [int(line[:10]) for line in data[startxref:].split(b"\n")[3:8]]
    assert [data[o:].split(b"\n", 1)[0] for o in offsets] == [b"%d 0 obj" % n for n in range(1, 6)]
    assert b"(Quarterly \\(draft\\) numbers) Tj" in data
    length = int(re.search(rb"/Length (\d+)", data).group(1))
    stream = data[data.index(b"stream\n") + 7:]
    assert stream[length:].startswith(b"\nendstream")



def test_each_page_of_the_pdf_shows_its_own_line():
    pypdf = pytest.importorskip("pypdf")
    reader = pypdf.PdfReader(io.BytesIO(samples.pdf("First page", "Second (and last) page")))
    assert [page.extract_text().strip() for page in reader.pages] == ["First page", "Second (and last) page"]
    assert samples.pdf() == samples.pdf("Hello from the PDF")

def ogg_pages(data: bytes) -> list[tuple[int, int, int, bytes]]:
    """(flags, granule, sequence, payload) of each page, every page's CRC checked."""
    pages = []
    offset = 0
    while offset < len(data):
        assert data[offset:offset + 4] == b"OggS"
        flags, granule, serial, sequence, crc, count = struct.unpack_from("<xBqIIIB", data, offset + 4)
        lacing = data[offset + 27:offset + 27 + count]
        end = offset + 27 + count + sum(lacing)
        page = bytearray(data[offset:end])
        page[22:26] = b"\0\0\0\0"
        assert samples.ogg_crc(bytes(page)) == crc, f"page {sequence}: CRC"
        pages.append((flags, granule, sequence, data[offset + 27 + count:end]))
        offset = end
    return pages


def test_the_voice_note_is_an_ogg_opus_stream_with_valid_pages():
    pages = ogg_pages(samples.voice_ogg(1.0))
    assert [p[0] for p in pages] == [0x02, 0x00, 0x04], "begins and ends the stream"
    assert pages[0][3].startswith(b"OpusHead") and len(pages[0][3]) == 19
    assert pages[1][3].startswith(b"OpusTags")
    assert pages[2][1] == 312 + 50 * 960, "one second of 20 ms frames after the pre-skip"
    assert pages[2][3] == samples.SILENT_OPUS_FRAME * 50


def test_the_ogg_crc_is_oggs_not_zlibs():
    assert samples.ogg_crc(b"123456789") == 0x89A1897F  # CRC-32/POSIX (0x765E7680) without its final xor: Ogg's
    assert samples.ogg_crc(b"123456789") != zlib.crc32(b"123456789")


def test_a_decoder_plays_the_voice_note_when_pyav_is_installed():
    av = pytest.importorskip("av")
    with av.open(io.BytesIO(samples.voice_ogg(1.0))) as container:
        assert container.streams.audio[0].codec_context.name == "opus"
        samples_decoded = sum(frame.samples for frame in container.decode(audio=0))
    assert samples_decoded == 48000 - 312


def test_a_longer_voice_note_spans_pages_of_a_second_each():
    pages = ogg_pages(samples.voice_ogg(2.5))
    assert [p[0] for p in pages] == [0x02, 0x00, 0x00, 0x00, 0x04], "one page a second, the last one ends it"
    assert [p[2] for p in pages] == [0, 1, 2, 3, 4]
    assert [p[1] for p in pages[2:]] == [312 + 50 * 960, 312 + 100 * 960, 312 + 125 * 960]
    assert samples.voice_ogg(1.0) != samples.voice_ogg(1.0, serial=7), "the serial tells two notes apart"


def test_a_decoder_plays_half_a_second_note_as_half_a_second():
    av = pytest.importorskip("av")
    with av.open(io.BytesIO(samples.voice_ogg(0.5))) as container:
        decoded = sum(frame.samples for frame in container.decode(audio=0))
    assert decoded == 24000 - 312
