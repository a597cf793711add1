"""The records every importer produces, the report that goes with them, and the checks
they share: URLs, dates, text decoding and the caps that keep hostile files harmless.

Nothing here touches the database: the store takes `LinkRecord`s and `FeedRecord`s
later and decides what is new and what is already there."""

from __future__ import annotations

import datetime
import email.utils
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...errors import Invalid
from ...clean.sanitize import clean_html, valid_text
from ...urls import normalize_url, normalized_parts

# Caps. A real export never comes near them; a hostile one is cut down to size instead of
# filling the database (or memory) with megabyte titles and a million tags.
MAX_URL = 4096
MAX_TITLE = 500
MAX_AUTHOR = 500
MAX_SUMMARY = 10_000
MAX_TAG = 100
MAX_TAGS = 100  # per link
MAX_NOTE = 20_000  # characters of one highlight or comment
MAX_NOTES = 500  # per link
MAX_CONTENT = 5_000_000  # bytes of saved HTML per article, as READER_MAX_PAGE_BYTES
MAX_FOLDER_DEPTH = 32
MAX_ISSUES = 10_000  # kept in the report; the rest are counted
# Dates outside this window are typos or garbage (a year 30000, a negative time).
_EARLIEST = datetime.datetime(1971, 1, 1, tzinfo=datetime.UTC).timestamp()
_LATEST = datetime.datetime(2200, 1, 1, tzinfo=datetime.UTC).timestamp()


class ImportFileError(Invalid):
    """A file that cannot be imported at all; the message says why and names the file.
    The only exception the importers raise."""


@dataclass(slots=True)
class Note:
    """A highlight or an annotation: the quoted text, the reader's own comment on it.
    `highlight`: the text is a quote of the article (Omnivore's, wallabag's), which
    becomes a highlight placed in the article's text; else it stays a note (Instapaper's
    selection, Pocket's, a note on the whole article)."""

    text: str
    comment: str | None = None
    created_at: float | None = None  # epoch seconds
    highlight: bool = False
    prefix: str = ""  # the quote's context, where the file keeps it
    suffix: str = ""


@dataclass(slots=True)
class LinkRecord:
    """One saved link as a read-later service or a browser knew it."""

    url: str  # http(s), as given in the file (stripped)
    title: str = ""  # plain text, "" when the file had none
    tags: set[str] = field(default_factory=set)
    added_at: float | None = None  # epoch seconds the person saved it; keeps the library's order
    read: bool = False  # read or archived
    starred: bool = False
    author: str | None = None
    published: float | None = None  # epoch seconds
    summary: str | None = None  # plain text: an excerpt or description the service kept
    content_html: str | None = None  # the saved article, already through reader.sanitize.clean_html
    notes: list[Note] = field(default_factory=list)
    folder: tuple[str, ...] = ()  # bookmark folders, outermost first (their names are in tags too)
    key: str = field(default="", compare=False)  # normalize_url(url): what duplicates share

    def __post_init__(self) -> None:
        if not self.key:
            self.key = normalize_url(self.url)

    def merge(self, other: LinkRecord) -> None:
        """Take in a duplicate of this link, keeping the richer of the two."""
        self.tags |= other.tags
        self.read = self.read or other.read
        self.starred = self.starred or other.starred
        if other.added_at is not None and (self.added_at is None or other.added_at < self.added_at):
            self.added_at = other.added_at
        if not self.title:
            self.title = other.title
        self.author = self.author or other.author
        if self.published is None:
            self.published = other.published
        self.summary = self.summary or other.summary
        if other.content_html and len(other.content_html) > len(self.content_html or ""):
            self.content_html = other.content_html
        seen = {(n.text, n.comment) for n in self.notes}
        for note in other.notes:
            if (note.text, note.comment) not in seen and len(self.notes) < MAX_NOTES:
                seen.add((note.text, note.comment))
                self.notes.append(note)
        if not self.folder:
            self.folder = other.folder


@dataclass(slots=True)
class FeedRecord:
    """One subscription from a feed reader's OPML."""

    url: str
    title: str = ""  # "" when the file gave no name (the feed's own is used)
    site_url: str | None = None
    folder: tuple[str, ...] = ()  # the folder outlines around it, outermost first
    paused_until: float | None = None  # reader's own: hidden until then (written as pausedUntil)

    @property
    def folder_name(self) -> str | None:
        """The folder as one name, nested folders joined by " / "."""
        return " / ".join(self.folder) or None


