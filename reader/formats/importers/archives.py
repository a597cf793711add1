"""ZIP exports: Pocket's (`part_000000.csv`..., with `annotations/part_000000.json`
holding highlights: `[{url, title, highlights: [{quote, created_at}]}]`) and Omnivore's
(`metadata_0_to_20.json`..., `content/{slug}.html`, `highlights/{slug}.md`).

A ZIP is outside input like any other: its central directory may claim small sizes and
hold a bomb, or be cut off mid-download. Only the entries an export needs are read, each
read stops one byte past what may remain of the budget, and every zipfile/zlib failure
becomes an ImportFileError that says the file is damaged."""

from __future__ import annotations

import io
import lzma
import posixpath
import re
import zipfile
import zlib
from typing import Any

from .base import (
    MAX_CONTENT,
    MAX_NOTE,
    MAX_NOTES,
    BadDate,
    Collector,
    ImportFileError,
    LinkRecord,
    Note,
    decode,
    long_text,
    parse_time,
)
from .csvfiles import csv_kind, header_of, parse_pocket_csv, refuse_columns
from .jsonfiles import as_list, load_json, parse_omnivore_highlights, parse_omnivore_metadata

MAX_ENTRIES = 200_000  # Omnivore writes two files per article: 100,000 articles
# Bytes read out of one ZIP, all entries together: at most MAX_RATIO times the ZIP's own
# size (HTML, CSV and JSON deflate 3 to 10 times; a bomb, a thousand), never less than
# MIN_BUDGET (small exports of repetitive rows) nor more than MAX_UNCOMPRESSED.
MAX_UNCOMPRESSED = 1_000_000_000
MIN_BUDGET = 50_000_000
MAX_RATIO = 100
MAX_ENTRY = 100_000_000  # bytes of one CSV or JSON part

_POCKET_PART = re.compile(r"(?:^|/)part_\d+\.csv$", re.IGNORECASE)
_POCKET_NOTES = re.compile(r"(?:^|/)annotations/part_\d+\.json$", re.IGNORECASE)
_OMNIVORE_META = re.compile(r"(?:^|/)metadata_(\d+)(?:_to_\d+)?\.json$", re.IGNORECASE)
_NUMBER = re.compile(r"(\d+)")


def _damaged(name: str, exc: BaseException | None = None) -> ImportFileError:
    detail = f" ({exc})" if exc and str(exc) else ""
    return ImportFileError(f"{name}: the ZIP file is damaged or incomplete{detail}; download the export again")


class Archive:
    """A ZIP opened with a budget of bytes that may be read out of it."""

    def __init__(self, data: bytes, name: str) -> None:
        self.name = name
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError) as exc:
            raise _damaged(name, exc) from None
        except NotImplementedError as exc:  # a ZIP version or feature zipfile does not do
            raise ImportFileError(f"{name}: a ZIP file reader cannot open ({exc})") from None
        if len(infos) > MAX_ENTRIES:
            raise ImportFileError(f"{name}: the ZIP holds {len(infos)} files, more than the {MAX_ENTRIES}"
                                  " an export would")
        # Not info.is_dir(): it fails on an entry with an empty name, which a damaged file can have.
        self.files = {info.filename: info for info in infos if info.filename and not info.filename.endswith("/")}
        self.budget = self.allowed = min(MAX_UNCOMPRESSED, max(MIN_BUDGET, MAX_RATIO * len(data)))

    def names(self) -> list[str]:
        return list(self.files)

    def read(self, member: str, limit: int) -> bytes | None:
        """The entry's bytes, or None if it is larger than `limit`. Raises ImportFileError if
        the archive is damaged or the whole budget is spent."""
        info = self.files[member]
        if info.file_size > limit:
            return None
        cap = min(limit, self.budget)
        try:
            with self.zip.open(info) as stream:
                data = stream.read(cap + 1)
        except (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, ValueError, OSError) as exc:
            raise _damaged(self.name, exc) from None
        except (NotImplementedError, RuntimeError) as exc:  # encrypted, or an unknown compression
            raise ImportFileError(f"{self.name}: {member} cannot be read ({exc})") from None
        if len(data) > cap:
            if cap == self.budget:
                raise ImportFileError(f"{self.name}: the ZIP unpacks to more than {_size(self.allowed)},"
                                      " more than an export of its size would (a ZIP bomb?)")
            return None  # it lied about its size; treat it as too large
        self.budget -= len(data)
        return data


def zip_kind(archive: Archive) -> str | None:
    names = archive.names()
    if any(_OMNIVORE_META.search(n) for n in names):
        return "omnivore"
    if any(_POCKET_PART.search(n) for n in names):
        return "pocket-csv"
    return None


