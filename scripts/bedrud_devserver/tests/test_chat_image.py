"""The scripted `chat-image ID SIZE` picture (chatwire.pattern_png): a PNG a decoder reads,
checked here with nothing but struct and zlib, so report.html shows a picture, not a
broken one."""
from __future__ import annotations

import struct
import zlib

import pytest

from ..chatwire import pattern_png


def parse_png(data: bytes) -> list[tuple[bytes, bytes]]:
    """The chunks of `data`, checking the signature, every CRC and that IEND ends the file."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "PNG signature"
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        assert len(body) == length, f"{kind!r} runs past the end"
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        assert crc == zlib.crc32(kind + body), f"{kind!r} CRC"
        chunks.append((kind, body))
        at += 12 + length
        if kind == b"IEND":
            break
    assert at == len(data), "bytes after IEND"
    return chunks


@pytest.mark.parametrize("size", [1_000, 20_000, 100_000, 300_000, 512_000])
def test_the_pattern_is_a_png_of_the_asked_size(size):
    data = pattern_png(size)
    assert abs(len(data) - size) <= size * 0.03, len(data)
    chunks = parse_png(data)
    kinds = [k for k, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour, compression, filtering, interlace) == (8, 2, 0, 0, 0), "8-bit RGB, not interlaced"
    assert width >= 1 and height >= 1
    pixels = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    row = 1 + 3 * width
    assert len(pixels) == height * row, "one filter byte and width x 3 bytes per row"
    assert all(pixels[y * row] == 0 for y in range(height)), "filter type None on every row"
    # Noise: the pixels fill most of the file rather than compressing away.
    assert len(pixels) >= size * 0.8


def test_the_pattern_is_the_same_for_the_same_size_and_differs_between_sizes():
    assert pattern_png(300_000) == pattern_png(300_000)
    assert pattern_png(300_000)[100:200] != pattern_png(300_001)[100:200]


def test_a_size_below_the_smallest_png_gives_the_smallest():
    data = pattern_png(10)
    assert len(data) == 69
    assert [k for k, _ in parse_png(data)] == [b"IHDR", b"IDAT", b"IEND"]