@dataclass(frozen=True, slots=True)
class Issue:
    """Something the report tells the person about one row of the file."""

    where: str  # "row 12", "part_000001.csv row 3", "entry 5", "line 40"
    reason: str
    kept: bool  # True: the row came in anyway (a bad date dropped, a duplicate merged)


@dataclass(slots=True)
class ImportReport:
    """What became of each row: `rows` read = links or feeds in the result + `merged` +
    `skipped_rows` (Pocket highlights on a link the list lacked add a row of their own)."""

    rows: int = 0  # links or feeds read from the file, good or bad
    merged: int = 0  # duplicate rows merged into an earlier one
    skipped_rows: int = 0  # rows left out, each with an Issue saying why
    issues: list[Issue] = field(default_factory=list)
    issues_not_listed: int = 0  # issues past MAX_ISSUES, counted only
    notes: list[str] = field(default_factory=list)  # about the file as a whole

    @property
    def skipped(self) -> list[Issue]:
        return [i for i in self.issues if not i.kept]

    def add(self, where: str, reason: str, kept: bool, row: bool = True) -> None:
        """Write down an issue; `row=False` for one about a whole part of the file."""
        if row and not kept:
            self.skipped_rows += 1
        if len(self.issues) < MAX_ISSUES:
            self.issues.append(Issue(where, reason, kept))
        else:
            self.issues_not_listed += 1


@dataclass(slots=True)
class ParsedImport:
    """What one file holds, ready for the store; `native` is reader's own export, handed
    back untouched for reader/core/exports.py to import."""

    format: str  # a key of FORMATS
    name: str
    links: list[LinkRecord] = field(default_factory=list)
    feeds: list[FeedRecord] = field(default_factory=list)
    report: ImportReport = field(default_factory=ImportReport)
    native: bytes | None = None
    refused_feeds: list[str] = field(default_factory=list)  # OPML xmlUrls that are not http(s), as given
    # What plan_file sniffed, for count_links and stream_links to read: (format, content)
    source: Any = None


# -- URLs (one normal form for all of reader: ..urls.normalize_url) ------------------------

