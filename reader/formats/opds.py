"""An OPDS 1.2 acquisition feed (Atom): what KOReader, Thorium and other e-reader apps
browse to download books straight from reader."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from lxml import etree

from .xhtml import xml_text

ATOM_NS = "http://www.w3.org/2005/Atom"
OPDS_NS = "http://opds-spec.org/2010/catalog"
DC_NS = "http://purl.org/dc/terms/"
ACQUISITION_TYPE = "application/atom+xml;profile=opds-catalog;kind=acquisition"
EPUB_TYPE = "application/epub+zip"


@dataclass(frozen=True)
class CatalogEntry:
    id: str  # a URI that stays the same for the same article (or edition)
    title: str
    updated: datetime
    href: str  # where the EPUB is downloaded
    author: str | None = None
    summary: str | None = None
    published: datetime | None = None
    language: str | None = None


def _when(value: datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _atom(parent: etree._Element, tag: str, text: str | None = None, **attributes: str) -> etree._Element:
    element = etree.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attributes)
    if text is not None:
        element.text = xml_text(text)
    return element


def build_opds(
    articles: Sequence[CatalogEntry],
    *,
    edition: CatalogEntry | None,
    feed_id: str,
    title: str,
    updated: datetime,
    self_href: str,
    start_href: str | None = None,
    author: str = "reader",
) -> bytes:
    """The catalog: the edition first (when there is one), then each article, each with
    an acquisition link to its EPUB. Every Atom-required element is there (id, title,
    updated, author on the feed; id, title, updated on each entry)."""
    root = etree.Element(f"{{{ATOM_NS}}}feed", nsmap={None: ATOM_NS, "opds": OPDS_NS, "dc": DC_NS})
    _atom(root, "id", feed_id)
    _atom(root, "title", title)
    _atom(root, "updated", _when(updated))
    _atom(_atom(root, "author"), "name", author)
    _atom(root, "link", rel="self", href=self_href, type=ACQUISITION_TYPE)
    _atom(root, "link", rel="start", href=start_href or self_href, type=ACQUISITION_TYPE)
    for entry in ([edition] if edition is not None else []) + list(articles):
        element = _atom(root, "entry")
        _atom(element, "title", entry.title or "Untitled")
        _atom(element, "id", entry.id)
        _atom(element, "updated", _when(entry.updated))
        if entry.published is not None:
            _atom(element, "published", _when(entry.published))
        if entry.author:
            _atom(_atom(element, "author"), "name", entry.author)
        if entry.language:
            etree.SubElement(element, f"{{{DC_NS}}}language").text = xml_text(entry.language)
        if entry.summary:
            _atom(element, "summary", entry.summary, type="text")
        _atom(element, "link", rel="http://opds-spec.org/acquisition", href=entry.href, type=EPUB_TYPE)
    data: bytes = etree.tostring(root, xml_declaration=True, encoding="utf-8")
    return data
