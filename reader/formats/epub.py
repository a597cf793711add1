"""An EPUB 3 book from cleaned articles: one chapter each, a first page, a table of
contents (nav.xhtml, plus an NCX for readers that predate EPUB 3), embedded images."""

from __future__ import annotations

import io
import uuid
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from lxml import etree

from ..clean.images import sniff
from .xhtml import EPUB_NS, fragment_into, q, safe_href, serialize, xhtml_document, xml_text

OPF_NS = "http://www.idpf.org/2007/opf"
DC_NS = "http://purl.org/dc/elements/1.1/"
NCX_NS = "http://www.daisy.org/z3986/2005/ncx/"
CONTAINER_NS = "urn:oasis:names:tc:opendocument:xmlns:container"
# A fixed namespace so the same articles give the same book identifier on every download:
# a reader that already holds the book sees it as the same book.
_ID_NAMESPACE = uuid.UUID("6f1c8a52-3f0e-4d8e-9a57-6b2f0c1d7e41")

_IMAGE_EXTENSIONS = {"image/jpeg": "jpg", "image/png": "png", "image/gif": "gif"}

_STYLESHEET = b"""body { margin: 0 0.5em; line-height: 1.45; }
header.byline { margin-bottom: 1.5em; }
header.byline h1 { margin-bottom: 0.3em; line-height: 1.2; }
header.byline p { margin: 0.1em 0; font-size: 0.9em; }
img { max-width: 100%; height: auto; }
pre { white-space: pre-wrap; }
blockquote { margin-left: 1em; padding-left: 0.8em; border-left: 2px solid #999; }
"""


# EPUB's core image types: every reading system must show them (WebP need not be shown;
# SVG can carry scripts). A wrong media type makes the book invalid, so the bytes decide.
_EPUB_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif"})


def sniff_image_type(data: bytes) -> str | None:
    """The media type of an image from its first bytes, or None if it is not one of EPUB's
    core image types."""
    kind = sniff(data)
    return kind if kind in _EPUB_IMAGE_TYPES else None


@dataclass(frozen=True)
class EditionImage:
    """An image of an article: `src` is the URL as it appears in the article's HTML."""

    src: str
    data: bytes
    media_type: str | None = None  # a hint only; the bytes decide


@dataclass(frozen=True)
class EditionArticle:
    id: int | str
    title: str
    html: str  # cleaned and sanitized (reader/sanitize.py)
    url: str | None = None
    site: str | None = None
    author: str | None = None
    published: datetime | None = None
    images: Sequence[EditionImage] = field(default=())


@dataclass(frozen=True)
class Edition:
    data: bytes
    included: list[int | str]  # article ids in the book, in order
    left_out: int  # articles not added because of the size cap
    identifier: str


def build_epub(articles: Sequence[EditionArticle], **options: Any) -> bytes:
    """The book's bytes; assemble_epub (same options) also says which articles went in."""
    return assemble_epub(articles, **options).data


@dataclass
class _Chapter:
    article: EditionArticle
    href: str
    body: bytes
    images: list[tuple[str, str, bytes]]  # (href, media type, bytes)

    @property
    def size(self) -> int:
        return len(self.body) + sum(len(data) for _, _, data in self.images)


def assemble_epub(
    articles: Sequence[EditionArticle],
    *,
    title: str,
    identifier: str | None = None,
    language: str = "en",
    creator: str = "reader",
    modified: datetime | None = None,
    max_bytes: int | None = None,
    description: str | None = None,
) -> Edition:
    """An EPUB 3 book holding `articles` in the order given.

    max_bytes caps the sum of the chapters and their images (before compression, so the
    file comes out smaller): articles are added in order until the next one would pass
    the cap, and the book's first page says how many were left out."""
    modified = (modified or datetime.now(timezone.utc)).astimezone(timezone.utc).replace(microsecond=0)
    if identifier is None:
        seed = "\n".join([title, *(f"{a.id}:{a.url or ''}" for a in articles)])
        identifier = f"urn:uuid:{uuid.uuid5(_ID_NAMESPACE, seed)}"

    chapters: list[_Chapter] = []
    total = 0
    for index, article in enumerate(articles, start=1):
        chapter = _chapter(article, index, language)
        if max_bytes is not None and total + chapter.size > max_bytes:
            break
        chapters.append(chapter)
        total += chapter.size
    left_out = len(articles) - len(chapters)

    files: list[tuple[str, bytes]] = [
        ("title.xhtml", _title_page(title, chapters, left_out, max_bytes, modified, language, description)),
        ("nav.xhtml", _nav(title, chapters, language)),
        ("toc.ncx", _ncx(title, identifier, chapters)),
        ("style.css", _STYLESHEET),
    ]
    for chapter in chapters:
        files.append((chapter.href, chapter.body))
        files.extend((href, data) for href, _, data in chapter.images)
    opf = _package(title, identifier, language, creator, modified, chapters, description)

    buffer = io.BytesIO()
    stamp = modified.timetuple()[:6]
    with zipfile.ZipFile(buffer, "w") as book:
        # The mimetype entry must be first and stored, so a reader can identify the
        # file from its first bytes.
        book.writestr(zipfile.ZipInfo("mimetype", stamp), b"application/epub+zip", zipfile.ZIP_STORED)
        book.writestr(zipfile.ZipInfo("META-INF/container.xml", stamp), _container(), zipfile.ZIP_DEFLATED)
        book.writestr(zipfile.ZipInfo("OEBPS/content.opf", stamp), opf, zipfile.ZIP_DEFLATED)
        for href, data in files:
            book.writestr(zipfile.ZipInfo(f"OEBPS/{href}", stamp), data, zipfile.ZIP_DEFLATED)
    return Edition(buffer.getvalue(), [c.article.id for c in chapters], left_out, identifier)


