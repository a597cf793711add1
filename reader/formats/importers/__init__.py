"""Move in from anywhere: read the library files other apps export.

    parse_file(data, name) -> ParsedImport      every format below, told apart by content
    plan_file(data, name) -> ParsedImport       the same, links left in the file: then
    count_links(plan, limit), stream_links(plan, flush, batch, limit)   read them in batches
    detect_format(data, name) -> str            just the format's key
    normalize_url(url) -> str                   what duplicate links share
    build_bookmarks_html(links) -> bytes        Netscape bookmark HTML, with folders and tags

OPML (read and written with its folders) is reader/formats/opml.py; parse_file reads it
through there like any other format.

The file's name is used only in messages: a renamed file is read the same. Nothing here
touches the database or the network; the store takes the records from here. Every way a
file can be wrong ends in ImportFileError (the whole file) or an Issue in the report (one
row, the rest comes in)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .archives import Archive, parse_omnivore_zip, parse_pocket_zip, zip_kind
from .base import (
    Collector,
    Counter,
    FeedRecord,
    Full,
    Streamer,
    ImportFileError,
    ImportReport,
    Issue,
    LinkRecord,
    Note,
    ParsedImport,
    decode,
)
from .csvfiles import csv_kind, header_of, parse_instapaper_csv, parse_pocket_csv, refuse_columns
from .htmlfiles import build_bookmarks_html, parse_netscape, parse_pocket_html
from .bookmarkjson import parse_chrome, parse_delicious, parse_firefox, parse_pinboard
from .jsonfiles import json_kind, load_json, parse_omnivore_metadata, parse_wallabag, parse_wallabag_v1
from ...urls import normalize_url

__all__ = [
    "FORMATS", "FeedRecord", "ImportFileError", "ImportReport", "Issue", "LinkRecord", "Note", "ParsedImport",
    "build_bookmarks_html", "count_links", "detect_format", "normalize_url", "parse_file",
    "plan_file", "stream_links",
]

FORMATS: dict[str, str] = {
    "pocket-csv": "Pocket's CSV export (title,url,time_added,tags,status), or its ZIP of part_*.csv files",
    "pocket-html": "Pocket's older HTML export (ril_export.html)",
    "instapaper-csv": "Instapaper's CSV export (URL,Title,Selection,Folder,Timestamp)",
    "omnivore": "Omnivore's export ZIP (metadata_*.json, content/, highlights/) or one of its metadata_*.json files",
    "wallabag": "wallabag's JSON export",
    "wallabag-v1": "wallabag v1's JSON export",
    "chrome": "Chrome's, Edge's or Brave's bookmarks file (Bookmarks, JSON)",
    "firefox": "Firefox's bookmark backup (.json: Manage bookmarks → Import and Backup → Backup…)",
    "pinboard": "Pinboard's JSON export",
    "delicious": "Delicious' JSON export",
    "netscape": "a bookmark file (Netscape bookmark HTML from Firefox, Chrome, Safari, Raindrop, Pinboard,"
                " Karakeep, Linkding...)",
    "opml": "an OPML list of feeds, with its folders (Miniflux, FreshRSS, Inoreader, Feedly, NetNewsWire...)",
    "reader": "reader's own export (articles.json, or a one-file .json export)",
}

MAX_FILE_BYTES = 250_000_000  # the web form's body limit is lower; this guards the CLI
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_MOZLZ4 = b"mozLz40\x00"  # Firefox's LZ4 with a header of its own
_NETSCAPE = re.compile(r"<!DOCTYPE\s+NETSCAPE-Bookmark-file", re.IGNORECASE)
_DT_LINK = re.compile(r"<dt>\s*<(a|h3)\b", re.IGNORECASE)
_POCKET_HTML = re.compile(r"<h1>\s*(unread|read archive)\s*</h1>|<a\b[^>]*\btime_added\s*=", re.IGNORECASE)
_OPML = re.compile(r"<opml\b", re.IGNORECASE)


def _unknown(name: str, what: str) -> ImportFileError:
    return ImportFileError(f"{name}: {what}, not a format reader can import. It reads: "
                           + "; ".join(FORMATS.values()) + ".")


def _sniff(data: bytes, name: str) -> tuple[str, Archive | tuple[Any, str | None]]:
    """(format, what was already decoded on the way: an Archive, a JSON document, text)."""
    if len(data) > MAX_FILE_BYTES:
        raise ImportFileError(f"{name}: larger than {MAX_FILE_BYTES // 1_000_000} MB, more than an export would be")
    if not data.strip():
        raise ImportFileError(f"{name}: the file is empty")
    if data.startswith(_MOZLZ4):
        raise ImportFileError(f"{name}: one of Firefox's compressed automatic backups (.jsonlz4), which reader does"
                              " not unpack: in Firefox, Bookmarks → Manage bookmarks → Import and Backup → Backup…"
                              " writes the same as .json, and Export Bookmarks to HTML works too")
    if data.startswith(_ZIP_MAGIC):
        archive = Archive(data, name)
        kind = zip_kind(archive)
        if kind is None:
            shown = ", ".join(archive.names()[:5]) or "nothing"
            raise _unknown(name, f"a ZIP holding {shown}")
        return kind, archive
    text, note = decode(data)
    head = text.lstrip()[:1]
    if head in ("{", "["):
        document = load_json(text, name)
        if document == []:
            raise ImportFileError(f"{name}: an empty JSON list: nothing to import")
        kind = json_kind(document)
        if kind is None:
            raise _unknown(name, "a JSON file of another shape")
        return kind, (document, note)
    if head == "<":
        start = text[:200_000]
        if _NETSCAPE.search(start):
            return "netscape", (text, note)
        if _OPML.search(start):
            return "opml", (data, None)  # expat reads the encoding the file declares
        if _POCKET_HTML.search(start):
            return "pocket-html", (text, note)
        if _DT_LINK.search(start):
            return "netscape", (text, note)
        raise _unknown(name, "an HTML or XML file of another kind")
    header = header_of(text)
    kind = csv_kind(header)
    if kind is not None:
        return f"{kind}-csv", (text, note)
    if len(header) > 1:
        raise refuse_columns(name, header)
    raise _unknown(name, "a file of another kind")


def detect_format(data: bytes, name: str = "file") -> str:
    """The key in FORMATS of what the bytes hold; ImportFileError, listing the formats
    understood, for anything else."""
    return _sniff(data, name)[0]


def parse_file(data: bytes, name: str = "file") -> ParsedImport:
    """Everything one file holds: links or feeds, merged by normalized URL within the file,
    and the report of what was skipped or changed and why. Raises only ImportFileError."""
    result = plan_file(data, name)
    if result.source is not None:
        collector = Collector(result.report)
        _read_links(result.source, collector)
        result.links, result.source = collector.links, None
    return result


def plan_file(data: bytes, name: str = "file") -> ParsedImport:
    """What parse_file gives, with the links still in the file: `source` holds what was
    sniffed, for count_links and stream_links (None when the file holds no links: OPML,
    reader's own export). Raises only ImportFileError."""
    kind, found = _sniff(data, name)
    result = ParsedImport(format=kind, name=name)
    if isinstance(found, Archive):
        result.source = (kind, found)
        return result
    content, note = found
    if note:
        result.report.notes.append(note)
    if kind == "reader":
        result.native = data
    elif kind == "opml":
        # here, not at the top: reader.formats.opml takes its records from .base, and
        # importing that runs this package first
        from ..opml import parse_opml

        result.feeds = parse_opml(content, name, result.report, result.refused_feeds)
    else:
        result.source = (kind, content)
    return result


def count_links(plan: ParsedImport, limit: int) -> int:
    """The links (distinct) stream_links will hand on, at most `limit` + 1 (past the cap,
    counting stops). Reads the whole file, so a file refused (ImportFileError) is refused
    before anything of it is stored."""
    counter = Counter(ImportReport(), limit)
    try:
        _read_links(plan.source, counter)
    except Full:
        return limit + 1
    return len(counter.keys)


def stream_links(plan: ParsedImport, flush: Callable[[list[LinkRecord], int], None], batch: int,
                 limit: int, stored: Mapping[str, int]) -> bool:
    """Read the links of a planned file, calling `flush(links, held)` with each batch as it
    fills (see Streamer; `stored` the store's keys of saved links), the report written
    into the plan's. Stops after `limit` links: True if it did (links were left out).
    Whatever flush raises ends the reading there and passes through."""
    streamer = Streamer(plan.report, flush, batch, limit, stored)
    try:
        _read_links(plan.source, streamer)
    except Full:
        streamer.hand_on()
        return True
    streamer.hand_on()
    return False


def _read_links(source: tuple[str, Any], collector: Collector) -> None:
    kind, content = source
    if isinstance(content, Archive):
        content.budget = content.allowed  # each reading of the ZIP has the whole budget
        if kind == "omnivore":
            parse_omnivore_zip(content, collector)
        else:
            parse_pocket_zip(content, collector)
        return
    parsers: dict[str, Callable[[Any, Collector], None]] = {
        "wallabag": parse_wallabag,
        "wallabag-v1": parse_wallabag_v1,
        "chrome": parse_chrome,
        "firefox": parse_firefox,
        "pinboard": parse_pinboard,
        "delicious": parse_delicious,
        "omnivore": parse_omnivore_metadata,
        "pocket-csv": parse_pocket_csv,
        "instapaper-csv": parse_instapaper_csv,
        "netscape": parse_netscape,
        "pocket-html": parse_pocket_html,
    }
    parsers[kind](content, collector)
