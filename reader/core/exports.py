"""Your data is yours: reader's own file formats (reader/core/library.py is the way in).

* `backup(db, dest)`: a consistent copy of the live database through SQLite's online
  backup API (in a thread), safe while the server and workers write: the copy is one
  snapshot, written to a temporary file and renamed into place.
* `export(store, out)`: the feeds as OPML (with their folders), and the articles worth
  keeping (saved links, starred articles, everything cleaned) as JSON, with cleaned text
  and HTML and their read and starred state. `out` is a directory (feeds.opml +
  articles.json) or a file ending in .json (one self-contained document, feeds included).
* `import_files(store, paths)` / `import_export_data(store, data, name)`: bring either
  back. Idempotent: importing twice changes nothing. HTML from the file passes the one
  nh3 cleaner again: an export file is outside input like any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import html as html_lib
import json
import os
import re
import sqlite3
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import Invalid, ReaderError
from ..feeds.rules import check_rule
from ..formats.importers import FeedRecord, ImportFileError, LinkRecord, Note, build_bookmarks_html
from . import highlights
from .imports import ImportOutcome
from ..formats.opml import build_opml, parse_opml
from ..clean.sanitize import clean_html, plain_text, valid_text
from ..records import FINISHED
from ..store import Store
from ..store.salvage import Salvage, salvage
from ..urls import http_url

FORMAT = "reader-export"
VERSION = 1
OPML_NAME = "feeds.opml"

ARTICLES_NAME = "articles.json"


class PortabilityError(ReaderError):
    """A backup, export or import that cannot be done; the message says why."""


# -- backup -------------------------------------------------------------------------------


def backup_path(dest: Path) -> Path:
    """A directory gets a dated file inside it; anything else is the file itself."""
    if dest.is_dir():
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        return dest / f"reader-{stamp}.db"
    return dest


def _backup(source: Path, dest: Path) -> None:
    src = sqlite3.connect(source, timeout=30)
    try:
        src.execute("PRAGMA busy_timeout = 30000")
        fd, temporary = tempfile.mkstemp(prefix=".reader-backup-", suffix=".db", dir=dest.parent)
        os.close(fd)
        try:
            dst = sqlite3.connect(temporary)
            try:
                # One step (pages=-1): the whole copy comes from one read snapshot, while
                # writers in WAL mode carry on.
                try:
                    src.backup(dst)
                    dst.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
                    ok = dst.execute("PRAGMA quick_check").fetchone()[0]
                except sqlite3.DatabaseError as exc:
                    ok = str(exc)
                if ok != "ok":
                    # The backup API copies pages as they are: a damaged page stays damaged.
                    raise PortabilityError(
                        f"the database file is damaged ({ok}) and a copy of it would be too, so none was written;"
                        " `reader export` saves what is still readable, row by row")
            finally:
                dst.close()
            os.replace(temporary, dest)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    finally:
        src.close()


async def backup(source: Path, dest: Path) -> Path:
    """Copy the database at `source` to `dest` (a file, or a directory to put one in)."""
    source, dest = Path(source), backup_path(Path(dest))
    if not source.is_file():
        raise PortabilityError(f"no database at {source}")
    if dest.exists() and dest.resolve() == source.resolve():
        raise PortabilityError("the backup cannot replace the database itself")
    if not dest.parent.is_dir():
        raise PortabilityError(f"no such directory: {dest.parent}")
    await asyncio.to_thread(_backup, source, dest)
    return dest


# -- export -------------------------------------------------------------------------------


# An image stored with an article, as the article's HTML names it (reader/images.py).
_STORED_IMAGE = re.compile(r'src="/articles/([0-9]+)/images/([0-9a-f]{64})"')


def _with_sources(html: str, sources: Mapping[tuple[int, str], str]) -> str:
    """The article's HTML with each stored image named by the address it came from: an
    export is read by another reader (or this one after a fresh start), where article ids
    differ. Importing it gives remote images again; `reader reclean` stores them."""
    def source(match: re.Match[str]) -> str:
        found = sources.get((int(match[1]), match[2]))
        return match[0] if found is None else f'src="{html_lib.escape(found, quote=True)}"'

    return _STORED_IMAGE.sub(source, html)


def _article_record(row: dict[str, Any], sources: Mapping[tuple[int, str], str] | None = None) -> dict[str, Any]:
    record = {
        "url": row["url"], "title": row["title"], "feed_url": row["feed_url"], "feed_title": row["feed_title"],
        "guid": row["guid"], "summary": row["summary"], "author": row["author"], "published": row["published"],
        "sort_at": row["sort_at"], "added_at": row["added_at"], "read_at": row["read_at"],
        "starred_at": row["starred_at"], "saved_at": row["saved_at"], "content": None,
        # where the person stopped (a fraction of the text) and when they got there
        "read_position": row["read_position"], "read_position_at": row["read_position_at"],
    }
    if "done_at" in row:  # when they were done with it (off the reading list); a salvaged file
        record["done_at"] = row["done_at"]  # from before schema v14 has none: see _done_at
    if row["cleaned"]:
        record["content"] = {key: row["c_" + key] for key in
                             ("title", "author", "published", "html", "text", "words", "cleaned_at")}
        # why the text may be only the article's start (a teaser, a paywall): null when whole
        # or unknown; a salvaged file from before schema v21 has no such column
        record["content"]["partial"] = row.get("c_partial")
        if sources and record["content"]["html"]:
            record["content"]["html"] = _with_sources(record["content"]["html"], sources)
    return record


async def export_document(store: Store) -> dict[str, Any]:
    feeds = await store.list_feeds(counts=False)
    by_id = {int(f["id"]): str(f["url"]) for f in feeds}
    sources = await store.image_sources()
    rows = await store.export_articles()
    ids = [r["id"] for r in rows]
    tags, notes = await store.tags_of(ids), await store.notes_for(ids)
    marked = await store.highlights_for(ids)
    carried = await store.also_in_for(ids)
    articles = []
    for row in rows:
        record = _article_record(row, sources)
        record["tags"] = tags.get(row["id"], [])
        record["notes"] = notes.get(row["id"], [])
        # W3C Web Annotations (core/highlights.py), placed again in the text on import
        record["highlights"] = [highlights.exported(h) for h in marked.get(row["id"], [])]
        # the other feeds that carry its story ("also in"): back in the story on import, so
        # their refresh adds no second card for it
        record["also_in"] = carried.get(row["id"], [])
        articles.append(record)
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": time.time(),
        "feeds": [{"url": f["url"], "title": f["title"], "site_url": f["site_url"], "folder": f["folder"],
                   "paused_until": f["paused_until"]} for f in feeds],
        "rules": [_rule_record(r, by_id) for r in await store.rules(counts=False)],
        "articles": articles,
    }


def _rule_record(row: Mapping[str, Any], feeds: Mapping[int, str]) -> dict[str, Any]:
    """A rule as an export keeps it: a feed's scope names the feed by its URL, as ids differ
    from one library to the next."""
    record = {k: row[k] for k in ("field", "kind", "pattern", "scope", "action", "created")}
    record["enabled"] = bool(row["enabled"])
    if row["scope"].startswith("feed:"):
        record["scope"] = "feed"
        record["feed_url"] = feeds.get(int(row["scope"][5:]))
    return record


async def _import_rules(store: Store, raw: list[Any]) -> int:
    """An export's rules, each checked as a new one is; one the library has already (the
    same parts) or whose feed it lacks is left out. How many were added."""
    have = {(r["field"], r["kind"], r["pattern"], r["scope"], r["action"]) for r in await store.rules(counts=False)}
    added = 0
    for r in raw:
        if not isinstance(r, dict):
            continue
        scope = r.get("scope")
        if scope == "feed":
            feed = await store.feed_by_url(http_url(r.get("feed_url")) or "")
            if feed is None:
                continue
            scope = f"feed:{feed['id']}"
        try:
            parts = check_rule(r.get("field"), r.get("kind"), r.get("pattern"), scope, r.get("action"))
        except Invalid:
            continue
        key = (parts["field"], parts["kind"], parts["pattern"], parts["scope"], parts["action"])
        if key in have:
            continue
        have.add(key)
        await store.add_rule(**parts, enabled=r.get("enabled") is not False, created=_number(r.get("created")))
        added += 1
    return added


async def export(store: Store, out: Path) -> list[Path]:
    """Write the export; returns the files written."""
    return _write_export(await export_document(store), Path(out))


async def salvage_export(db: Path, out: Path) -> tuple[list[Path], Salvage]:
    """The export of a damaged file: whatever rows can still be read, one at a time (see
    reader/store/salvage.py), with counts of what was lost."""
    found = await asyncio.to_thread(salvage, Path(db))
    document = {
        "format": FORMAT, "version": VERSION, "exported_at": time.time(),
        "feeds": [{"url": f["url"], "title": f["title"], "site_url": f["site_url"]} for f in found.feeds],
        "articles": [_article_record(r) for r in found.articles],
    }
    return _write_export(document, Path(out)), found


def _write_export(document: dict[str, Any], out: Path) -> list[Path]:
    data = json.dumps(document, ensure_ascii=False, indent=1).encode() + b"\n"
    if out.suffix.lower() == ".json":
        if not out.parent.is_dir():
            raise PortabilityError(f"no such directory: {out.parent}")
        _write(out, data)
        return [out]
    if out.exists() and not out.is_dir():
        raise PortabilityError(f"{out} is a file: give a directory, or a file name ending in .json")
    out.mkdir(parents=True, exist_ok=True)
    _write(out / OPML_NAME, build_opml(
        FeedRecord(url=f["url"], title=f["title"] or "", site_url=f["site_url"], folder=folder_path(f.get("folder")),
                   paused_until=f.get("paused_until"))
        for f in document["feeds"]))
    _write(out / ARTICLES_NAME, data)
    return [out / OPML_NAME, out / ARTICLES_NAME]


async def export_bookmarks(store: Store, out: Path) -> Path:
    """The library as a Netscape bookmark file (bookmarks_html), written to `out`."""
    out = Path(out)
    if not out.parent.is_dir():
        raise PortabilityError(f"no such directory: {out.parent}")
    _write(out, await bookmarks_html(store))
    return out


async def bookmarks_html(store: Store) -> bytes:
    """The library (saved, starred and cleaned articles) as a Netscape bookmark file, which
    every browser and read-later app imports: tags, time added, read state and notes kept."""
    document = await export_document(store)
    links = []
    for r in document["articles"]:
        links.append(LinkRecord(
            url=r["url"], title=r["title"] if r["title"] != r["url"] else "", tags=set(r["tags"]),
            added_at=r["added_at"], read=r["read_at"] is not None, starred=r["starred_at"] is not None,
            notes=[Note(n["text"], n["comment"], n["created_at"]) for n in r["notes"]]))
    return build_bookmarks_html(links, "reader library")


def folder_path(folder: str | None) -> tuple[str, ...]:
    """A stored folder name as the OPML writer's path (nested ones are stored joined by " / ")."""
    return tuple(folder.split(" / ")) if folder else ()


