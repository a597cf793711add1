"""Editions from the library: the reading list (ready and not done) as one EPUB, one
article as an EPUB, and the OPDS catalog listing them. The core supplies the articles
and their cleaned text; reader/edition turns them into bytes; the pages and the CLI
only choose the filters and deliver the result.

Images stored with an article (served from reader, `/articles/{id}/images/{hash}`) are
embedded from the database, with no fetch. An article cleaned before images were kept
still names them by their URLs: those are fetched when a book is made, through the same
guarded client as every other fetch, unless another site's link asked for the book
(reading.starts_work: it gets the book with what is stored, and starts no fetch). Either
way within the book's size cap; an image that cannot be had, or is not a type every
reading system shows, becomes its alt text."""

from __future__ import annotations

import asyncio
import dataclasses
import html as html_lib
import re
import uuid
from collections.abc import Sequence
from typing import Any
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import urlencode, urlsplit

import lxml.html

from .highlights import painted
from .reader import MAX_LIMIT, Reader
from .reading import OpenedBy, marks_read, starts_work
from ..formats.opds import CatalogEntry, build_opds
from ..formats.epub import Edition, EditionArticle, EditionImage, sniff_image_type
from ..errors import Conflict, NotFound
from ..records import Article, Content

# Articles an edition looks at, at most: past this the size cap has long stopped it.
MAX_EDITION_ARTICLES = 1000
IMAGE_FETCHES_AT_ONCE = 4
IMAGES_PER_ARTICLE = 30
# How an article's HTML names an image stored with it (reader/clean/images.py).
_STORED = re.compile(r"/articles/(?P<id>[0-9]+)/images/(?P<hash>[0-9a-f]{64})")
_NAMESPACE = uuid.UUID("0d7e4c1b-9a3f-4f52-8c61-2b5e7f9a1c30")


@dataclass(frozen=True)
class Filters:
    """Which part of the reading list goes into an edition (the browse page's filters)."""

    feed_id: int | None = None
    starred: bool = False

    def query(self) -> str:
        pairs = ([("feed", str(self.feed_id))] if self.feed_id is not None else []) + \
            ([("starred", "1")] if self.starred else [])
        return "?" + urlencode(pairs) if pairs else ""


async def reading_list(reader: Reader, filters: Filters, limit: int = MAX_EDITION_ARTICLES) -> list[Article]:
    """The reading list's articles (ready and not done), in the listing's order, page after page."""
    found: list[Article] = []
    before: int | None = None
    while len(found) < limit:
        page = await reader.articles(state="ready", unread=True, feed_id=filters.feed_id,
                                     starred=filters.starred, before=before, limit=min(MAX_LIMIT, limit - len(found)))
        found.extend(page)
        if len(page) < MAX_LIMIT or not page:
            break
        before = page[-1].id
    return found


def edition_title(filters: Filters, feed_title: str | None = None, when: datetime | None = None) -> str:
    when = when or datetime.now(timezone.utc)
    what = "Starred reading" if filters.starred else "Reading list"
    if feed_title:
        what += f": {feed_title}"
    return f"{what}, {when.day} {when:%B %Y}"


async def make_edition(reader: Reader, filters: Filters, *, title: str | None = None,
                       by: OpenedBy = "person") -> Edition:
    """The reading list (with these filters) as one book, capped at the edition size setting,
    for whoever asked (`by`: another site's link gets no image fetched)."""
    feed_title = (await reader.feed(filters.feed_id)).title if filters.feed_id is not None else None
    articles = await reading_list(reader, filters)
    max_bytes = reader.settings.edition_max_bytes
    book_articles: list[EditionArticle] = []
    used = 0
    for article in articles:
        item = await _edition_article(reader, article, budget=max_bytes - used, fetch=starts_work(by))
        if item is None:
            continue
        book_articles.append(item)
        used += len(item.html) + sum(len(image.data) for image in item.images)
        if used > max_bytes:
            break  # assemble_epub stops at the cap and counts what it left out
    # Turning a few hundred articles into XHTML takes seconds of CPU: Reader.epub does it
    # in the extraction pool, so the event loop keeps answering meanwhile.
    edition = await reader.epub(book_articles, title=title or edition_title(filters, feed_title),
                                max_bytes=max_bytes, description="The reading list from reader: ready, not done yet.")
    skipped = len(articles) - len(book_articles)
    return Edition(edition.data, edition.included, edition.left_out + skipped, edition.identifier)


async def article_book(reader: Reader, article_id: int, *, by: OpenedBy = "person") -> Edition:
    """One article as a book of its own. An article not cleaned yet is refused: making a
    book never starts an extraction (nor, asked by another site's link, an image fetch)."""
    article, content = await reader.reading(article_id)
    if content is None:
        raise Conflict("this article is not cleaned yet: queue it, and download it once it is ready")
    item = _with_content(article, content)
    marked = await reader.highlights(article.id)
    if marked:
        item = dataclasses.replace(item, html=_with_highlights(content, marked))
    item = dataclasses.replace(item, images=await _images(reader, content.html, reader.settings.edition_max_bytes,
                                                                fetch=starts_work(by)))
    return await reader.epub([item], title=item.title, creator=item.author or item.site or "reader",
                             identifier=article_urn(article))