def _chapter(article: EditionArticle, index: int, language: str) -> _Chapter:
    images: dict[str, tuple[str, str, bytes]] = {}
    for image in article.images:
        media_type = sniff_image_type(image.data)
        if media_type is None or image.src in images:
            continue
        href = f"images/{index:04d}-{len(images) + 1:03d}.{_IMAGE_EXTENSIONS[media_type]}"
        images[image.src] = (href, media_type, image.data)
    used: dict[str, tuple[str, str, bytes]] = {}

    def image_href(src: str) -> str | None:
        found = images.get(src)
        if found is None:
            return None
        used[found[0]] = found
        return found[0]

    tree, body = xhtml_document(article.title, lang=language)
    section = etree.SubElement(body, q("section"))
    section.set(f"{{{EPUB_NS}}}type", "chapter")
    header = etree.SubElement(section, q("header"), {"class": "byline"})
    etree.SubElement(header, q("h1")).text = xml_text(article.title) or "Untitled"
    if article.site:
        etree.SubElement(header, q("p"), {"class": "site"}).text = xml_text(article.site)
    if article.author:
        etree.SubElement(header, q("p"), {"class": "author"}).text = "By " + xml_text(article.author)
    if article.published is not None:
        line = etree.SubElement(header, q("p"), {"class": "date"})
        when = etree.SubElement(line, q("time"), datetime=article.published.date().isoformat())
        when.text = _long_date(article.published)
    if article.url:
        line = etree.SubElement(header, q("p"), {"class": "source"})
        link = etree.SubElement(line, q("a"), href=safe_href(article.url))
        link.text = "Original"
    content = etree.SubElement(section, q("div"), {"class": "content"})
    fragment_into(content, article.html, image_href)
    return _Chapter(article, f"article-{index:04d}.xhtml", serialize(tree), list(used.values()))


def _long_date(value: datetime) -> str:
    return f"{value.day} {value:%B %Y}"


def _title_page(
    title: str,
    chapters: Sequence[_Chapter],
    left_out: int,
    max_bytes: int | None,
    modified: datetime,
    language: str,
    description: str | None,
) -> bytes:
    tree, body = xhtml_document(title, lang=language)
    section = etree.SubElement(body, q("section"))
    section.set(f"{{{EPUB_NS}}}type", "titlepage")
    etree.SubElement(section, q("h1")).text = xml_text(title)
    if description:
        etree.SubElement(section, q("p")).text = xml_text(description)
    count = len(chapters)
    etree.SubElement(section, q("p")).text = (
        f"{count} article{'' if count == 1 else 's'}, made {_long_date(modified)} at {modified:%H:%M} UTC."
    )
    if left_out:
        limit = f" of {max_bytes / 1_000_000:g} MB" if max_bytes else ""
        note = etree.SubElement(section, q("p"), {"class": "left-out"})
        note.text = (
            f"{left_out} more article{'' if left_out == 1 else 's'} did not fit: this book stops "
            f"at its size limit{limit}. They are still on your reading list."
        )
    if chapters:
        contents = etree.SubElement(section, q("ol"))
        for chapter in chapters:
            item = etree.SubElement(contents, q("li"))
            etree.SubElement(item, q("a"), href=chapter.href).text = xml_text(chapter.article.title) or "Untitled"
    return serialize(tree)


def _nav(title: str, chapters: Sequence[_Chapter], language: str) -> bytes:
    tree, body = xhtml_document(title, lang=language)
    nav = etree.SubElement(body, q("nav"), id="toc")
    nav.set(f"{{{EPUB_NS}}}type", "toc")
    etree.SubElement(nav, q("h1")).text = "Contents"
    items = etree.SubElement(nav, q("ol"))
    for href, label in [("title.xhtml", xml_text(title)), *((c.href, xml_text(c.article.title)) for c in chapters)]:
        item = etree.SubElement(items, q("li"))
        etree.SubElement(item, q("a"), href=href).text = label or "Untitled"
    return serialize(tree)


