"""OPML in and out: move subscriptions from and to other readers.

Reading: every outline with an `xmlUrl` is a feed, wherever it sits; import_opml puts
each in the folder around it (an outline holding outlines; reader.importers reads those).
A file with a DOCTYPE or an ENTITY declaration is refused before it is parsed: OPML never
needs one, and entity expansion ("billion laughs") and external entities are how XML
files attack their readers. The check runs in expat itself (reader/formats/xmlguard.py,
which reads any encoding Python has a codec for, multi-byte ones included), so nothing is
ever expanded.

Writing: export_opml nests each feed in its folder's outlines; build_opml writes one flat
list of `<outline type="rss">` with text, title, xmlUrl and htmlUrl.
"""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from ..errors import Invalid
from ..clean.sanitize import valid_text
from .importers import FeedRecord, ImportFileError, ImportReport, build_opml_folders, parse_opml_folders
from ..store import Store
from ..urls import http_url
from .xmlguard import REFUSED, Declared, Undecodable, read_guarded, utf8_document, xml_chars

MAX_OPML_BYTES = 10_000_000


class OpmlError(Invalid):
    """The file is not an OPML file reader will read; the message says why."""


@dataclass
class OpmlFeed:
    url: str
    title: str = ""
    site_url: str | None = None


@dataclass
class ImportResult:
    added: list[int] = field(default_factory=list)  # ids of feeds newly subscribed
    existing: int = 0  # already subscribed
    skipped: list[str] = field(default_factory=list)  # xmlUrls that are not http(s) URLs

    def summary(self) -> str:
        text = f"{len(self.added)} new feeds, {self.existing} already subscribed"
        if self.skipped:
            text += f", {len(self.skipped)} skipped (not http or https URLs)"
        return text


def _check_no_declarations(data: bytes) -> None:
    """Let the guarded expat read the whole file: any declaration is refused."""
    try:
        read_guarded(data)
    except Declared:
        raise OpmlError(REFUSED) from None
    except expat.ExpatError as exc:
        raise OpmlError(f"not an OPML file (not well-formed XML: {expat.ErrorString(exc.code)},"
                        f" line {exc.lineno})") from None
    except LookupError as exc:  # encoding="x-bogus": expat asks Python for a codec that does not exist
        raise OpmlError(f"not an OPML file (it declares an encoding Python does not know: {exc})") from None
    except Undecodable as exc:
        raise OpmlError(f"not an OPML file reader can read ({exc})") from None


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _attr(element: ET.Element, name: str) -> str:
    """Attribute by name, any case (xmlUrl, xmlURL, xmlurl all appear in the wild)."""
    for key, value in element.attrib.items():
        if _local(key) == name.lower():
            return valid_text(value or "").strip()
    return ""


def _http(url: str) -> bool:
    return http_url(url) is not None


def parse_opml(data: bytes) -> tuple[list[OpmlFeed], list[str]]:
    """The feeds of an OPML file, flattened and deduplicated by URL in file order, and
    the xmlUrls skipped because they are not http(s) URLs. Raises OpmlError."""
    if len(data) > MAX_OPML_BYTES:
        raise OpmlError(f"the file is larger than {MAX_OPML_BYTES // 1_000_000} MB")
    if not data.strip():
        raise OpmlError("not an OPML file (the file is empty)")
    _check_no_declarations(data)
    # ElementTree's expat cannot read a multi-byte encoding either; the check above has
    # decoded this once already, so a second time cannot fail
    data = utf8_document(data)
    try:
        root = ET.fromstring(data)
    except LookupError as exc:
        raise OpmlError(f"not an OPML file (it declares an encoding Python does not know: {exc})") from None
    except ET.ParseError as exc:  # expat accepted it above; kept for safety
        raise OpmlError(f"not an OPML file (not well-formed XML: {exc})") from None
    if _local(root.tag) != "opml":
        raise OpmlError(f"not an OPML file (its root element is <{_local(root.tag)}>, not <opml>)")
    body = next((child for child in root if _local(child.tag) == "body"), None)
    if body is None:
        raise OpmlError("not an OPML file (it has no <body>)")
    feeds: list[OpmlFeed] = []
    seen: set[str] = set()
    skipped: list[str] = []
    for outline in body.iter():
        if _local(outline.tag) != "outline":
            continue
        url = _attr(outline, "xmlUrl")
        if not url:
            continue  # a folder, or a plain outline
        if not _http(url):
            skipped.append(url[:200])
            continue
        if url in seen:
            continue
        seen.add(url)
        site = _attr(outline, "htmlUrl")
        title = (_attr(outline, "title") or _attr(outline, "text"))[:500]
        feeds.append(OpmlFeed(url=url, title="" if title == url else title,  # no name: the feed's own
                              site_url=site if _http(site) else None))
    return feeds, skipped


def build_opml(feeds: list[dict[str, Any]], title: str = "reader subscriptions") -> bytes:
    """An OPML 2.0 document of the feeds (dicts with url, title, site_url)."""
    root = ET.Element("opml", version="2.0")
    head = ET.SubElement(root, "head")
    ET.SubElement(head, "title").text = title
    ET.SubElement(head, "dateCreated").text = datetime.datetime.now(datetime.UTC).strftime(
        "%a, %d %b %Y %H:%M:%S GMT")
    body = ET.SubElement(root, "body")
    for feed in feeds:
        name = xml_chars(feed.get("title") or feed["url"])
        attributes = {"type": "rss", "text": name, "title": name, "xmlUrl": xml_chars(feed["url"])}
        if feed.get("site_url"):
            attributes["htmlUrl"] = xml_chars(feed["site_url"])
        ET.SubElement(body, "outline", attributes)
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


async def import_opml(store: Store, data: bytes) -> ImportResult:
    """Subscribe to every feed in the file (deduplicated by URL), fetching nothing: the
    caller decides whether to refresh the new ones now or leave them to the refresher."""
    feeds, skipped = parse_opml(data)
    result = ImportResult(skipped=skipped)
    folders: dict[str, str | None] = {}
    try:
        folders = {f.url: f.folder_name for f in parse_opml_folders(data, "the file", ImportReport())}
    except ImportFileError:
        pass  # parse_opml took the file, so its feeds come in, only without folders
    for feed_id, created in await store.import_feeds(
        [(f.url, f.title, f.site_url, folders.get(f.url)) for f in feeds]
    ):
        if created:
            result.added.append(feed_id)
        else:
            result.existing += 1
    return result


async def export_opml(store: Store) -> bytes:
    """Every feed, inside outlines for its folder (nested ones were stored joined by " / ")."""
    return build_opml_folders(
        FeedRecord(url=f["url"], title=f["title"], site_url=f["site_url"],
                   folder=tuple(f["folder"].split(" / ")) if f["folder"] else ())
        for f in await store.list_feeds(counts=False))