def _write(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


# -- import -------------------------------------------------------------------------------


def _text(value: Any, limit: int | None = None) -> str | None:
    if not isinstance(value, str):
        return None
    return valid_text(value[:limit] if limit else value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value == value and abs(value) < 1e12 else None  # no NaN, no absurd times


def _tags(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    names = {" ".join(v.split())[:100]: None for v in value[:100] if isinstance(v, str)}
    return [n for n in names if n]


def _notes(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    notes = []
    for raw in value[:500]:
        if isinstance(raw, dict) and _text(raw.get("text"), 20_000):
            notes.append({"text": _text(raw.get("text"), 20_000), "comment": _text(raw.get("comment"), 20_000),
                          "created_at": _number(raw.get("created_at"))})
    return notes


def _position(raw: dict[str, Any]) -> tuple[float | None, float | None]:
    """A reading position and its time, both valid or neither: a place without a time
    could never be compared with a newer one."""
    position, at = _number(raw.get("read_position")), _number(raw.get("read_position_at"))
    if position is None or at is None or not 0 <= position <= 1 or at < 0:
        return None, None
    return position, at


def _done_at(raw: dict[str, Any], read_at: float | None, position: float | None) -> float | None:
    """When the person was done with the article. An export from before schema v14 has no
    done_at: read and not left part-way was off the reading list then, so it is done as of
    its read time, as the migration makes such an article."""
    if "done_at" in raw:
        return _number(raw.get("done_at"))
    return read_at if read_at is not None and (position is None or position >= FINISHED) else None


def _folder(value: Any) -> str | None:
    return " ".join(value.split())[:200] or None if isinstance(value, str) else None


# How many entries of a story's other feeds an import reads (nobody follows more feeds that
# carry one story; a file that lists more is not taken at its word, nor read to its end).
MAX_ALSO_IN = 50


def _also_in(value: Any) -> list[dict[str, Any]]:
    """The other feeds' items of a story, each with a feed URL and a guid; others skipped."""
    items = []
    for raw in value[:MAX_ALSO_IN] if isinstance(value, list) else []:
        if not isinstance(raw, dict):
            continue
        feed_url, guid = http_url(raw.get("feed_url")), _text(raw.get("guid"), 1000)
        if feed_url is None or not guid:
            continue
        items.append({"feed_url": feed_url, "feed_title": plain_text(_text(raw.get("feed_title"), 500) or ""),
                      "guid": guid, "title": plain_text(_text(raw.get("title"), 2000) or "")[:500],
                      "published": _number(raw.get("published")), "added_at": _number(raw.get("added_at"))})
    return items


def _clean_record(raw: Any) -> dict[str, Any] | None:
    """A validated, sanitized article record, or None to skip it."""
    if not isinstance(raw, dict):
        return None
    url = http_url(raw.get("url"))
    if url is None:
        return None
    feed_url = http_url(raw.get("feed_url")) if raw.get("feed_url") is not None else None
    if raw.get("feed_url") is not None and feed_url is None:
        return None
    summary = clean_html(_text(raw.get("summary")) or "", base_url=url)
    record: dict[str, Any] = {
        "url": url, "feed_url": feed_url, "feed_title": plain_text(_text(raw.get("feed_title"), 500) or ""),
        "guid": (_text(raw.get("guid"), 1000) or url), "title": plain_text(_text(raw.get("title"), 2000) or "")[:500]
        or url, "summary": summary, "summary_text": plain_text(summary), "author": _text(raw.get("author"), 500),
        "published": _number(raw.get("published")), "sort_at": _number(raw.get("sort_at")),
        "added_at": _number(raw.get("added_at")), "read_at": _number(raw.get("read_at")),
        "starred_at": _number(raw.get("starred_at")), "saved_at": _number(raw.get("saved_at")), "content": None,
        "tags": _tags(raw.get("tags")), "notes": _notes(raw.get("notes")),
        "highlights": [h for h in map(highlights.from_annotation, raw.get("highlights") or [] if
                                      isinstance(raw.get("highlights"), list) else [])
                       if h is not None][:highlights.MAX_PER_ARTICLE],
    }
    record["also_in"] = _also_in(raw.get("also_in"))
    record["read_position"], record["read_position_at"] = _position(raw)
    record["done_at"] = _done_at(raw, record["read_at"], record["read_position"])
    content = raw.get("content")
    if isinstance(content, dict) and isinstance(content.get("html"), str):
        text = _text(content.get("text")) or ""
        words = content.get("words")
        record["content"] = {
            "title": _text(content.get("title"), 2000), "author": _text(content.get("author"), 500),
            "published": _text(content.get("published"), 100), "html": clean_html(content["html"], base_url=url),
            "text": text, "words": words if isinstance(words, int) and words >= 0 else len(text.split()),
            "cleaned_at": _number(content.get("cleaned_at")),
            "partial": _text(content.get("partial"), 500) or None,
        }
    return record


def read_export_file(data: bytes, name: str) -> tuple[list[dict[str, Any]], list[Any], list[Any]]:
    """(feeds, raw article records, raw rules) of one file: OPML or reader's JSON export."""
    head = data.lstrip()[:1]
    if head == b"{":
        try:
            document = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise PortabilityError(f"{name}: not valid JSON ({exc})") from None
        except RecursionError:  # arrays nested thousands deep exhaust the parser's stack
            raise PortabilityError(f"{name}: not a reader export (JSON nested too deeply)") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise PortabilityError(f"{name}: not a reader export (no \"format\": \"{FORMAT}\")")
        if not isinstance(document.get("version"), int) or document["version"] > VERSION:
            raise PortabilityError(f"{name}: export version {document.get('version')!r} is newer than this reader")
        feeds = []
        for f in document.get("feeds") or []:
            if isinstance(f, dict) and http_url(f.get("url")):
                feeds.append({"url": http_url(f["url"]), "title": plain_text(_text(f.get("title"), 500) or ""),
                              "site_url": http_url(f.get("site_url")), "folder": _folder(f.get("folder")),
                              "paused_until": _number(f.get("paused_until"))})
        articles = document.get("articles") or []
        if not isinstance(articles, list):
            raise PortabilityError(f"{name}: \"articles\" is not a list")
        rules = document.get("rules") or []
        if not isinstance(rules, list):
            raise PortabilityError(f"{name}: \"rules\" is not a list")
        return feeds, articles, rules
    try:
        opml_feeds = parse_opml(data, name)
    except ImportFileError as exc:
        raise PortabilityError(f"{exc} (reader imports its own JSON exports and OPML files)") from None
    return [{"url": f.url, "title": f.title, "site_url": f.site_url, "folder": f.folder_name,
             "paused_until": f.paused_until} for f in opml_feeds], [], []


def _files(paths: list[Path]) -> list[Path]:
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = [p for p in (path / OPML_NAME, path / ARTICLES_NAME) if p.is_file()]
            if not found:
                raise PortabilityError(f"{path}: no {OPML_NAME} or {ARTICLES_NAME} in it")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise PortabilityError(f"{path}: no such file")
    return files


async def import_files(store: Store, paths: list[Path]) -> ImportOutcome:
    """Import exports and OPML files (a directory means its feeds.opml and articles.json)
    as one import. Every file is read and checked before anything is written."""
    files = _files(paths)
    return await _import(store, [(path.read_bytes(), str(path)) for path in files], ", ".join(map(str, paths)))


async def import_export_data(store: Store, data: bytes, name: str) -> ImportOutcome:
    """One file of reader's own export, as the core's import of any format reports it."""
    return await _import(store, [(data, name)], name)


async def _import(store: Store, files: list[tuple[bytes, str]], name: str) -> ImportOutcome:
    feeds: list[dict[str, Any]] = []
    raw_articles: list[Any] = []
    raw_rules: list[Any] = []
    for data, file_name in files:
        file_feeds, file_articles, file_rules = read_export_file(data, file_name)
        feeds.extend(file_feeds)
        raw_articles.extend(file_articles)
        raw_rules.extend(file_rules)
    cleaned = [_clean_record(raw) for raw in raw_articles]
    records = [r for r in cleaned if r is not None]
    results = await store.import_feeds(
        [(f["url"], f["title"], f["site_url"], f.get("folder")) for f in _dedupe(feeds)])
    counts = await store.import_articles(records)
    pauses = []
    for f in feeds:  # a pause comes back to a feed that has none
        found = await store.feed_by_url(f["url"]) if f.get("paused_until") is not None else None
        if found is not None:
            pauses.append((int(found["id"]), float(f["paused_until"])))
    await store.pause_unpaused(pauses)
    await _import_rules(store, raw_rules)
    outcome = ImportOutcome(name=name, format="reader", new=counts["articles"],
                            merged=len(records) - counts["articles"], contents=counts["contents"],
                            states=counts["states"])
    outcome.new_feed_ids = [feed_id for feed_id, created in results if created]
    outcome.feeds_new = len(outcome.new_feed_ids) + counts["feeds"]
    outcome.feeds_there = len(results) - len(outcome.new_feed_ids)
    outcome.skipped = [(f"record {i + 1}", "not an article record with an http(s) URL")
                       for i, r in enumerate(cleaned) if r is None]
    return outcome


def _dedupe(feeds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, unique = set(), []
    for f in feeds:
        if f["url"] not in seen:
            seen.add(f["url"])
            unique.append(f)
    return unique
