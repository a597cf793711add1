"""Reading what is still readable from a damaged database file, row by row: a page that
cannot be read costs the rows on it, not the whole export. Plain sqlite3, read-only (run
it in a thread from async code); the records have the shape `export_articles` gives."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .check import connect_for_reading

# Ids tried one by one past a damaged stretch before giving up on finding more rows (used
# only when even max(id) cannot be read).
_BLIND_STEPS = 1_000_000

_ARTICLE = """
    SELECT a.id, a.guid, a.url, a.title, a.summary, a.summary_text, a.author, a.published,
           a.sort_at, a.added_at, a.read_at, a.starred_at, a.read_position, a.read_position_at, a.feed_id,
           {saved_at} AS saved_at{done}
    FROM articles a WHERE a.id = ?
"""
_CONTENT = """
    SELECT 1 AS cleaned, title AS c_title, author AS c_author, published AS c_published, html AS c_html,
           text AS c_text, words AS c_words, cleaned_at AS c_cleaned_at
    FROM contents WHERE article_id = ?
"""
_NO_CONTENT = dict.fromkeys(("c_title", "c_author", "c_published", "c_html", "c_text", "c_words",
                             "c_cleaned_at"), None) | {"cleaned": 0}


class NothingReadable(sqlite3.DatabaseError):
    """Not a single row can be looked for: the file is no database of reader's (or its
    first page, which names every table, is damaged)."""


@dataclass
class Salvage:
    feeds: list[dict[str, Any]] = field(default_factory=list)
    articles: list[dict[str, Any]] = field(default_factory=list)
    lost_feeds: int = 0  # ids that could not be read (or stretches past which nothing was found)
    lost_articles: int = 0
    lost_contents: int = 0  # articles saved without their cleaned text


def _ids(db: sqlite3.Connection, table: str) -> Iterator[int | None]:
    """Every id of `table` in order, stepping over what cannot be read: yields None for
    each id that could not be looked at (in a damaged stretch of the table; with ids
    left unused by deletions, that may count a few ids that held no row)."""
    try:
        last: int | None = db.execute(f"SELECT max(id) FROM {table}").fetchone()[0]
    except sqlite3.DatabaseError:
        last = None
    after, blind = 0, 0
    while last is None or after < last:
        try:
            row = db.execute(f"SELECT id FROM {table} WHERE id > ? ORDER BY id LIMIT 1", (after,)).fetchone()
        except sqlite3.DatabaseError:
            # The next row's page, or one the scan passes, is damaged. Look at the very
            # next id alone: a lookup by key reads only the page that would hold it.
            after += 1
            try:
                found = db.execute(f"SELECT id FROM {table} WHERE id = ?", (after,)).fetchone()
            except sqlite3.DatabaseError:
                blind += 1
                if last is None and blind > _BLIND_STEPS:
                    break
                continue
            if found is not None:
                yield from [None] * blind
                blind = 0
                yield after
            continue
        yield from [None] * blind
        blind = 0
        if row is None:
            return
        after = row[0]
        yield after
    yield from [None] * blind


def _one(db: sqlite3.Connection, sql: str, key: int) -> dict[str, Any] | None:
    row = db.execute(sql, (key,)).fetchone()
    return dict(row) if row is not None else None


def _each(db: sqlite3.Connection, table: str, read: Callable[[int], dict[str, Any] | None]
          ) -> tuple[list[dict[str, Any]], int]:
    found, lost = [], 0
    for key in _ids(db, table):
        if key is None:
            lost += 1
            continue
        try:
            row = read(key)
        except sqlite3.DatabaseError:
            lost += 1
            continue
        if row is not None:
            found.append(row)
    return found, lost


def salvage(path: Path) -> Salvage:
    """Feeds and the articles an export keeps (saved, starred, cleaned), read one row at a
    time from a file that may be damaged."""
    result = Salvage()
    with contextlib.closing(connect_for_reading(Path(path))) as db:
        db.row_factory = sqlite3.Row
        # Without its tables, looking for rows id by id stepped blindly through a million
        # ids per table (100 s for a file that was never reader's), to save nothing.
        try:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            raise NothingReadable(f"nothing can be read from {path}: it is not a database, or the first page,"
                                  f" which names its tables, is damaged ({exc})") from exc
        if not {"feeds", "articles", "contents"} <= tables:
            raise NothingReadable(f"nothing to export from {path}: it is not a reader database")
        result.feeds, result.lost_feeds = _each(
            db, "feeds", lambda key: _one(db, "SELECT id, url, title, site_url FROM feeds WHERE id = ?", key))
        feeds = {f["id"]: f for f in result.feeds}
        # a file from before v15 has no saved_at, one from before v14 no done_at (its records go
        # without it, so that importing them makes them done as the migration would); one whose
        # schema cannot be read is taken as current
        try:
            columns = {row[1] for row in db.execute("PRAGMA table_info(articles)")}
        except sqlite3.DatabaseError:
            columns = {"saved_at", "done_at"}
        article = _ARTICLE.format(saved_at="a.saved_at" if "saved_at" in columns else "NULL",
                                  done=", a.done_at" if "done_at" in columns else "")
        rows, result.lost_articles = _each(db, "articles", lambda key: _one(db, article, key))
        for row in rows:
            try:
                content = _one(db, _CONTENT, row["id"])
            except sqlite3.DatabaseError:
                content = None
                result.lost_contents += 1
            if row["feed_id"] is not None and row["starred_at"] is None and row["saved_at"] is None and content is None:
                continue  # an export keeps saved links, starred and cleaned articles
            feed = feeds.get(row["feed_id"]) or {}
            result.articles.append({**row, **(content or _NO_CONTENT), "feed_url": feed.get("url"),
                                    "feed_title": feed.get("title")})
    return result
