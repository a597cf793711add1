"""An article's images, kept with it.

When an article is cleaned its images are fetched inside the same claimed run, through
the same guarded client as the page (the same address check, a byte cap per image), a
few at a time and within one overall deadline, so a slow image host delays the article
by a bounded time and never holds its claim for long. Only real images are kept: the
type is sniffed from the bytes (PNG, JPEG, GIF, WebP, AVIF), never taken from the
server, and SVG (which can carry script) is refused like anything else that is not one
of those. The number of images and their bytes per article are capped, in the order the
images appear.

The article's HTML then points at reader (`/articles/{id}/images/{sha256}`), so it
reads offline and with its origin gone, and the page's CSP can say `img-src 'self'`.
An image that is not kept is dropped cleanly: its alt text, where it had one, stays as
a caption.

`image_sources` and `rewrite` are plain functions of strings, run in the CPU pool like
the cleaner; `fetch_images` is the network part.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
import lxml.html
from lxml import etree

from .fetch import FetchError, fetch
from .records import StoredImage
from .settings import Settings

log = logging.getLogger(__name__)

IMAGE_ACCEPT = "image/avif,image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.1"
# Images of one article fetched at once: enough to hide latency, few enough that one
# article does not open a crowd of connections to one host.
FETCHES_AT_ONCE = 4

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


@dataclass
class FetchedImages:
    """What one cleaning's image step came to: the images kept (in the order they appear),
    source URL -> hash for each, and the bytes taken in from the network (the ledger's)."""

    images: list[StoredImage] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)
    received: int = 0


async def fetch_images(
    client: httpx.AsyncClient, sources: Sequence[str], settings: Settings, *, referer: str | None = None,
    stored: Sequence[StoredImage] = (),
) -> FetchedImages:
    """Fetch the article's images within the caps. An image already `stored` with the
    article under the same source (a reclean) is reused without a fetch."""
    result = FetchedImages()
    chosen = list(sources)[:max(0, settings.images_per_article)]
    if not chosen:
        return result
    known = {image.source: image for image in stored}
    gate = asyncio.Semaphore(FETCHES_AT_ONCE)
    budget = max(0, settings.article_image_bytes)
    taken = 0  # bytes of images already fetched: past the budget, no more are started
    extra = {"Referer": referer} if referer else None

    async def one(src: str) -> StoredImage | None:
        nonlocal taken
        if src in known:
            return known[src]
        async with gate:
            if taken >= budget:
                return None
            try:
                response = await fetch(client, src, max_bytes=max(0, settings.image_max_bytes),
                                       deadline=min(settings.fetch_timeout, settings.image_deadline),
                                       accept=IMAGE_ACCEPT, extra_headers=extra)
            except FetchError:
                return None
        taken += len(response.body)
        result.received += len(response.body)
        kind = sniff(response.body)
        if kind is None:
            return None
        return StoredImage(hashlib.sha256(response.body).hexdigest(), src, kind, response.body)

    tasks = [asyncio.ensure_future(one(src)) for src in chosen]
    _, pending = await asyncio.wait(tasks, timeout=max(0.0, settings.image_deadline))
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    used = 0
    hashes: set[str] = set()
    for task in tasks:
        if task.cancelled():
            continue
        if task.exception() is not None:  # not a fetch error (those are None): a bug, said once
            log.error("storing an image failed", exc_info=task.exception())
            continue
        image = task.result()
        if image is None:
            continue
        if image.hash in hashes:  # the same picture at two addresses: stored once
            result.kept[image.source] = image.hash
            continue
        if used + len(image.data) > budget:
            continue
        used += len(image.data)
        hashes.add(image.hash)
        result.images.append(image)
        result.kept[image.source] = image.hash
    return result
