"""The library other apps bring: tags, notes, feed folders, and links imported in bulk.

An import is one transaction of batched statements (executemany), not a statement per
link: a 20,000-link export would otherwise spend its time crossing into the database
thread. It never touches the queue except to take out an article whose text came with
the export (it is ready, so waiting in line would only clean it twice)."""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiosqlite

from .articles import selection
from .base import _ARTICLE_JOINS, FIRST_COPY, StoreBase, rows_of
from .rows import NoteRow
from .feeds import insert_feed
from .highlights import reanchor
from .schema import url_key


@dataclass(slots=True)
class ImportLink:
    """One link as the store takes it: checked, sanitized and normalized by the caller.
    `key` is the normalized URL duplicates share; `content` is (html, text, words)."""

    url: str
    key: str
    title: str
    tags: set[str]
    added_at: float | None
    read: bool
    starred: bool
    author: str | None
    published: float | None
    summary: str  # sanitized HTML
    summary_text: str
    content: tuple[str, str, int] | None
    notes: list[tuple[str, str | None, float | None]]
    # (quote, prefix, suffix, note, created_at): placed in the text when there is one
    highlights: list[tuple[str, str, str, str, float | None]] = field(default_factory=list)


@dataclass(slots=True)
class LinkCounts:
    new: int = 0
    merged: int = 0  # already there: united with what the file said
    in_feeds: int = 0  # of those, articles a feed brought (one card for the link, not two)
    contents: int = 0  # texts stored as they came, no fetch
    ids: list[int] = field(default_factory=list)  # every article the links are, new or merged, once each


async def _tag_ids(db: aiosqlite.Connection, names: Iterable[str]) -> dict[str, int]:
    """Tag ids by lower-cased name, creating the tags that are missing."""
    wanted = sorted({n for n in names if n})
    if not wanted:
        return {}
    await db.executemany("INSERT INTO tags (name) VALUES (?) ON CONFLICT (name) DO NOTHING",
                         [(n,) for n in wanted])
    rows = await rows_of(db, "SELECT id, name FROM tags WHERE name IN (SELECT value FROM json_each(?))",
                         (_json(wanted),))
    return {r["name"].lower(): r["id"] for r in rows}


def _json(values: Sequence[Any]) -> str:
    return json.dumps(list(values))


async def _link_keys(db: aiosqlite.Connection) -> dict[str, int]:
    """Every article by url_key (FIRST_COPY of those sharing one): what an imported link
    merges into, a saved link or a feed's article alike."""
    found: dict[str, int] = {}
    for row in await rows_of(db, f"SELECT a.id, a.url_key FROM articles a WHERE a.url_key IS NOT NULL"
                                 f" ORDER BY {FIRST_COPY}"):
        found.setdefault(row["url_key"], row["id"])
    return found


