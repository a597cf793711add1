"""OPML in and out, with folders: the one reader and the one writer of subscription lists.

Feed readers (Miniflux, FreshRSS, Inoreader, Feedly, NetNewsWire) keep feeds in
categories, written as an outline holding feed outlines (and some old exports as a
`category="/Tech/Python"` attribute instead). Each feed keeps the folder path around it;
a feed listed in two folders is kept once, in the first. `build_opml` writes them back
the same way, so `parse_opml(build_opml(feeds))` gives the same feeds and folders.

The file is read by expat with handlers only (no tree is built), and a DOCTYPE or an
entity declaration is refused before anything is expanded (reader/formats/xmlguard.py).
Nothing here touches the database: reader/core/library.py subscribes to what this reads."""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from xml.parsers import expat

from .xmlguard import REFUSED, Declared, Undecodable, read_guarded, xml_chars
from .importers.base import (
    MAX_FOLDER_DEPTH,
    MAX_TITLE,
    FeedRecord,
    ImportFileError,
    ImportReport,
    http_url,
    one_line,
)
from ..urls import normalize_url

MAX_OPML_BYTES = 10_000_000  # some 50,000 feeds: more than any reader's export

def _get(attrs: dict[str, str], name: str) -> str:
    """An attribute by name in any case (xmlUrl, xmlURL and xmlurl are all in the wild)."""
    value = attrs.get(name)
    if value is None:
        for key, found in attrs.items():
            if key.rsplit(":", 1)[-1].lower() == name.lower():
                value = found
                break
    return (value or "").strip()


def _paused_until(value: str) -> float | None:
    """reader's own pausedUntil attribute (ISO 8601, as export_opml writes it) as a time;
    None when there is none, it cannot be read or it is not in the years a pause can reach
    (the importer leaves a pause that has ended alone)."""
    if not value:
        return None
    try:
        at = datetime.datetime.fromisoformat(value.strip()[:40])
    except ValueError:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=datetime.UTC)
    try:
        stamp = at.timestamp()
    except (OverflowError, OSError, ValueError):
        return None
    return stamp if 0 < stamp < 1e11 else None


def parse_opml(data: bytes, name: str = "the file", report: ImportReport | None = None,
               refused: list[str] | None = None) -> list[FeedRecord]:
    """The feeds of an OPML file with their folders, deduplicated by normalized URL in file
    order; every skipped or merged outline is in the report, and the xmlUrls skipped for
    not being http(s) URLs are added to `refused`. Raises ImportFileError."""
    report = ImportReport() if report is None else report
    if len(data) > MAX_OPML_BYTES:
        raise ImportFileError(f"{name}: not an OPML file reader reads (larger than {MAX_OPML_BYTES // 1_000_000} MB)")
    if not data.strip():
        raise ImportFileError(f"{name}: not an OPML file (the file is empty)")
    feeds: list[FeedRecord] = []
    seen: dict[str, tuple[FeedRecord, int]] = {}
    stack: list[str | None] = []  # one per open outline: a folder's name, None for a feed or nameless
    root: list[str] = []  # the root element's name, once seen
    depth = 0
    bodies = 0  # <body> elements right inside the root
    outlines = 0

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal outlines, depth, bodies
        local = tag.rsplit(":", 1)[-1].lower()
        depth += 1
        if not root:
            root.append(local)
            if local != "opml":
                raise ImportFileError(f"{name}: not an OPML file (its root element is <{local[:40]}>, not <opml>)")
        if local == "body" and depth == 2:
            bodies += 1
        if local != "outline":
            return
        url = _get(attrs, "xmlUrl")
        if not url:
            stack.append(one_line(_get(attrs, "title") or _get(attrs, "text"), MAX_TITLE) or None)
            return
        stack.append(None)
        outlines += 1
        where = f"outline {outlines}"
        report.rows += 1
        good = http_url(url)
        if good is None:
            report.add(where, f"not an http(s) feed URL: {one_line(url, 100)}", kept=False)
            if refused is not None:
                refused.append(one_line(url, 200))
            return
        folder = tuple(f for f in stack if f)[:MAX_FOLDER_DEPTH]
        if not folder and _get(attrs, "category"):
            first = _get(attrs, "category").split(",")[0]
            folder = tuple(one_line(p, MAX_TITLE) for p in first.split("/") if p.strip())[:MAX_FOLDER_DEPTH]
        key = normalize_url(good)
        if key in seen:
            kept, number = seen[key]
            report.merged += 1
            report.add(where, f"the same feed as outline {number}: kept once"
                       + (f", in {kept.folder_name}" if kept.folder else ""), kept=True)
            return
        title = one_line(_get(attrs, "title") or _get(attrs, "text"), MAX_TITLE)
        feed = FeedRecord(url=good, title="" if title == good else title, site_url=http_url(_get(attrs, "htmlUrl")),
                          folder=folder, paused_until=_paused_until(_get(attrs, "pausedUntil")))
        seen[key] = (feed, outlines)
        feeds.append(feed)

    def end(tag: str) -> None:
        nonlocal depth
        depth -= 1
        if tag.rsplit(":", 1)[-1].lower() == "outline" and stack:
            stack.pop()

    try:
        read_guarded(data, start, end)
    except Declared:
        raise ImportFileError(f"{name}: {REFUSED}") from None
    except expat.ExpatError as exc:
        raise ImportFileError(f"{name}: not an OPML file (its XML breaks at line {exc.lineno}, column"
                              f" {exc.offset + 1}: {_xml_fault(exc.code)})") from None
    except LookupError as exc:  # an encoding declaration Python has no codec for
        raise ImportFileError(f"{name}: not an OPML file reader can read ({exc})") from None
    except Undecodable as exc:
        raise ImportFileError(f"{name}: not an OPML file reader can read ({exc})") from None
    except RecursionError:
        raise ImportFileError(f"{name}: XML nested too deeply to be an OPML file") from None
    if not bodies:
        raise ImportFileError(f"{name}: not an OPML file (it has no <body>)")
    return feeds


