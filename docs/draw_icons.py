"""Draws reader's app icons (static/icons/icon-192.png and icon-512.png), run once by hand
when the design changes: `python docs/draw_icons.py`. Pure standard library: a PNG is a
few zlib-compressed rows.

The design: the accent blue of the pages, edge to edge (so a launcher's round or squircle
mask cuts nothing that matters), and a white page with four lines of text, the last one
short, inside the safe zone (the middle 80%)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

BLUE = (0x1F, 0x5F, 0xBF)
WHITE = (0xFF, 0xFF, 0xFF)
OUT = Path(__file__).resolve().parent.parent / "static" / "icons"


def pixel(x: float, y: float) -> tuple[int, int, int]:
    """The colour at (x, y), both from 0 to 1."""
    left, right, top, bottom = 0.30, 0.70, 0.24, 0.76
    if not (left <= x <= right and top <= y <= bottom):
        return BLUE
    # rounded corners of the page
    r = 0.04
    cx = min(max(x, left + r), right - r)
    cy = min(max(y, top + r), bottom - r)
    if (x - cx) ** 2 + (y - cy) ** 2 > r * r:
        return BLUE
    for i, length in enumerate((1.0, 1.0, 1.0, 0.6)):
        line_top = 0.34 + i * 0.1
        if line_top <= y <= line_top + 0.035 and left + 0.06 <= x <= left + 0.06 + length * 0.28:
            return BLUE
    return WHITE


def png(size: int) -> bytes:
    rows = b"".join(
        b"\x00" + bytes(c for x in range(size) for c in pixel((x + 0.5) / size, (y + 0.5) / size))
        for y in range(size)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for size in (192, 512):
        (OUT / f"icon-{size}.png").write_bytes(png(size))
