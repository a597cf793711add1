"""OPML with folders: read nested outlines as folders and write them back the same way.

reader/opml.py reads OPML flat; feed readers (Miniflux, FreshRSS, Inoreader, Feedly,
NetNewsWire) keep feeds in categories, written as an outline holding feed outlines (and
some old exports as a `category="/Tech/Python"` attribute instead). Each feed keeps the
folder path around it. A feed listed in two folders is kept once, in the first.

The file is read by expat with handlers only (no tree is built), and a DOCTYPE or an
entity declaration is refused before anything is expanded, as reader/opml.py does."""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from xml.parsers import expat

from ..xmlguard import REFUSED, Declared, Undecodable, read_guarded, xml_chars
from .base import (
    MAX_FOLDER_DEPTH,
    MAX_TITLE,
    FeedRecord,
    ImportFileError,
    ImportReport,
    http_url,
    normalize_url,
    one_line,
)

def _get(attrs: dict[str, str], name: str) -> str:
    """An attribute by name in any case (xmlUrl, xmlURL and xmlurl are all in the wild)."""
    value = attrs.get(name)
    if value is None:
        for key, found in attrs.items():
            if key.rsplit(":", 1)[-1].lower() == name.lower():
                value = found
                break
    return (value or "").strip()


def parse_opml_folders(data: bytes, name: str, report: ImportReport) -> list[FeedRecord]:
    """The feeds of an OPML file with their folders, deduplicated by normalized URL in file
    order; every skipped or merged outline is in the report. Raises ImportFileError."""
    feeds: list[FeedRecord] = []
    seen: dict[str, tuple[FeedRecord, int]] = {}
    stack: list[str | None] = []  # one per open outline: a folder's name, None for a feed or nameless
    root: list[str] = []  # the root element's name, once seen
    outlines = 0

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal outlines
        local = tag.rsplit(":", 1)[-1].lower()
        if not root:
            root.append(local)
            if local != "opml":
                raise ImportFileError(f"{name}: not an OPML file (its root element is <{local[:40]}>, not <opml>)")
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
                          folder=folder)
        seen[key] = (feed, outlines)
        feeds.append(feed)

    def end(tag: str) -> None:
        if tag.rsplit(":", 1)[-1].lower() == "outline" and stack:
            stack.pop()

    try:
        read_guarded(data, start, end)
    except Declared:
        raise ImportFileError(f"{name}: {REFUSED}") from None
    except expat.ExpatError as exc:
        raise ImportFileError(f"{name}: not an OPML file (not well-formed XML: {expat.ErrorString(exc.code)},"
                              f" line {exc.lineno})") from None
    except LookupError as exc:  # an encoding declaration Python has no codec for
        raise ImportFileError(f"{name}: not an OPML file reader can read ({exc})") from None
    except Undecodable as exc:
        raise ImportFileError(f"{name}: not an OPML file reader can read ({exc})") from None
    except RecursionError:
        raise ImportFileError(f"{name}: XML nested too deeply to be an OPML file") from None
    return feeds


def build_opml_folders(feeds: Iterable[FeedRecord], title: str = "reader subscriptions") -> bytes:
    """An OPML 2.0 document with each feed inside its folder outlines, nested as deep as its
    folder path, the folders in the order their first feed came; feeds outside any folder
    sit at the top. parse_opml_folders of it gives the same feeds and folders."""
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
        ET.SubElement(folders[path], "outline", attributes)
    ET.indent(root)
    written: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return written + b"\n"