# What expat's messages mean, for a person who exported a file from another app and has
# never seen "not well-formed (invalid token)"; any other fault keeps expat's own words.
_XML_FAULTS: dict[str, str] = {  # keyed by expat's message (what expat.errors names)
    expat.errors.XML_ERROR_SYNTAX: "text that is not XML (an OPML file begins with <?xml or <opml>)",
    expat.errors.XML_ERROR_NO_ELEMENTS: "the file ends before its first element: empty or cut short",
    expat.errors.XML_ERROR_INVALID_TOKEN: "a character XML does not allow there, such as a bare & or <,"
                                          " or text that is not XML at all",
    expat.errors.XML_ERROR_UNCLOSED_TOKEN: "the file ends in the middle of a tag: it was cut short",
    expat.errors.XML_ERROR_PARTIAL_CHAR: "the file ends in the middle of a character: it was cut short",
    expat.errors.XML_ERROR_TAG_MISMATCH: "a tag is closed that was not the last one opened",
    expat.errors.XML_ERROR_DUPLICATE_ATTRIBUTE: "an element names the same attribute twice",
    expat.errors.XML_ERROR_JUNK_AFTER_DOC_ELEMENT: "more text after the end of the document",
    expat.errors.XML_ERROR_UNDEFINED_ENTITY: "an &name; that XML does not define (HTML's &nbsp; is one)",
    expat.errors.XML_ERROR_BAD_CHAR_REF: "a &#number; that is not a character",
    expat.errors.XML_ERROR_UNCLOSED_CDATA_SECTION: "a CDATA section that never ends",
    expat.errors.XML_ERROR_MISPLACED_XML_PI: "the <?xml ...?> declaration is not at the very start",
    expat.errors.XML_ERROR_XML_DECL: "the <?xml ...?> declaration is malformed",
    expat.errors.XML_ERROR_UNBOUND_PREFIX: "a name uses a prefix (like x:outline) the file never declares",
}


def _xml_fault(code: int) -> str:
    said = expat.ErrorString(code) or "a fault in the XML"
    return _XML_FAULTS.get(said, said)


def build_opml(feeds: Iterable[FeedRecord], title: str = "reader subscriptions") -> bytes:
    """An OPML 2.0 document with each feed inside its folder outlines, nested as deep as its
    folder path, the folders in the order their first feed came; feeds outside any folder
    sit at the top. parse_opml of it gives the same feeds and folders."""
    root = ET.Element("opml", version="2.0")
    head = ET.SubElement(root, "head")
    ET.SubElement(head, "title").text = title
    ET.SubElement(head, "dateCreated").text = datetime.datetime.now(datetime.UTC).strftime(
        "%a, %d %b %Y %H:%M:%S GMT")
    body = ET.SubElement(root, "body")
    folders: dict[tuple[str, ...], ET.Element] = {(): body}
    for feed in feeds:
        path = feed.folder[:MAX_FOLDER_DEPTH]
        for depth in range(1, len(path) + 1):
            if path[:depth] not in folders:
                folder = xml_chars(path[depth - 1])
                folders[path[:depth]] = ET.SubElement(folders[path[:depth - 1]], "outline",
                                                      {"text": folder, "title": folder})
        name = xml_chars(feed.title or feed.url)
        attributes = {"type": "rss", "text": name, "title": name, "xmlUrl": xml_chars(feed.url)}
        if feed.site_url:
            attributes["htmlUrl"] = xml_chars(feed.site_url)
        if feed.paused_until is not None:  # reader's own attribute: other readers ignore it
            attributes["pausedUntil"] = datetime.datetime.fromtimestamp(feed.paused_until, datetime.UTC).isoformat()
        ET.SubElement(folders[path], "outline", attributes)
    ET.indent(root)
    written: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return written + b"\n"
