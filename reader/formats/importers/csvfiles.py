"""Pocket's and Instapaper's CSV exports.

Pocket (2023-2025): `title,url,time_added,tags,status`; time_added in unix seconds, tags
joined by `|`, status `unread` or `archive`. It came as a ZIP of `part_000000.csv`,
`part_000001.csv`... (see archives.py), each with its own header.

Instapaper: `URL,Title,Selection,Folder,Timestamp` (newer files add `Tags`, a JSON list);
the folder `Unread` is the list, `Archive` means read, `Starred` means starred, any other
folder is one the person made and becomes a tag. Selection is a highlight."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator

from .base import MAX_NOTE, Collector, ImportFileError, Note, long_text

POCKET_COLUMNS = ("title", "url", "time_added", "tags", "status")
INSTAPAPER_COLUMNS = ("url", "title", "selection", "folder", "timestamp")
_INSTAPAPER_OPTIONAL = ("tags",)
EXPECTED = ("Pocket's title,url,time_added,tags,status or Instapaper's URL,Title,Selection,Folder,Timestamp")


def header_of(text: str) -> list[str]:
    """The first row of a CSV text, names in lower case; [] if there is none."""
    first = text[: text.find("\n") + 1 or len(text)][:10_000]
    try:
        row = next(csv.reader(io.StringIO(first)), [])
    except csv.Error:
        return []
    return [name.strip().lower() for name in row]


def csv_kind(header: list[str]) -> str | None:
    """'pocket', 'instapaper' or None, from the header row alone."""
    names = set(header)
    if "url" not in names:
        return None
    if names & {"time_added", "status"}:
        return "pocket"
    if names & {"selection", "folder", "timestamp"}:
        return "instapaper"
    return None


def refuse_columns(name: str, header: list[str]) -> ImportFileError:
    shown = ",".join(h[:40] for h in header[:20]) or "none"
    return ImportFileError(f"{name}: a CSV file with the columns {shown}; reader reads CSV files with {EXPECTED}")


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _lines(text: str) -> Iterator[str]:
    """The text's lines with their ends, one at a time, as a file opened with newline=""
    gives them: io.StringIO would hold a copy of four bytes a character (17 MB for a
    4 MB CSV of 80,000 rows), and a list of the lines as much again."""
    return (line.group(0) for line in _LINE.finditer(text))


def _rows(text: str, collector: Collector, label: str, known: tuple[str, ...]) -> Iterator[tuple[str, dict[str, str]]]:
    """(where, {column: value}) for each data row; a row the CSV reader cannot read (a field
    past the size limit, a stray quote at the end) is reported and passed over."""
    reader = csv.reader(_lines(text))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except (StopIteration, csv.Error):
        return
    index = {name: i for i, name in reversed(list(enumerate(header))) if name in known}
    missing = [name for name in known if name not in index]
    if missing:
        collector.report.notes.append(f"{label}no {', '.join(missing)} column: read without it")
    extra = [h for h in header if h and h not in known]
    if extra:
        collector.report.notes.append(f"{label}columns ignored: {', '.join(h[:40] for h in extra[:10])}")
    row_number = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            row_number += 1
            collector.report.rows += 1
            collector.report.add(f"{label}line {reader.line_num}", f"not readable as CSV ({exc})", kept=False)
            continue
        row_number += 1
        if not row or not any(cell.strip() for cell in row):
            continue  # blank lines, as spreadsheets leave at the end
        yield f"{label}row {row_number}", {name: row[i] if i < len(row) else "" for name, i in index.items()}


def parse_pocket_csv(text: str, collector: Collector, label: str = "") -> None:
    for where, row in _rows(text, collector, label, POCKET_COLUMNS):
        status = row.get("status", "").strip().lower()
        collector.link(where, row.get("url"), title=row.get("title", ""), tags=row.get("tags", "").split("|"),
                       added_at=row.get("time_added"), read=status in ("archive", "archived", "read"))


def _instapaper_tags(value: str) -> list[str]:
    value = value.strip()
    if value.startswith("["):
        try:
            tags = json.loads(value)
        except (ValueError, RecursionError):
            tags = None
        if isinstance(tags, list):
            return [t if isinstance(t, str) else (t.get("name") if isinstance(t, dict) else None) or ""
                    for t in tags[:1000]]
    return value.split(",") if value else []


def parse_instapaper_csv(text: str, collector: Collector, label: str = "") -> None:
    for where, row in _rows(text, collector, label, INSTAPAPER_COLUMNS + _INSTAPAPER_OPTIONAL):
        folder = " ".join(row.get("folder", "").split())
        tags = _instapaper_tags(row.get("tags", ""))
        lowered = folder.lower()
        if folder and lowered not in ("unread", "archive", "starred"):
            tags.append(folder)
        selection = long_text(row.get("selection"), MAX_NOTE)
        collector.link(where, row.get("url"), title=row.get("title", ""), tags=tags,
                       added_at=row.get("timestamp"), read=lowered == "archive", starred=lowered == "starred",
                       notes=[Note(selection)] if selection else ())