def checked_url(value: Any) -> tuple[str, str] | None:
    """(the URL stripped, its normalized form) if it is an http(s) URL with a host, else None.
    One parse for both: this runs once per row."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    try:
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            return None
        return url, normalized_parts(parts)
    except ValueError:
        return None


def http_url(value: Any) -> str | None:
    """The URL if it is an http(s) URL with a host, else None."""
    checked = checked_url(value)
    return checked[0] if checked else None


# -- dates --------------------------------------------------------------------------------


class BadDate(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Ticks:
    """A time written as a count of fixed units since a fixed moment, as browsers write it
    (Firefox: microseconds since 1970; Chrome: microseconds since 1601). parse_time reads
    it as exactly that: a bare number it would guess at (seconds? milliseconds?), and a
    Chrome time read as Unix microseconds lands in the wrong century. Shown as written."""

    value: Any
    per_second: float = 1e6
    since: float = 0.0  # epoch seconds of the count's zero

    def __str__(self) -> str:
        return str(self.value)

    def seconds(self) -> float | None:
        value = self.value
        if value is None:
            return None
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return None
            try:
                number: int | float = int(text)
            except ValueError:
                raise BadDate(text[:64]) from None
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            number = value
        else:
            raise BadDate(type(value).__name__)
        if number == 0:
            return None
        try:
            stamp = self.since + number / self.per_second
        except OverflowError:  # an integer of 400 digits
            raise BadDate(str(value)[:64]) from None
        if not _EARLIEST <= stamp <= _LATEST:  # also NaN
            raise BadDate(str(value)[:64])
        return stamp


def parse_time(value: Any) -> float | None:
    """Epoch seconds from what exports write: unix seconds (or milli- or microseconds), as a
    number or a string, ISO 8601 with or without a zone (none means UTC), RFC 2822, or
    Ticks (a count in a unit and from a zero the format fixes).
    None for nothing at all (empty, 0); BadDate for anything else."""
    if value is None:
        return None
    if isinstance(value, Ticks):
        return value.seconds()
    if isinstance(value, bool):
        raise BadDate(repr(value))
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # a JSON integer with 400 digits
            raise BadDate(str(value)[:64]) from None
    elif isinstance(value, str):
        text = value.strip()
        if not text or text in ("0", "null", "None"):
            return None
        try:
            number = float(text)
        except ValueError:
            return _parse_time_text(text)
    else:
        raise BadDate(type(value).__name__)
    if number != number or number in (float("inf"), float("-inf")):
        raise BadDate(str(value))
    if number == 0:
        return None
    if abs(number) > 1e14:
        number /= 1e6
    elif abs(number) > 1e11:
        number /= 1e3
    if not _EARLIEST <= number <= _LATEST:
        raise BadDate(str(value))
    return number


def _parse_time_text(text: str) -> float:
    if len(text) > 64:
        raise BadDate(text[:64] + "…")
    try:
        moment = datetime.datetime.fromisoformat(text.replace(" UTC", "+00:00"))
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            raise BadDate(text) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    try:
        stamp = moment.timestamp()
    except (OverflowError, ValueError, OSError):
        raise BadDate(text) from None
    if not _EARLIEST <= stamp <= _LATEST:
        raise BadDate(text)
    return stamp


# -- text ---------------------------------------------------------------------------------


def decode(data: bytes) -> tuple[str, str | None]:
    """Text of a file and, when it was not UTF-8, a note saying how it was read. A UTF-8 or
    UTF-16 byte order mark is honoured and dropped; bytes that are not UTF-8 are read as
    Windows-1252 (what spreadsheet programs write), and failing that as Latin-1, which
    never fails. NUL characters are dropped: no format uses them."""
    note = None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
        note = "read as UTF-16 (it starts with a UTF-16 byte order mark)"
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            try:
                text = data.decode("cp1252")
                note = "not UTF-8: read as Windows-1252"
            except UnicodeDecodeError:
                text = data.decode("latin-1")
                note = "not UTF-8: read as Latin-1"
    text = text.lstrip("\ufeff")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text, note


def one_line(value: Any, limit: int) -> str:
    """Text on one line (titles, tags, names): spaces folded, capped, a lone surrogate (JSON
    can spell one) replaced as the API replaces it. Exports hold these as text, not HTML
    ("a <b> tag" is a title about a tag), so nothing is unescaped or stripped here; they
    are escaped wherever they are shown."""
    if not isinstance(value, str) or not value:
        return ""
    return " ".join(valid_text(value[: limit * 4]).split())[:limit]


def long_text(value: Any, limit: int) -> str | None:
    """Text kept as written (notes, comments): line breaks kept, ends trimmed, capped, a
    lone surrogate replaced."""
    if not isinstance(value, str):
        return None
    value = valid_text(value.strip()[:limit])
    return value or None


def tag_set(values: Iterable[Any]) -> set[str]:
    tags: set[str] = set()
    for value in values:
        tag = one_line(value, MAX_TAG)
        if tag:
            tags.add(tag)
            if len(tags) >= MAX_TAGS:
                break
    return tags


_TAGS = re.compile(r"<[^>]*>")


def sanitized(content: Any, base_url: str) -> str | None:
    """Saved article HTML through the one cleaner; None if nothing readable is left."""
    if not isinstance(content, str) or not content.strip():
        return None
    cleaned = clean_html(content, base_url=base_url)
    # The cleaner's output is well-formed, so a regex sees its text; a second nh3 pass
    # (plain_text) would double the cost of the biggest part of an import.
    return cleaned if _TAGS.sub("", cleaned).strip() or "<img" in cleaned else None


# -- collecting ---------------------------------------------------------------------------


class Collector:
    """Gathers one file's links: checks each row, merges duplicates by normalized URL, and
    writes down in the report every row skipped or changed, and why."""

    keep_content = True  # a counting pass leaves the saved texts unsanitized (the costly part)

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.links: list[LinkRecord] = []
        self._by_key: dict[str, tuple[LinkRecord, str]] = {}

    def link(self, where: str, url: Any, *, title: Any = "", tags: Iterable[Any] = (),
             added_at: Any = None, read: bool = False, starred: bool = False, author: Any = None,
             published: Any = None, summary: Any = None, content_html: Any = None,
             notes: Iterable[Note] = (), folder: tuple[str, ...] = ()) -> LinkRecord | None:
        report = self.report
        report.rows += 1
        checked = self.check_url(where, url)
        if checked is None:
            return None
        good, key = checked
        record = LinkRecord(
            url=good, key=key, title=one_line(title, MAX_TITLE), tags=tag_set(tags),
            added_at=self.time(where, added_at, "the time added"), read=bool(read), starred=bool(starred),
            author=one_line(author, MAX_AUTHOR) or None, published=self.time(where, published, "the date published"),
            summary=long_text(summary, MAX_SUMMARY), notes=list(notes)[:MAX_NOTES], folder=folder[:MAX_FOLDER_DEPTH],
        )
        if record.title == good:
            record.title = ""  # no name: the page's own is used once it is cleaned
        if content_html and self.keep_content:
            if len(content_html) > MAX_CONTENT:
                report.add(where, f"saved content larger than {MAX_CONTENT // 1_000_000} MB: left out"
                           " (the page can still be cleaned from the web)", kept=True)
            else:
                record.content_html = sanitized(content_html, good)
        return self.add(where, record)

    def add(self, where: str, record: LinkRecord) -> LinkRecord:
        earlier = self._by_key.get(record.key)
        if earlier is not None:
            first, first_where = earlier
            first.merge(record)
            self.report.merged += 1
            self.report.add(where, f"the same link as {first_where}: merged into it", kept=True)
            return first
        self._by_key[record.key] = (record, where)
        self.links.append(record)
        return record

    def find(self, url: str) -> LinkRecord | None:
        try:
            found = self._by_key.get(normalize_url(url))
        except ValueError:
            return None
        return found[0] if found else None

    def check_url(self, where: str, url: Any) -> tuple[str, str] | None:
        if not isinstance(url, str) or not url.strip():
            self.report.add(where, "no URL", kept=False)
            return None
        if len(url) > MAX_URL:
            self.report.add(where, f"URL longer than {MAX_URL} characters", kept=False)
            return None
        if valid_text(url) != url:  # a lone surrogate: no character stands in for one in an address
            self.report.add(where, f"the URL holds a character no address can (a lone surrogate): {one_line(url, 100)}",
                            kept=False)
            return None
        checked = checked_url(url)
        if checked is None:
            self.report.add(where, f"not an http(s) URL: {one_line(url, 100)}", kept=False)
        return checked

    def time(self, where: str, value: Any, what: str) -> float | None:
        try:
            return parse_time(value)
        except BadDate:
            self.report.add(where, f"{what} is not a date we can read ({one_line(str(value), 60)!r}):"
                            " kept without it", kept=True)
            return None


class Full(Exception):
    """The import's cap on links is reached: the parser stops there."""