class LibraryStore(StoreBase):

    # -- import -----------------------------------------------------------------------

    async def link_keys(self) -> dict[str, int]:
        """Every article by the key of its link (articles.url_key), read once for a whole
        import: each link of the file is looked up in it, and a parser finds highlights'
        links there."""
        async with self._transaction() as db:
            return await _link_keys(db)

    async def import_links(self, links: Sequence[ImportLink], source: str, existing: dict[str, int]) -> LinkCounts:
        """Bring links in as saved articles, merging by normalized URL with the articles
        already there, saved links and feeds' articles alike (one card per link): the
        richer record wins (tags united, read or starred if either was, the earlier time
        added, a title where there was only the URL, notes and text added where missing),
        and the article is marked saved. Read if either was: a read is something that
        happened, and merging only ever adds, so importing the same file twice changes
        nothing and never brings back as unread what was read here since. `existing` is
        link_keys(), kept up to date here with the links this import adds."""
        counts = LinkCounts()
        now = time.time()
        async with self._transaction() as db:
            # an article `existing` names may be gone since it was read (its feed unsubscribed):
            # its link is looked up again, and a link stored since (saved, or a feed's) is merged too
            named = {existing[link.key] for link in links if link.key in existing}
            present = {r["id"] for r in await rows_of(
                db, "SELECT id FROM articles WHERE id IN (SELECT value FROM json_each(?))", (_json(sorted(named)),))}
            for link in links:
                if existing.get(link.key, 0) not in present:
                    existing.pop(link.key, None)
            unseen = [link.key for link in links if link.key not in existing]
            for row in await rows_of(
                    db, f"SELECT a.id, a.url_key FROM articles a WHERE a.url_key IN (SELECT value FROM json_each(?))"
                        f" ORDER BY {FIRST_COPY}", (_json(unseen),)):
                existing.setdefault(row["url_key"], row["id"])
            fresh = [link for link in links if link.key not in existing]
            counts.new, counts.merged = len(fresh), len(links) - len(fresh)
            await db.executemany(
                """
                INSERT INTO articles (feed_id, guid, url, title, summary, summary_text, author, published,
                                      sort_at, added_at, read_at, starred_at, done_at, url_key, saved_at)
                VALUES (NULL, :url, :url, :title, :summary, :summary_text, :author, :published,
                        :added_at, :added_at, :read_at, :starred_at, :read_at, :url_key, :added_at)
                """,
                # read (archived) in the other app is done with here too: off the reading list
                [{"url": link.url, "title": link.title or link.url, "summary": link.summary,
                  "summary_text": link.summary_text, "author": link.author, "published": link.published,
                  "added_at": link.added_at or now, "read_at": (link.added_at or now) if link.read else None,
                  "starred_at": (link.added_at or now) if link.starred else None, "url_key": url_key(link.url)}
                 for link in fresh],
            )
            merged = [(existing[link.key], link) for link in links if link.key in existing]
            ids = {link.key: existing[link.key] for link in links if link.key in existing}
            if merged:
                counts.in_feeds = len({r["id"] for r in await rows_of(
                    db, "SELECT id FROM articles WHERE feed_id IS NOT NULL AND id IN (SELECT value FROM json_each(?))",
                    (_json([article_id for article_id, _ in merged]),))})
            if fresh:  # their ids, by the keys just stored (no other article has them)
                by_key = {r["url_key"]: r["id"] for r in await rows_of(
                    db, "SELECT id, url_key FROM articles WHERE url_key IN (SELECT value FROM json_each(?))",
                    (_json([link.key for link in fresh]),))}
                ids.update((link.key, by_key[link.key]) for link in fresh)
                existing.update((link.key, by_key[link.key]) for link in fresh)
            counts.ids = list(dict.fromkeys(ids[link.key] for link in links))
            # Merging only ever adds; a state already set keeps its time. Rows with nothing
            # to add are not touched, so the search index is not rewritten for nothing.
            await db.executemany(
                """
                UPDATE articles SET
                    read_at = CASE WHEN :read AND read_at IS NULL THEN :when ELSE read_at END,
                    done_at = CASE WHEN :read AND done_at IS NULL THEN :when ELSE done_at END,
                    starred_at = CASE WHEN :starred AND starred_at IS NULL THEN :when ELSE starred_at END,
                    title = CASE WHEN title = url AND :title != '' THEN :title ELSE title END,
                    added_at = min(added_at, :added_at),
                    -- a feed's article stays where its date puts it in the browse order
                    sort_at = CASE WHEN feed_id IS NULL THEN min(sort_at, :added_at) ELSE sort_at END,
                    saved_at = min(coalesce(saved_at, :when), :when)
                WHERE id = :id AND ((:read AND (read_at IS NULL OR done_at IS NULL)) OR (:starred AND starred_at IS NULL)
                                    OR (title = url AND :title != '') OR added_at > :added_at
                                    OR saved_at IS NULL OR saved_at > :when)
                """,
                [{"id": article_id, "read": link.read, "starred": link.starred, "when": link.added_at or now,
                  "title": link.title, "added_at": link.added_at or float("inf")} for article_id, link in merged],
            )
            tag_ids = await _tag_ids(db, (t for link in links for t in link.tags))
            await db.executemany(
                "INSERT INTO article_tags (article_id, tag_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(ids[link.key], tag_ids[t.lower()]) for link in links for t in link.tags],
            )
            await db.executemany(
                """
                INSERT INTO notes (article_id, text, comment, created_at)
                SELECT :id, :text, :comment, :created_at WHERE NOT EXISTS (
                    SELECT 1 FROM notes WHERE article_id = :id AND text = :text AND comment IS :comment)
                """,
                [{"id": ids[link.key], "text": text, "comment": comment, "created_at": created}
                 for link in links for text, comment, created in link.notes],
            )
            # Highlights come in detached (not placed yet): placed below if the text is there,
            # else when the article is cleaned. The same quote twice on an article is one.
            await db.executemany(
                """
                INSERT INTO highlights (article_id, quote, prefix, suffix, note, detached, created_at, updated_at)
                SELECT :id, :quote, :prefix, :suffix, :note, 1, :created_at, :created_at WHERE NOT EXISTS (
                    SELECT 1 FROM highlights WHERE article_id = :id AND quote = :quote)
                """,
                [{"id": ids[link.key], "quote": quote, "prefix": prefix, "suffix": suffix, "note": note,
                  "created_at": created or now}
                 for link in links for quote, prefix, suffix, note, created in link.highlights],
            )
            with_text = [link for link in links if link.content is not None]
            if with_text:
                have = {r["article_id"] for r in await rows_of(
                    db, "SELECT article_id FROM contents WHERE article_id IN (SELECT value FROM json_each(?))",
                    (_json([ids[link.key] for link in with_text]),))}
                stored = [link for link in with_text if ids[link.key] not in have]
                counts.contents = len(stored)
                rows = []
                for link in stored:
                    assert link.content is not None
                    html, text, words = link.content
                    rows.append({"id": ids[link.key], "title": link.title or None, "author": link.author,
                                 "published": _iso(link.published), "html": html, "text": text, "words": words,
                                 "now": now, "source": source})
                await db.executemany(
                    """
                    INSERT INTO contents (article_id, title, author, published, html, text, words, cleaned_at)
                    VALUES (:id, :title, :author, :published, :html, :text, :words, :now)
                    """, rows)
                await db.executemany(
                    "INSERT OR REPLACE INTO imported (article_id, source, imported_at) VALUES (:id, :source, :now)",
                    rows)
                # ready now: out of the line, any old failure forgotten (as a cleaning would)
                await db.executemany("DELETE FROM queue WHERE article_id = :id", rows)
                await db.executemany("UPDATE articles SET error = NULL, failed_at = NULL WHERE id = :id", rows)
            for article_id in sorted({ids[link.key] for link in links if link.highlights}):
                await reanchor(db, article_id)
        return counts

    async def import_feeds(self, feeds: Sequence[tuple[str, str, str | None, str | None]]) -> list[tuple[int, bool]]:
        """Subscribe to (url, title, site_url, folder) in one transaction; (id, created)
        each. A feed already there keeps its name, and its folder if it has one."""
        now = time.time()
        async with self._transaction() as db:
            result = []
            for url, title, site_url, folder in feeds:
                feed_id, created = await insert_feed(db, url, title, site_url, now)
                if folder:
                    await db.execute("UPDATE feeds SET folder = ? WHERE id = ? AND folder IS NULL", (folder, feed_id))
                result.append((feed_id, created))
            return result

    # -- tags, notes, folders ---------------------------------------------------------

    async def tags_of(self, article_ids: Sequence[int]) -> dict[int, list[str]]:
        rows = await self._all(
            """
            SELECT at.article_id, t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id
            WHERE at.article_id IN (SELECT value FROM json_each(?)) ORDER BY lower(t.name)
            """, (_json(list(article_ids)),))
        found: dict[int, list[str]] = {}
        for row in rows:
            found.setdefault(row["article_id"], []).append(row["name"])
        return found

    async def set_tags(self, article_ids: Sequence[int], tags: Sequence[str], *, add_only: bool = False) -> int:
        """Give these articles exactly these tags (or, with add_only, these too); returns
        how many of the articles exist. Tags nobody uses any more are dropped."""
        async with self._transaction() as db:
            present = [r["id"] for r in await rows_of(
                db, "SELECT id FROM articles WHERE id IN (SELECT value FROM json_each(?))", (_json(article_ids),))]
            tag_ids = await _tag_ids(db, tags)
            if not add_only:
                await db.executemany("DELETE FROM article_tags WHERE article_id = ?", [(i,) for i in present])
            await db.executemany(
                "INSERT INTO article_tags (article_id, tag_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(i, t) for i in present for t in tag_ids.values()])
            await db.execute("DELETE FROM tags WHERE id NOT IN (SELECT tag_id FROM article_tags)")
            return len(present)

    async def tag_many(
        self, tags: Sequence[str], *, ids: Sequence[int] | None = None, until: int | None = None,
        state: str | None = None, feed_id: int | None = None, unread: bool = False, starred: bool = False,
        match: str | None = None, tag: str | None = None, folder: str | None = None,
    ) -> int:
        """Add these tags to the articles with these ids, or to every article the filter
        matches whose id is at most `until` (nothing added since is touched); how many
        articles that was, in one transaction."""
        params: dict[str, Any] = {"now": time.time()}
        where = selection(params, ids=ids, until=until, state=state, feed_id=feed_id, unread=unread,
                          starred=starred, match=match, tag=tag, folder=folder)
        async with self._transaction() as db:
            chosen = [r["id"] for r in await rows_of(
                db, f"SELECT a.id FROM {_ARTICLE_JOINS} WHERE {' AND '.join(where) or '1'}", params)]
            tag_ids = await _tag_ids(db, tags)
            await db.executemany(
                "INSERT INTO article_tags (article_id, tag_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(i, t) for i in chosen for t in tag_ids.values()])
            return len(chosen)

    # -- the web form's imports, kept for their reports -------------------------

    async def next_import_id(self) -> int:
        """The number the next import takes: one no earlier import had (AUTOINCREMENT's
        sqlite_sequence remembers the numbers of forgotten ones). A read, so the form that
        starts an import answers even while another writer holds the database."""
        rows = await self._all(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'imports'), 0),"
            " coalesce((SELECT max(id) FROM imports), 0)) AS last")
        return int(rows[0]["last"]) + 1

    async def start_import(self, import_id: int, name: str, started_at: float, keep: int) -> None:
        """The import's row, written as it starts (a row never finished is one a restart
        cut short), forgetting the finished ones older than the latest `keep`."""
        async with self._transaction() as db:
            await db.execute("INSERT INTO imports (id, name, started_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                             (import_id, name, started_at))
            await db.execute("DELETE FROM imports WHERE finished_at IS NOT NULL AND id <= ? - ?", (import_id, keep))

    async def finish_import(self, import_id: int, name: str, started_at: float, *, outcome: str | None,
                            article_ids: bytes, error: str | None, finished_at: float) -> None:
        """Its report, written as it ends (its row too, if the start could not write it)."""
        async with self._transaction() as db:
            await db.execute(
                """
                INSERT INTO imports (id, name, started_at, finished_at, outcome, article_ids, error)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET finished_at = excluded.finished_at, outcome = excluded.outcome,
                    article_ids = excluded.article_ids, error = excluded.error
                -- its own row: a second server importing at the same moment may have taken the
                -- same number, and one never writes its report over the other's
                WHERE imports.started_at = excluded.started_at AND imports.name = excluded.name
                """,
                (import_id, name, started_at, finished_at, outcome, article_ids, error))

    async def import_record(self, import_id: int) -> dict[str, Any] | None:
        return await self._one(
            "SELECT id, name, started_at, finished_at, error, outcome, article_ids FROM imports WHERE id = ?",
            (import_id,))

    async def all_tags(self) -> list[dict[str, Any]]:
        return await self._all(
            """
            SELECT t.name, count(*) AS articles FROM tags t JOIN article_tags at ON at.tag_id = t.id
            GROUP BY t.id ORDER BY lower(t.name)
            """)

    async def notes_of(self, article_id: int) -> list[dict[str, Any]]:
        return await self._all(
            "SELECT text, comment, created_at FROM notes WHERE article_id = ? ORDER BY id", (article_id,))

    async def notes_for(self, article_ids: Sequence[int]) -> dict[int, list[NoteRow]]:
        found: dict[int, list[NoteRow]] = {}
        for row in await self._all(
                "SELECT article_id, text, comment, created_at FROM notes"
                " WHERE article_id IN (SELECT value FROM json_each(?)) ORDER BY id", (_json(list(article_ids)),)):
            note: NoteRow = {"text": row["text"], "comment": row["comment"], "created_at": row["created_at"]}
            found.setdefault(row["article_id"], []).append(note)
        return found

    async def set_folder(self, feed_id: int, folder: str | None) -> bool:
        async with self._transaction() as db:
            cur = await db.execute("UPDATE feeds SET folder = ? WHERE id = ?", (folder, feed_id))
            return cur.rowcount > 0


def _iso(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).isoformat()