async def catalog(reader: Reader, origin: str, filters: Filters = Filters()) -> bytes:
    """The OPDS catalog: the current edition, then every ready article, newest first."""
    waiting = await reading_list(reader, filters)
    ready = await reader.articles(state="ready", feed_id=filters.feed_id, starred=filters.starred, limit=MAX_LIMIT)
    now = datetime.now(timezone.utc)
    latest = max((_when(a.added_at) for a in ready), default=now)
    edition = CatalogEntry(
        id=f"urn:uuid:{uuid.uuid5(_NAMESPACE, origin + '/edition' + filters.query())}",
        title=f"{edition_title(filters, when=now)} ({len(waiting)} article{'' if len(waiting) == 1 else 's'})",
        updated=now, href=f"{origin}/edition.epub{filters.query()}", author="reader",
        summary="Every article on the reading list as one book, in one download.",
    )
    entries = [
        CatalogEntry(
            id=article_urn(a), title=a.title or a.url, updated=_when(a.added_at), href=f"{origin}/articles/{a.id}.epub",
            author=a.author or a.feed_title, summary=a.summary_text[:500] or None,
            published=_when(a.published) if a.published else None,
        )
        for a in ready
    ]
    return build_opds(entries, edition=edition, feed_id=f"urn:uuid:{uuid.uuid5(_NAMESPACE, origin + '/opds')}",
                      title="reader", updated=max(latest, now), self_href=f"{origin}/opds{filters.query()}",
                      start_href=f"{origin}/opds")


def download_marks_read(reader: Reader, edition: Edition, by: OpenedBy) -> bool:
    """Whether downloading this edition marks its articles read and done: a setting, and
    only for the person (an e-reader app, or reader's own link). A download another site's
    page started marks nothing: any page a person visited could send them here to empty
    their reading list."""
    return reader.settings.edition_marks_read and bool(edition.included) and marks_read(by)


async def mark_read_after_download(reader: Reader, article_ids: Sequence[int | str]) -> None:
    """The articles went to the e-reader: read, and done here (off the reading list, so the
    next edition does not bring them again)."""
    ids = [int(article_id) for article_id in article_ids]
    await reader.mark_many(True, ids=ids)
    await reader.done_many(True, ids=ids)


def article_urn(article: Article) -> str:
    return f"urn:uuid:{uuid.uuid5(_NAMESPACE, f'{article.id}:{article.url}')}"


def _when(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, timezone.utc)


def _site(article: Article) -> str | None:
    return article.feed_title or urlsplit(article.url).hostname


def _with_content(article: Article, content: Content) -> EditionArticle:
    return EditionArticle(
        id=article.id, title=content.title or article.title or article.url, html=content.html, url=article.url,
        site=_site(article), author=content.author or article.author,
        published=_when(article.published) if article.published else None,
    )


async def _edition_article(reader: Reader, article: Article, budget: int, *, fetch: bool) -> EditionArticle | None:
    _, content = await reader.reading(article.id)
    if content is None:  # cleaned again or reset since the listing: not ready any more
        return None
    item = _with_content(article, content)
    marked = await reader.highlights(article.id)
    if marked:
        item = dataclasses.replace(item, html=_with_highlights(content, marked))
    images = await _images(reader, content.html, max(0, budget - len(content.html)), fetch=fetch)
    return dataclasses.replace(item, images=images)


def _with_highlights(content: Content, marked: Sequence[dict[str, Any]]) -> str:
    """The text with its highlighted passages marked, then the article's highlights listed
    at its end, each quote with its note (text, escaped)."""
    items = "".join(
        f"<li><blockquote>{html_lib.escape(h['quote'])}</blockquote>"
        + (f"<p>{html_lib.escape(h['note'])}</p>" if h["note"] else "")
        + ("<p><em>not found in the current text</em></p>" if h["detached"] else "") + "</li>"
        for h in marked)
    return f"{painted(content.html, content.text, marked)}<section><h2>Highlights</h2><ol>{items}</ol></section>"


def _image_sources(html: str) -> list[str]:
    if "<img" not in html:
        return []
    sources: list[str] = []
    for image in lxml.html.fragment_fromstring(html, create_parent="div").iter("img"):
        src = image.get("src") or ""
        if (urlsplit(src).scheme in ("http", "https") or _STORED.fullmatch(src)) and src not in sources:
            sources.append(src)
    return sources[:IMAGES_PER_ARTICLE]


async def _images(reader: Reader, html: str, budget: int, *, fetch: bool) -> list[EditionImage]:
    """The article's images, stored ones read from the database and others fetched a few
    at a time (if `fetch`), as long as they fit the budget."""
    sources = _image_sources(html)
    if not sources or budget <= 0:
        return []
    gate = asyncio.Semaphore(IMAGE_FETCHES_AT_ONCE)

    async def one(src: str) -> EditionImage | None:
        stored = _STORED.fullmatch(src)
        if stored is not None:
            try:
                image = await reader.image(int(stored["id"]), stored["hash"])
            except NotFound:
                return None
            return EditionImage(src, image.data, image.type)
        if not fetch:
            return None
        async with gate:
            response = await reader.fetch_image(src, budget)
        if response is None:
            return None
        if sniff_image_type(response.body) is None:
            return None
        return EditionImage(src, response.body, response.content_type)

    fetched = await asyncio.gather(*(one(src) for src in sources))
    images: list[EditionImage] = []
    for image in fetched:
        if image is not None and len(image.data) <= budget:
            images.append(image)
            budget -= len(image.data)
    return images
