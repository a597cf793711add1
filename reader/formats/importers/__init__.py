"""Move in from anywhere: read the library files other apps export.

    parse_file(data, name) -> ParsedImport      every format below, told apart by content
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
from collections.abc import Callable
from typing import Any

from .archives import Archive, parse_omnivore_zip, parse_pocket_zip, zip_kind
from .base import (
    Collector,
    FeedRecord,
    ImportFileError,
    ImportReport,
    Issue,
    LinkRecord,
    Note,
    ParsedImport,
    decode,
)
from ...urls import normalize_url
from .csvfiles import csv_kind, header_of, parse_instapaper_csv, parse_pocket_csv, refuse_columns
from .htmlfiles import build_bookmarks_html, parse_netscape, parse_pocket_html
from .jsonfiles import json_kind, load_json, parse_omnivore_metadata, parse_wallabag

__all__ = [
    "FORMATS", "FeedRecord", "ImportFileError", "ImportReport", "Issue", "LinkRecord", "Note", "ParsedImport",
    "build_bookmarks_html", "detect_format", "normalize_url", "parse_file",
]

FORMATS: dict[str, str] = {
    "pocket-csv": "Pocket's CSV export (title,url,time_added,tags,status), or its ZIP of part_*.csv files",
    "pocket-html": "Pocket's older HTML export (ril_export.html)",
    "instapaper-csv": "Instapaper's CSV export (URL,Title,Selection,Folder,Timestamp)",
    "omnivore": "Omnivore's export ZIP (metadata_*.json, content/, highlights/) or one of its metadata_*.json files",
    "wallabag": "wallabag's JSON export",
    "netscape": "a bookmark file (Netscape bookmark HTML from Firefox, Chrome, Safari, Raindrop, Pinboard,"
                " Karakeep, Linkding...)",
    "opml": "an OPML list of feeds, with its folders (Miniflux, FreshRSS, Inoreader, Feedly, NetNewsWire...)",
    "reader": "reader's own export (articles.json, or a one-file .json export)",
}

MAX_FILE_BYTES = 250_000_000  # the web form's body limit is lower; this guards the CLI
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
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
    kind, found = _sniff(data, name)
    result = ParsedImport(format=kind, name=name)
    report = result.report
    collector = Collector(report)
    if isinstance(found, Archive):
        if kind == "omnivore":
            parse_omnivore_zip(found, collector)
        else:
            parse_pocket_zip(found, collector)
    else:
        content, note = found
        if note:
            report.notes.append(note)
        if kind == "reader":
            result.native = data
            return result
        if kind == "opml":
            # here, not at the top: reader.formats.opml takes its records from .base, and
            # importing that runs this package first
            from ..opml import parse_opml

            result.feeds = parse_opml(content, name, report, result.refused_feeds)
            return result
        parsers: dict[str, Callable[[Any, Collector], None]] = {
            "wallabag": parse_wallabag,
            "omnivore": parse_omnivore_metadata,
            "pocket-csv": parse_pocket_csv,
            "instapaper-csv": parse_instapaper_csv,
            "netscape": parse_netscape,
            "pocket-html": parse_pocket_html,
        }
        parsers[kind](content, collector)
    result.links = collector.links
    return result