def _sorted_by_number(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: [int(p) if p.isdigit() else p for p in _NUMBER.split(n)])


def _size(limit: int) -> str:
    return f"{limit // 1_000_000} MB" if limit >= 1_000_000 else f"{limit} bytes"


def _text_of(archive: Archive, member: str, collector: Collector) -> str | None:
    data = archive.read(member, MAX_ENTRY)
    if data is None:
        collector.report.add(member, f"larger than {_size(MAX_ENTRY)}: left out", kept=False, row=False)
        return None
    text, note = decode(data)
    if note:
        collector.report.notes.append(f"{member}: {note}")
    return text


def parse_pocket_zip(archive: Archive, collector: Collector) -> None:
    parts = _sorted_by_number([n for n in archive.names() if _POCKET_PART.search(n)])
    for member in parts:
        text = _text_of(archive, member, collector)
        if text is None:
            continue
        header = header_of(text)
        if not header:
            continue  # an empty part
        if csv_kind(header) != "pocket":
            raise refuse_columns(f"{archive.name}: {member}", header)
        parse_pocket_csv(text, collector, label=f"{posixpath.basename(member)} ")
    for member in _sorted_by_number([n for n in archive.names() if _POCKET_NOTES.search(n)]):
        document = _json_list(archive, member, collector, "highlights")
        if document is None:
            continue
        for number, entry in enumerate(document, 1):
            if not isinstance(entry, dict):
                continue
            notes: list[Note] = []
            for highlight in as_list(entry.get("highlights")):
                if isinstance(highlight, dict) and len(notes) < MAX_NOTES:
                    quote = long_text(highlight.get("quote"), MAX_NOTE)
                    if quote:
                        try:
                            created = parse_time(highlight.get("created_at"))
                        except BadDate:
                            created = None
                        notes.append(Note(quote, None, created))
            where = f"{posixpath.basename(member)} entry {number}"
            url = entry.get("url")
            existing = collector.find(url) if isinstance(url, str) else None
            _attach(collector, where, entry, notes, existing)


def _json_list(archive: Archive, member: str, collector: Collector, what: str) -> list[Any] | None:
    """A member of the ZIP that holds a JSON list of `what`; None, with the reason in the
    report, when it cannot be read or is not a list (the rest of the ZIP still comes in)."""
    text = _text_of(archive, member, collector)
    if text is None:
        return None
    try:
        document = load_json(text, member)
    except ImportFileError as exc:
        collector.report.add(member, f"{exc}: its {what} are left out", kept=False, row=False)
        return None
    if not isinstance(document, list):
        collector.report.add(member, f"not a list of {what}: left out", kept=False, row=False)
        return None
    return document


def _attach(collector: Collector, where: str, entry: dict[str, Any], notes: list[Note], existing: LinkRecord | None) -> None:
    if existing is not None:
        seen = {(n.text, n.comment) for n in existing.notes}
        for note in notes:
            if (note.text, note.comment) not in seen and len(existing.notes) < MAX_NOTES:
                existing.notes.append(note)
        return
    # Highlights on a link the list did not have: bring the link in with them.
    collector.link(where, entry.get("url"), title=entry.get("title"), notes=notes)


def parse_omnivore_zip(archive: Archive, collector: Collector) -> None:
    names = archive.names()
    numbered = ((n, _OMNIVORE_META.search(n)) for n in names)
    metas = [n for n, _ in sorted(((n, int(m.group(1))) for n, m in numbered if m), key=lambda pair: pair[1])]
    for member in metas:
        document = _json_list(archive, member, collector, "articles")
        if document is None:
            continue
        folder = posixpath.dirname(member)
        contents: dict[str, str] = {}
        highlights: dict[str, list[Note]] = {}
        for entry in document:
            slug = entry.get("slug") if isinstance(entry, dict) else None
            if not isinstance(slug, str) or not slug or "/" in slug:
                continue
            content_name = posixpath.join(folder, "content", f"{slug}.html")
            if content_name in archive.files:
                data = archive.read(content_name, MAX_CONTENT)
                if data is None:
                    collector.report.add(content_name, f"saved content larger than {MAX_CONTENT // 1_000_000} MB:"
                                         " left out (the page can still be cleaned from the web)", kept=True)
                else:
                    contents[slug] = decode(data)[0]
            notes_name = posixpath.join(folder, "highlights", f"{slug}.md")
            if notes_name in archive.files:
                data = archive.read(notes_name, MAX_NOTE * MAX_NOTES)
                if data is not None:
                    highlights[slug] = parse_omnivore_highlights(decode(data)[0])
        parse_omnivore_metadata(document, collector, label=f"{posixpath.basename(member)} ",
                                contents=contents, highlights=highlights)
