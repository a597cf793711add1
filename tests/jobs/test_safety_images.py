"""Images whose header claims more pixels than anything an article shows (issue 26): a
few hundred bytes claiming 100,000 x 100,000 pixels are 40 GB for the e-reader or the
browser that decodes them. Headers crafted by hand, one per format reader keeps."""

from __future__ import annotations

import struct
import zlib

import pytest

from reader.clean.images import sniff
from reader.jobs.pixels import MAX_PIXELS, MAX_SIDE, dimensions, oversized

from ..helpers import app_client
from ..pictures import image_srcs, page_with, png


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_claiming(width: int, height: int) -> bytes:
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + _chunk(b"IDAT", zlib.compress(b"\0" * 64)) + _chunk(b"IEND", b""))


def gif_claiming(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def jpeg_claiming(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    exif = b"\xff\xe1" + struct.pack(">H", 2 + 300) + b"Exif\x00\x00" + b"\x00" * 294  # a thumbnail's room
    sof = b"\xff\xc2" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x11\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xd8" + app0 + exif + sof + b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" + b"\x00" * 32 + b"\xff\xd9"


def webp(chunk: bytes, payload: bytes) -> bytes:
    body = b"WEBP" + chunk + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


def webp_vp8x_claiming(width: int, height: int) -> bytes:
    return webp(b"VP8X", b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little"))


def webp_vp8l_claiming(width: int, height: int) -> bytes:
    return webp(b"VP8L", b"\x2f" + ((width - 1) | (height - 1) << 14).to_bytes(4, "little") + b"\x00" * 8)


def webp_vp8_claiming(width: int, height: int) -> bytes:
    return webp(b"VP8 ", b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", width, height) + b"\x00" * 8)


def avif_claiming(width: int, height: int) -> bytes:
    ftyp = struct.pack(">I", 28) + b"ftypavif\x00\x00\x00\x00avifmif1miaf"
    ispe = struct.pack(">I", 20) + b"ispe" + b"\x00\x00\x00\x00" + struct.pack(">II", width, height)
    ipco = struct.pack(">I", 8 + len(ispe)) + b"ipco" + ispe
    iprp = struct.pack(">I", 8 + len(ipco)) + b"iprp" + ipco
    meta = struct.pack(">I", 12 + len(iprp)) + b"meta\x00\x00\x00\x00" + iprp
    return ftyp + meta + b"\x00" * 32


MAKERS = {"image/png": png_claiming, "image/gif": gif_claiming, "image/jpeg": jpeg_claiming,
          "image/webp": webp_vp8x_claiming, "image/avif": avif_claiming}


@pytest.mark.parametrize("make", [png_claiming, gif_claiming, jpeg_claiming, webp_vp8x_claiming,
                                  webp_vp8l_claiming, webp_vp8_claiming, avif_claiming])
def test_each_formats_header_is_read_for_its_size_in_pixels(make):
    for width, height in ((1, 1), (640, 480), (4000, 3000), (12_345, 321)):
        data = make(width, height)
        kind = sniff(data)
        assert kind is not None and dimensions(data, kind) == (width, height)
        assert oversized(data, kind) is None


@pytest.mark.parametrize("make", [png_claiming, gif_claiming, jpeg_claiming, webp_vp8x_claiming,
                                  webp_vp8l_claiming, webp_vp8_claiming, avif_claiming])
def test_a_header_claiming_too_many_pixels_or_too_long_a_side_is_refused(make):
    reach = 16_384 if make in (webp_vp8l_claiming, webp_vp8_claiming) else 65_535  # 14 bits a side
    for width, height in ((MAX_SIDE + 1, 10), (10, MAX_SIDE + 1), (10_000, 6_000)):
        if max(width, height) > reach:
            continue
        data = make(width, height)
        kind = sniff(data)
        assert kind is not None
        reason = oversized(data, kind)
        assert reason is not None and f"{width} x {height}" in reason, (make, width, height)
    assert 10_000 * 6_000 > MAX_PIXELS


def test_the_worst_claims_of_each_format_are_refused():
    for data in (png_claiming(100_000, 100_000), gif_claiming(65_535, 65_535), jpeg_claiming(65_535, 65_535),
                 webp_vp8x_claiming(1 << 24, 1 << 24), webp_vp8l_claiming(16_384, 16_384),
                 avif_claiming(100_000, 100_000)):
        kind = sniff(data)
        assert kind is not None and oversized(data, kind) is not None


def test_a_header_that_says_nothing_readable_claims_nothing():
    assert dimensions(b"\xff\xd8\xff\xe0\x00", "image/jpeg") is None
    assert dimensions(b"\x89PNG\r\n\x1a\n", "image/png") is None
    assert oversized(b"\x89PNG\r\n\x1a\n", "image/png") is None


async def test_an_image_claiming_a_hundred_thousand_pixels_square_is_not_kept(settings, pages):
    pages.add("/img/huge.png", png_claiming(100_000, 100_000), headers={"Content-Type": "image/png"})
    pages.add("/img/huge.webp", webp_vp8x_claiming(1 << 24, 1 << 24), headers={"Content-Type": "image/webp"})
    pages.add("/img/fine.png", png(5), headers={"Content-Type": "image/png"})
    images = "".join(f'<figure><img src="/img/{name}" alt="image {name}"></figure>'
                     for name in ("huge.png", "huge.webp", "fine.png"))
    link = pages.add("/pixels.html", page_with(images))
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        response = await client.post("/api/articles", json={"url": link})
        assert response.status_code in (200, 201), response.text
        article_id = response.json()["id"]
        html = (await client.get(f"/api/articles/{article_id}/content")).json()["html"]
    [kept] = image_srcs(html)
    assert kept.startswith(f"/articles/{article_id}/images/")
    # the refused ones are dropped as any image not kept is: their alt text stays as a caption
    assert "<figcaption>image huge.png</figcaption>" in html and "<figcaption>image huge.webp</figcaption>" in html