def _ncx(title: str, identifier: str, chapters: Sequence[_Chapter]) -> bytes:
    root = etree.Element(f"{{{NCX_NS}}}ncx", nsmap={None: NCX_NS}, version="2005-1")
    head = etree.SubElement(root, f"{{{NCX_NS}}}head")
    for name, content in (("dtb:uid", identifier), ("dtb:depth", "1"),
                          ("dtb:totalPageCount", "0"), ("dtb:maxPageNumber", "0")):
        etree.SubElement(head, f"{{{NCX_NS}}}meta", name=name, content=content)
    doc_title = etree.SubElement(root, f"{{{NCX_NS}}}docTitle")
    etree.SubElement(doc_title, f"{{{NCX_NS}}}text").text = xml_text(title)
    nav_map = etree.SubElement(root, f"{{{NCX_NS}}}navMap")
    points = [("title.xhtml", xml_text(title)), *((c.href, xml_text(c.article.title)) for c in chapters)]
    for order, (href, label) in enumerate(points, start=1):
        point = etree.SubElement(nav_map, f"{{{NCX_NS}}}navPoint", id=f"point-{order}", playOrder=str(order))
        label_element = etree.SubElement(point, f"{{{NCX_NS}}}navLabel")
        etree.SubElement(label_element, f"{{{NCX_NS}}}text").text = label or "Untitled"
        etree.SubElement(point, f"{{{NCX_NS}}}content", src=href)
    data: bytes = etree.tostring(root, xml_declaration=True, encoding="utf-8")
    return data


def _package(
    title: str,
    identifier: str,
    language: str,
    creator: str,
    modified: datetime,
    chapters: Sequence[_Chapter],
    description: str | None,
) -> bytes:
    root = etree.Element(
        f"{{{OPF_NS}}}package", nsmap={None: OPF_NS}, version="3.0", attrib={"unique-identifier": "book-id"}
    )
    root.set("{http://www.w3.org/XML/1998/namespace}lang", language)
    metadata = etree.SubElement(root, f"{{{OPF_NS}}}metadata", nsmap={"dc": DC_NS})
    etree.SubElement(metadata, f"{{{DC_NS}}}identifier", id="book-id").text = identifier
    etree.SubElement(metadata, f"{{{DC_NS}}}title").text = xml_text(title) or "Untitled"
    etree.SubElement(metadata, f"{{{DC_NS}}}language").text = language
    etree.SubElement(metadata, f"{{{DC_NS}}}creator").text = xml_text(creator) or "reader"
    if description:
        etree.SubElement(metadata, f"{{{DC_NS}}}description").text = xml_text(description)
    etree.SubElement(metadata, f"{{{DC_NS}}}date").text = modified.strftime("%Y-%m-%dT%H:%M:%SZ")
    etree.SubElement(metadata, f"{{{OPF_NS}}}meta", property="dcterms:modified").text = (
        modified.strftime("%Y-%m-%dT%H:%M:%SZ")
    )

    manifest = etree.SubElement(root, f"{{{OPF_NS}}}manifest")

    def item(item_id: str, href: str, media_type: str, properties: str | None = None) -> None:
        attributes = {"id": item_id, "href": href, "media-type": media_type}
        if properties:
            attributes["properties"] = properties
        etree.SubElement(manifest, f"{{{OPF_NS}}}item", attributes)

    item("nav", "nav.xhtml", "application/xhtml+xml", "nav")
    item("ncx", "toc.ncx", "application/x-dtbncx+xml")
    item("style", "style.css", "text/css")
    item("title-page", "title.xhtml", "application/xhtml+xml")
    for number, chapter in enumerate(chapters, start=1):
        item(f"article-{number}", chapter.href, "application/xhtml+xml")
        for image_number, (href, media_type, _) in enumerate(chapter.images, start=1):
            item(f"image-{number}-{image_number}", href, media_type)

    spine = etree.SubElement(root, f"{{{OPF_NS}}}spine", toc="ncx")
    etree.SubElement(spine, f"{{{OPF_NS}}}itemref", idref="title-page")
    for number in range(1, len(chapters) + 1):
        etree.SubElement(spine, f"{{{OPF_NS}}}itemref", idref=f"article-{number}")
    data: bytes = etree.tostring(root, xml_declaration=True, encoding="utf-8")
    return data


def _container() -> bytes:
    root = etree.Element(f"{{{CONTAINER_NS}}}container", nsmap={None: CONTAINER_NS}, version="1.0")
    rootfiles = etree.SubElement(root, f"{{{CONTAINER_NS}}}rootfiles")
    etree.SubElement(
        rootfiles, f"{{{CONTAINER_NS}}}rootfile", {"full-path": "OEBPS/content.opf", "media-type": "application/oebps-package+xml"}
    )
    data: bytes = etree.tostring(root, xml_declaration=True, encoding="utf-8")
    return data
