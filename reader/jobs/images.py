"""An article's images, kept with it.

When an article is cleaned its images are fetched inside the same claimed run, through
the same guarded client as the page (the same address check, a byte cap per image), a
few at a time and within one overall deadline, so a slow image host delays the article
by a bounded time and never holds its claim for long. Only real images are kept: the
type is sniffed from the bytes (PNG, JPEG, GIF, WebP, AVIF), never taken from the
server, and SVG (which can carry script) is refused like anything else that is not one
of those. An image whose header claims more pixels than anything an article shows
(reader/jobs/pixels.py) is refused too: a few hundred bytes can claim 40 GB once decoded,
and it is the e-reader or the browser that would decode it. The number of images and
their bytes per article are capped, in the order the images appear.

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
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

from ..fetch import FetchError, fetch
from ..records import StoredImage
from ..clean.images import sniff
from .pixels import oversized
from ..settings import Settings

log = logging.getLogger(__name__)

IMAGE_ACCEPT = "image/avif,image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.1"
# Images of one article fetched at once: enough to hide latency, few enough that one
# article does not open a crowd of connections to one host.
FETCHES_AT_ONCE = 4


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
        too_large = oversized(response.body, kind)
        if too_large is not None:
            log.info("image %s not kept: %s", src[:200], too_large)
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
