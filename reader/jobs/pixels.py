"""An image's size in pixels, as its header claims it, and the limit reader keeps to.

A PNG of a few hundred bytes can claim 100,000 x 100,000 pixels: 40 GB once decoded, by
the e-reader or browser that opens the article, not by reader (which never decodes an
image). The header is all that is read here: PNG's IHDR, GIF's logical screen, JPEG's
start-of-frame, WebP's VP8, VP8L or VP8X header, AVIF's `ispe` properties. A header that
cannot be read claims nothing and is left to the sniffer's verdict.

Kept apart from reader/clean/images.py (which tells the types apart) because it answers a
different question: not "is this an image" but "may it be kept"."""

from __future__ import annotations

MAX_PIXELS = 50_000_000  # 50 megapixels: a 50 MP camera's photo, 200 MB once decoded
MAX_SIDE = 20_000  # pixels along either side: nothing an article shows is wider or taller

# JPEG's start-of-frame markers (the ones that carry the frame's size): C0-CF except the
# Huffman table (C4), the arithmetic-coding (CC) and the reserved JPG (C8) markers
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_SCAN = 1_000_000  # bytes walked looking for the frame header (EXIF thumbnails come first)
_AVIF_SCAN = 64_000  # the meta box, which holds the properties, comes first in an AVIF file


def dimensions(data: bytes, kind: str) -> tuple[int, int] | None:
    """(width, height) as the header of an image of this type (a sniffed `image/...`)
    claims them, or None if it says nothing readable."""
    reader = _READERS.get(kind)
    return reader(data) if reader else None


def oversized(data: bytes, kind: str) -> str | None:
    """Why the image is too large in pixels to keep, or None."""
    size = dimensions(data, kind)
    if size is None:
        return None
    width, height = size
    if width > MAX_SIDE or height > MAX_SIDE:
        return f"its header claims {width} x {height} pixels, a side over {MAX_SIDE:,}"
    if width * height > MAX_PIXELS:
        return f"its header claims {width} x {height} pixels, over {MAX_PIXELS // 1_000_000} megapixels"
    return None


def _png(data: bytes) -> tuple[int, int] | None:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _gif(data: bytes) -> tuple[int, int] | None:
    if len(data) < 10:
        return None
    return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")


def _jpeg(data: bytes) -> tuple[int, int] | None:
    at = 2  # past the start-of-image marker
    end = min(len(data), _JPEG_SCAN)
    while at + 4 <= end:
        if data[at] != 0xFF:
            return None  # lost in the stream: not a header we can walk
        marker = data[at + 1]
        if marker == 0xFF:  # fill bytes before a marker
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers that stand alone, without a length
            at += 2
            continue
        length = int.from_bytes(data[at + 2:at + 4], "big")
        if marker in _JPEG_FRAMES:
            if at + 9 > len(data):
                return None
            height = int.from_bytes(data[at + 5:at + 7], "big")
            width = int.from_bytes(data[at + 7:at + 9], "big")
            return width, height
        if marker == 0xDA or length < 2:  # the scan starts before any frame header: not a JPEG we know
            return None
        at += 2 + length
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        # 24-bit canvas width and height, each stored minus one
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        return int.from_bytes(data[26:28], "little") & 0x3FFF, int.from_bytes(data[28:30], "little") & 0x3FFF
    return None


def _avif(data: bytes) -> tuple[int, int] | None:
    # Every image item (the main one, its tiles, its thumbnails) has an `ispe` property:
    # box size, "ispe", version and flags, width, height. The largest is what a viewer
    # may have to decode.
    head = data[:_AVIF_SCAN]
    largest: tuple[int, int] | None = None
    at = head.find(b"ispe")
    while at >= 4 and at + 16 <= len(head):
        width, height = int.from_bytes(head[at + 8:at + 12], "big"), int.from_bytes(head[at + 12:at + 16], "big")
        if largest is None or width * height > largest[0] * largest[1]:
            largest = (width, height)
        at = head.find(b"ispe", at + 4)
    return largest


_READERS = {"image/png": _png, "image/gif": _gif, "image/jpeg": _jpeg, "image/webp": _webp, "image/avif": _avif}
