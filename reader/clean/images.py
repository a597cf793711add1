"""An article's images in its HTML, as plain functions of strings (run in the CPU pool
like the cleaner): the sources to fetch, the HTML pointed at reader's stored copies
(`/articles/{id}/images/{sha256}`), an image that is not kept dropped cleanly (its alt
text, where it had one, stays as a caption), and the type of an image sniffed from its
bytes (PNG, JPEG, GIF, WebP, AVIF; never SVG, which can carry script). The network half
is reader/jobs/images.py."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

import lxml.html
from lxml import etree



# Elements whose content may be a <figure>: elsewhere (inside a paragraph, a link, an
# emphasis) a missing image's alt text stays inline, as emphasis.
_FLOW = {"div", "body", "section", "article", "main", "blockquote", "li", "dd", "td", "th", "figure", "details"}


def sniff(data: bytes) -> str | None:
    """The image type of these bytes, or None if they are not a PNG, JPEG, GIF, WebP or
    AVIF image. What the server claimed is never asked: an HTML page or an SVG named
    .png and sent as image/png is refused here."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if len(data) >= 16 and data[4:8] == b"ftyp":
        # an ISO media file: AVIF if its major brand or one of its compatible brands says so
        box = int.from_bytes(data[:4], "big")
        brands = data[8:min(max(box, 16), 256, len(data))]
        if any(brands[i:i + 4] in (b"avif", b"avis") for i in range(0, len(brands) - 3, 4)):
            return "image/avif"
    return None


def image_url(article_id: int, digest: str) -> str:
    return f"/articles/{article_id}/images/{digest}"


def _parse(html: str) -> etree._Element:
    return lxml.html.fragment_fromstring(html, create_parent="div")


def image_sources(html: str) -> list[str]:
    """The http(s) addresses of the article's images, each once, in the order they appear."""
    if "<img" not in html:
        return []
    sources: list[str] = []
    for image in _parse(html).iter("img"):
        src = (image.get("src") or "").strip()
        try:
            scheme = urlsplit(src).scheme
        except ValueError:
            continue
        if scheme in ("http", "https") and src not in sources:
            sources.append(src)
    return sources


def rewrite(html: str, article_id: int, kept: Mapping[str, str]) -> str:
    """The article's HTML with every image it keeps (`kept`: source URL -> hash) served
    from reader, and every other image removed, its alt text left as a caption."""
    if "<img" not in html:
        return html
    root = _parse(html)
    for image in list(root.iter("img")):
        digest = kept.get((image.get("src") or "").strip())
        if digest is not None:
            image.set("src", image_url(article_id, digest))
            continue
        _drop_image(image)
    parts = [root.text or ""] + [etree.tostring(child, encoding="unicode", method="html") for child in root]
    return "".join(parts).strip()


def without_images(html: str) -> str:
    """Outside HTML reader keeps no images for (a feed's summary) with each image replaced
    by its alt text: the page's CSP allows only reader's own images, so a remote one
    would show as a broken picture (and, without that CSP, tell its host who reads)."""
    return rewrite(html, 0, {})


def _drop_image(image: etree._Element) -> None:
    alt = " ".join((image.get("alt") or "").split())
    parent = image.getparent()
    assert parent is not None  # the fragment's own wrapper is every element's ancestor
    figure = next((a for a in image.iterancestors() if a.tag == "figure"), None)
    replacement: etree._Element | None = None
    if alt and figure is not None:
        if figure.find(".//figcaption") is None:
            caption = etree.SubElement(figure, "figcaption")
            caption.text = alt
    elif alt and parent.tag in _FLOW:
        replacement = etree.Element("figure")
        etree.SubElement(replacement, "figcaption").text = alt
    elif alt:
        replacement = etree.Element("em")
        replacement.text = alt
    _replace(image, replacement)


def _replace(element: etree._Element, replacement: etree._Element | None) -> None:
    """Put `replacement` (or nothing) where `element` is, keeping the text after it."""
    parent = element.getparent()
    assert parent is not None
    tail = element.tail
    if replacement is not None:
        replacement.tail = tail
        parent.replace(element, replacement)
        return
    previous = element.getprevious()
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)