class Counter(Collector):
    """Counts the distinct links of a file without keeping them (the keys only, up to
    `limit`; past it, Full), so the total is known before anything is stored."""

    keep_content = False

    def __init__(self, report: ImportReport, limit: int) -> None:
        super().__init__(report)
        self.limit = limit
        self.keys: set[str] = set()

    def add(self, where: str, record: LinkRecord) -> LinkRecord:
        if record.key not in self.keys:
            if len(self.keys) >= self.limit:
                raise Full
            self.keys.add(record.key)
        return record

    def find(self, url: str) -> LinkRecord | None:
        try:
            key = normalize_url(url)
        except ValueError:
            return None
        return LinkRecord(url=url, key=key) if key in self.keys else None  # taken in, then forgotten


class Streamer(Collector):
    """Hands the links on in batches as the parser finds them: `flush(links, held)` runs
    on the parser's thread and returns once they are stored, so memory holds one batch, not the
    file. Within a batch duplicates merge as in Collector; a duplicate of a link already
    handed on goes on again, and the store unites it with what it stored (counted as
    already there). `stored` is the store's keys of its articles' links, which flush keeps up to
    date: highlights for one of them go on with the next batch, as a record of its own
    (`held` counts those: not links of the file). At most `limit` links: past it, Full."""

    def __init__(self, report: ImportReport, flush: Callable[[list[LinkRecord], int], None],
                 batch: int, limit: int, stored: Mapping[str, int]) -> None:
        super().__init__(report)
        self._flush = flush
        self._batch = batch
        self.limit = limit
        self.count = 0  # links handed on or held, duplicates within a batch counted once
        self._stored = stored
        self._held = 0

    def add(self, where: str, record: LinkRecord) -> LinkRecord:
        if record.key in self._by_key:
            return super().add(where, record)
        if self.count >= self.limit:
            raise Full
        self.count += 1
        super().add(where, record)
        if len(self.links) >= self._batch:
            self.hand_on()
        return record

    def find(self, url: str) -> LinkRecord | None:
        found = super().find(url)
        if found is not None:
            return found
        try:
            key = normalize_url(url)
        except ValueError:
            return None
        if key not in self._stored:
            return None
        # What is added to this record (highlights) goes on with the next batch, and the
        # store adds it to the link it holds
        record = LinkRecord(url=url, key=key)
        self._by_key[key] = (record, "")
        self.links.append(record)
        self._held += 1
        return record

    def hand_on(self) -> None:
        """Store what the batch holds (the parser's end calls it for the last one)."""
        if self.links:
            self._flush(self.links, self._held)
        self.links, self._by_key, self._held = [], {}, 0
