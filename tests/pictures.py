"""Images and pages with images for the tests that store, serve, re-clean and show them:
real image bytes built by hand (no image library needed)."""

from __future__ import annotations

import re
import struct
import zlib


PARAGRAPHS = "\n".join(
    f"<p>Paragraph number {i} carries enough words to look like prose to an extractor, with clauses,"
    f" commas and a full stop at its end.</p>" for i in range(8)
)


def png(seed: int = 0, padding: int = 0) -> bytes:
    """A real 1x1 PNG, different for each seed; `padding` adds a private chunk of that size."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    pixel = zlib.compress(bytes([0, seed % 256, (seed * 7) % 256, 90]))
    extra = chunk(b"prVt", b"\0" * padding) if padding else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) + extra
            + chunk(b"IDAT", pixel) + chunk(b"IEND", b""))


def page_with(images: str, title: str = "Pictures") -> str:
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head><body>
<nav><a href="/x">x</a></nav><main><article><h1>{title}</h1>{PARAGRAPHS}
{images}
{PARAGRAPHS}</article></main></body></html>"""


def image_srcs(html: str) -> list[str]:
    return re.findall(r'<img[^>]*\bsrc="([^"]*)"', html)
