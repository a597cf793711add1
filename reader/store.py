"""Storage: every SQL statement in reader lives in this module.

The database file is the only state. Views, the worker and the CLI call the named
functions below (`enqueue`, `take_next`, `claim`, `store_cleaned`, ...) and never
build SQL themselves.

Two connections per Store, both in autocommit mode:

* the *read* connection runs single statements and fetches every row in the same
  call (`execute_fetchall`), so no cursor is ever left half-read across an `await`;
* the *write* connection runs every state change inside `BEGIN IMMEDIATE ... COMMIT`,
  one task at a time (`self._write_lock`). Tasks that shared one aiosqlite connection
  would share its transaction: a "win" by one task could be rolled back by another.
  The asyncio lock only serialises use of that one connection object inside this
  process; who may extract an article is decided by the claim row, which every
  process sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite


# The schema of version 1, the first released one. Later versions are reached by the
# numbered steps in MIGRATIONS, never by editing this string.
SCHEMA_V1 = """
CREATE TABLE feeds (
    id            INTEGER PRIMARY KEY,
    url           TEXT NOT NULL UNIQUE,
    title         TEXT NOT NULL DEFAULT '',
    site_url      TEXT,
    -- conditional GET: sent back as If-None-Match / If-Modified-Since
    etag          TEXT,
    last_modified TEXT,
    added_at      REAL NOT NULL,
    refreshed_at  REAL,          -- last attempt, successful or not
    error         TEXT           -- why the last attempt failed; NULL when it worked
);

CREATE TABLE articles (
    id         INTEGER PRIMARY KEY,
    feed_id    INTEGER REFERENCES feeds(id) ON DELETE CASCADE,   -- NULL: a saved link
    guid       TEXT NOT NULL,
    url        TEXT NOT NULL,
    title      TEXT NOT NULL,
    summary    TEXT NOT NULL DEFAULT '',   -- the feed's own text, sanitized HTML
    author     TEXT,
    published  REAL,
    sort_at    REAL NOT NULL,               -- published, else first seen: browse order
    added_at   REAL NOT NULL,
    error      TEXT,                        -- why the last extraction failed
    failed_at  REAL,
    UNIQUE (feed_id, guid)
);
-- speed up the browse page: newest first, keyset pagination on (sort_at, id)
CREATE INDEX articles_by_sort ON articles (sort_at DESC, id DESC);
-- speed up the browse page filtered to one feed
CREATE INDEX articles_by_feed ON articles (feed_id, sort_at DESC, id DESC);

-- Only the tap handlers insert here. Service order is (due_at, seq): due_at is the tap
-- time, moved earlier by the next-lane lead for "read next" taps (see Store.enqueue).
CREATE TABLE queue (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    article_id INTEGER NOT NULL UNIQUE REFERENCES articles(id) ON DELETE CASCADE,
    lane       TEXT NOT NULL DEFAULT 'normal' CHECK (lane IN ('normal', 'next')),
    tapped_at  REAL NOT NULL,
    due_at     REAL NOT NULL
);
-- speed up take_next and positions: the service order
CREATE INDEX queue_by_due ON queue (due_at, seq);

-- Live worker processes and how many articles each cleans at once: for wait estimates.
CREATE TABLE workers (
    name       TEXT PRIMARY KEY,
    slots      INTEGER NOT NULL,
    expires_at REAL NOT NULL
);

-- Who is extracting an article right now. One row per article at most; the holder
-- is identified by its ledger run, which fences renewals and releases.
CREATE TABLE claims (
    article_id INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    run_id     INTEGER NOT NULL,
    expires_at REAL NOT NULL
);

CREATE TABLE contents (
    article_id INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    title      TEXT,
    author     TEXT,
    published  TEXT,
    html       TEXT NOT NULL,    -- sanitized
    text       TEXT NOT NULL,
    words      INTEGER NOT NULL,
    cleaned_at REAL NOT NULL
);

-- The ledger: one row per extraction started. No foreign key: it outlives articles.
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    article_id  INTEGER NOT NULL,
    lane        TEXT NOT NULL CHECK (lane IN ('queue', 'direct')),
    worker      TEXT NOT NULL,
    started_at  REAL NOT NULL,
    finished_at REAL,
    outcome     TEXT CHECK (outcome IN ('cached', 'failed', 'abandoned')),
    error       TEXT
);
-- speed up /stats and the "is anything in flight" checks
CREATE INDEX runs_by_outcome ON runs (outcome);
"""

# Version 2: the library. Reading state, the summary as plain text, full-text search.
SCHEMA_V2_COLUMNS = """
-- reading state: when opened (or marked read; NULL = unread) and when starred
ALTER TABLE articles ADD COLUMN read_at REAL;
ALTER TABLE articles ADD COLUMN starred_at REAL;
-- the feed's summary as plain text: card excerpts and the search index
ALTER TABLE articles ADD COLUMN summary_text TEXT NOT NULL DEFAULT '';
-- speed up the starred filter
CREATE INDEX articles_starred ON articles (starred_at) WHERE starred_at IS NOT NULL;
-- speed up unread counts per feed
CREATE INDEX articles_unread ON articles (feed_id) WHERE read_at IS NULL;
-- speed up the failed filter: failures are rare, so a scan of the browse order would be long
CREATE INDEX articles_failed ON articles (sort_at DESC, id DESC) WHERE error IS NOT NULL;
-- speed up "is this link saved already"
CREATE INDEX articles_saved ON articles (url) WHERE feed_id IS NULL;
"""

# rowid = article id. Kept in step by triggers, so no code path can forget it.
SCHEMA_V2_SEARCH = """
CREATE VIRTUAL TABLE search USING fts5 (
    title, summary, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO search (rowid, title, summary, body)
    SELECT a.id, a.title, a.summary_text, coalesce(c.text, '')
    FROM articles a LEFT JOIN contents c ON c.article_id = a.id;
CREATE TRIGGER articles_search_insert AFTER INSERT ON articles BEGIN
    INSERT INTO search (rowid, title, summary, body) VALUES (new.id, new.title, new.summary_text, '');
END;
CREATE TRIGGER articles_search_update AFTER UPDATE OF title, summary_text ON articles BEGIN
    UPDATE search SET title = new.title, summary = new.summary_text WHERE rowid = new.id;
END;
CREATE TRIGGER articles_search_delete AFTER DELETE ON articles BEGIN
    DELETE FROM search WHERE rowid = old.id;
END;
CREATE TRIGGER contents_search AFTER INSERT ON contents BEGIN
    UPDATE search SET body = new.text WHERE rowid = new.article_id;
END;
"""


async def _run_script(db: aiosqlite.Connection, script: str) -> None:
    for statement in _statements(script):
        await db.execute(statement)


async def _v0_to_v1(db: aiosqlite.Connection) -> None:
    await _run_script(db, SCHEMA_V1)


async def _v1_to_v2(db: aiosqlite.Connection) -> None:
    from .sanitize import plain_text

    await _run_script(db, SCHEMA_V2_COLUMNS)
    rows = await db.execute_fetchall("SELECT id, summary FROM articles WHERE summary != ''")
    await db.executemany(
        "UPDATE articles SET summary_text = ? WHERE id = ?", [(plain_text(r["summary"]), r["id"]) for r in rows]
    )
    await _run_script(db, SCHEMA_V2_SEARCH)


# MIGRATIONS[n] takes a database from user_version n to n + 1, inside one transaction.
MIGRATIONS = [_v0_to_v1, _v1_to_v2]

STATES = ("new", "queued", "cleaning", "ready", "failed")

# The state of an article, derived (never stored) so it cannot drift from the rows
# that define it. Needs the aliases a, q, cl, c and the :now parameter.
_STATE = """
CASE
    WHEN c.article_id IS NOT NULL THEN 'ready'
    WHEN cl.expires_at > :now THEN 'cleaning'
    WHEN q.seq IS NOT NULL THEN 'queued'
    WHEN a.error IS NOT NULL THEN 'failed'
    ELSE 'new'
END
"""

_ARTICLE_COLUMNS = f"""
    a.id, a.feed_id, a.guid, a.url, a.title, a.summary, a.author, a.published, a.sort_at,
    a.added_at, a.error, a.failed_at, a.read_at, a.starred_at, a.summary_text,
    f.title AS feed_title, q.seq AS queue_seq, q.due_at, q.lane,
    {_STATE} AS state
"""

_ARTICLE_LEFT_JOINS = """
    LEFT JOIN feeds f ON f.id = a.feed_id
    LEFT JOIN queue q ON q.article_id = a.id
    LEFT JOIN claims cl ON cl.article_id = a.id
    LEFT JOIN contents c ON c.article_id = a.id
"""
_ARTICLE_JOINS = "articles a" + _ARTICLE_LEFT_JOINS

# The workers' service order over queue rows q that nobody is cleaning.
_SERVICE_ORDER = "ORDER BY q.due_at, q.seq"

_WAITING = "NOT EXISTS (SELECT 1 FROM claims cl WHERE cl.article_id = q.article_id AND cl.expires_at > :now)"


@dataclass(frozen=True)
class Run:
    """A claim won: this run may extract the article until expires_at (renewable)."""

    id: int
    article_id: int
    url: str
    lane: str


def _row(row: sqlite3.Row | None) -> dict[str, Any] | None:
    return dict(row) if row is not None else None


async def _configure(conn: aiosqlite.Connection) -> None:
    conn.row_factory = sqlite3.Row
    await conn.execute("PRAGMA busy_timeout = 30000")
    await conn.execute("PRAGMA foreign_keys = ON")
    await conn.execute("PRAGMA synchronous = NORMAL")


class Store:
    def __init__(self, path: Path, read: aiosqlite.Connection, write: aiosqlite.Connection):
        self.path = path
        self._read = read
        self._write = write
        self._write_lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: str | Path) -> "Store":
        path = Path(path)
        write = await aiosqlite.connect(path, isolation_level=None)
        try:
            await _configure(write)
            await write.execute("PRAGMA journal_mode = WAL")
            await _migrate(write)
            read = await aiosqlite.connect(path, isolation_level=None)
            await _configure(read)
        except BaseException:
            await write.close()
            raise
        return cls(path, read, write)

    async def close(self) -> None:
        await self._read.close()
        await self._write.close()

    async def __aenter__(self) -> "Store":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- plumbing ---------------------------------------------------------------

    async def _all(self, sql: str, params: dict | Sequence = ()) -> list[dict[str, Any]]:
        return [dict(r) for r in await self._read.execute_fetchall(sql, params)]

    async def _one(self, sql: str, params: dict | Sequence = ()) -> dict[str, Any] | None:
        rows = await self._read.execute_fetchall(sql, params)
        return _row(rows[0]) if rows else None

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._write_lock:
            await self._write.execute("BEGIN IMMEDIATE")
            try:
                yield self._write
            except BaseException:
                await self._write.execute("ROLLBACK")
                raise
            else:
                await self._write.execute("COMMIT")

    # -- feeds ------------------------------------------------------------------

    async def add_feed(self, url: str, title: str = "") -> tuple[int, bool]:
        """Subscribe; returns (feed id, created). Subscribing twice is harmless."""
        async with self._transaction() as db:
            rows = await db.execute_fetchall(
                "INSERT INTO feeds (url, title, added_at) VALUES (?, ?, ?)"
                " ON CONFLICT (url) DO NOTHING RETURNING id",
                (url, title, time.time()),
            )
            if rows:
                return rows[0]["id"], True
            rows = await db.execute_fetchall("SELECT id FROM feeds WHERE url = ?", (url,))
            return rows[0]["id"], False

    async def list_feeds(self, *, counts: bool = True) -> list[dict[str, Any]]:
        """Every feed; with counts, how many articles each has and how many are unread
        (costs a count per feed: the browse page's feed filter asks without)."""
        if not counts:
            return await self._all("SELECT f.* FROM feeds f ORDER BY lower(f.title), f.id")
        return await self._all(
            """
            SELECT f.*,
                (SELECT count(*) FROM articles a WHERE a.feed_id = f.id) AS articles,
                (SELECT count(*) FROM articles a WHERE a.feed_id = f.id AND a.read_at IS NULL) AS unread
            FROM feeds f ORDER BY lower(f.title), f.id
            """
        )

    async def rename_feed(self, feed_id: int, title: str) -> bool:
        async with self._transaction() as db:
            cur = await db.execute("UPDATE feeds SET title = ? WHERE id = ?", (title, feed_id))
            return cur.rowcount > 0

    async def get_feed(self, feed_id: int) -> dict[str, Any] | None:
        return await self._one("SELECT * FROM feeds WHERE id = ?", (feed_id,))

    async def delete_feed(self, feed_id: int) -> bool:
        async with self._transaction() as db:
            cur = await db.execute("DELETE FROM feeds WHERE id = ?", (feed_id,))
            return cur.rowcount > 0

    async def feeds_due(self, older_than: float) -> list[dict[str, Any]]:
        return await self._all(
            "SELECT * FROM feeds WHERE refreshed_at IS NULL OR refreshed_at < ? ORDER BY id",
            (older_than,),
        )

    async def store_feed_entries(
        self,
        feed_id: int,
        *,
        title: str | None,
        site_url: str | None,
        etag: str | None,
        last_modified: str | None,
        entries: Iterable[dict[str, Any]],
    ) -> int:
        """Record a successful fetch: new headlines in, feed error cleared. Returns how many
        articles were new. Headlines only: nothing here touches the queue."""
        now = time.time()
        async with self._transaction() as db:
            await db.execute(
                """
                -- a title once set (by the first fetch, a rename or an OPML import) is the
                -- person's: later fetches do not overwrite it
                UPDATE feeds SET title = CASE WHEN title = '' THEN coalesce(:title, '') ELSE title END,
                    site_url = coalesce(:site_url, site_url), etag = :etag,
                    last_modified = :last_modified, refreshed_at = :now, error = NULL
                WHERE id = :id
                """,
                {"title": title, "site_url": site_url, "etag": etag,
                 "last_modified": last_modified, "now": now, "id": feed_id},
            )
            count = "SELECT count(*) AS n FROM articles WHERE feed_id = ?"
            before = (await db.execute_fetchall(count, (feed_id,)))[0]["n"]
            await db.executemany(
                """
                INSERT INTO articles (feed_id, guid, url, title, summary, summary_text, author,
                                      published, sort_at, added_at)
                VALUES (:feed_id, :guid, :url, :title, :summary, :summary_text, :author, :published,
                        coalesce(:published, :now), :now)
                ON CONFLICT (feed_id, guid) DO UPDATE SET
                    title = excluded.title, summary = excluded.summary, url = excluded.url,
                    author = excluded.author, summary_text = excluded.summary_text
                WHERE (title, summary, url, coalesce(author, ''))
                   IS NOT (excluded.title, excluded.summary, excluded.url, coalesce(excluded.author, ''))
                """,
                [{"summary_text": "", **e, "feed_id": feed_id, "now": now} for e in entries],
            )
            after = (await db.execute_fetchall(count, (feed_id,)))[0]["n"]
            return after - before

    async def store_feed_not_modified(self, feed_id: int) -> None:
        async with self._transaction() as db:
            await db.execute(
                "UPDATE feeds SET refreshed_at = ?, error = NULL WHERE id = ?", (time.time(), feed_id)
            )

    async def store_feed_error(self, feed_id: int, error: str) -> None:
        """The feed keeps its articles; only its error line changes."""
        async with self._transaction() as db:
            await db.execute(
                "UPDATE feeds SET refreshed_at = ?, error = ? WHERE id = ?", (time.time(), error, feed_id)
            )

    # -- articles ---------------------------------------------------------------

    async def get_article(self, article_id: int) -> dict[str, Any] | None:
        now = time.time()
        article = await self._one(
            f"SELECT {_ARTICLE_COLUMNS} FROM {_ARTICLE_JOINS} WHERE a.id = :id",
            {"id": article_id, "now": now},
        )
        if article is not None:
            article["position"] = await self._position(article, now)
        return article

    async def reading(self, article_id: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """An article and its cleaned content (None if not cleaned) in one query: opening a
        ready article costs one read."""
        now = time.time()
        article = await self._one(
            f"""
            SELECT {_ARTICLE_COLUMNS}, c.title AS c_title, c.author AS c_author,
                   c.published AS c_published, c.html AS c_html, c.text AS c_text,
                   c.words AS c_words, c.cleaned_at AS c_cleaned_at
            FROM {_ARTICLE_JOINS} WHERE a.id = :id
            """,
            {"id": article_id, "now": now},
        )
        if article is None:
            return None, None
        content = {key[2:]: article.pop(key) for key in list(article) if key.startswith("c_")}
        if content["html"] is None:
            content = None
        else:
            content["article_id"] = article_id
        article["position"] = await self._position(article, now)
        return article, content

    async def list_articles(
        self,
        *,
        state: str | None = None,
        feed_id: int | None = None,
        before: int | None = None,
        ids: Sequence[int] | None = None,
        unread: bool = False,
        starred: bool = False,
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        """Newest first. `before` is an article id: the page starts right after it
        (keyset pagination, so a deep page costs what the first one does)."""
        now = time.time()
        where, params = [], {"now": now, "limit": limit}
        if ids is not None:
            where.append("a.id IN (SELECT value FROM json_each(:ids))")
            params["ids"] = json.dumps([int(i) for i in ids])
        if before is not None:
            where.append(
                "(a.sort_at, a.id) < (SELECT sort_at, id FROM articles WHERE id = :before)"
            )
            params["before"] = before
        if feed_id is not None:
            where.append("a.feed_id = :feed_id")
            params["feed_id"] = feed_id
        if state is not None:
            where.append(f"({_STATE}) = :state")
            params["state"] = state
            if state == "failed":  # lets the planner walk the small articles_failed index
                where.append("a.error IS NOT NULL")
        if unread:
            where.append("a.read_at IS NULL")
        if starred:
            where.append("a.starred_at IS NOT NULL")
        sql = f"SELECT {_ARTICLE_COLUMNS} FROM {_ARTICLE_JOINS}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY a.sort_at DESC, a.id DESC LIMIT :limit"
        return await self._with_positions(await self._all(sql, params), now)

    async def line(self) -> list[dict[str, Any]]:
        """Every queued article in service order: those being cleaned first, then the
        waiting ones in the order the workers will take them."""
        now = time.time()
        articles = await self._all(
            f"""
            SELECT {_ARTICLE_COLUMNS} FROM {_ARTICLE_JOINS}
            WHERE q.seq IS NOT NULL AND c.article_id IS NULL
            ORDER BY coalesce(cl.expires_at > :now, 0) DESC, q.due_at, q.seq
            """,
            {"now": now},
        )
        return await self._with_positions(articles, now)

    async def _with_positions(self, articles: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
        positions = {}
        if any(a["state"] == "queued" for a in articles):
            positions = {row["article_id"]: row["position"] for row in await self.queue(now)}
        for a in articles:
            a["position"] = positions.get(a["id"])
        return articles

    async def count_articles(self) -> int:
        row = await self._one("SELECT count(*) AS n FROM articles")
        return row["n"]

    async def _position(self, article: dict[str, Any], now: float) -> int | None:
        if article["state"] != "queued":
            return None
        row = await self._one(
            f"SELECT count(*) AS ahead FROM queue q WHERE (q.due_at, q.seq) < (:due, :seq) AND {_WAITING}",
            {"due": article["due_at"], "seq": article["queue_seq"], "now": now},
        )
        return row["ahead"] + 1

    async def mark_read(self, article_id: int, read: bool = True) -> bool:
        async with self._transaction() as db:
            cur = await db.execute(
                "UPDATE articles SET read_at = CASE WHEN :read THEN coalesce(read_at, :now) END WHERE id = :id",
                {"read": read, "now": time.time(), "id": article_id},
            )
            return cur.rowcount > 0

    async def star(self, article_id: int, starred: bool = True) -> bool:
        async with self._transaction() as db:
            cur = await db.execute(
                "UPDATE articles SET starred_at = CASE WHEN :starred THEN coalesce(starred_at, :now) END"
                " WHERE id = :id",
                {"starred": starred, "now": time.time(), "id": article_id},
            )
            return cur.rowcount > 0

    async def save_link(self, url: str, title: str | None = None) -> tuple[int, bool]:
        """Save any link as an article (no feed). Returns (article id, created); saving the
        same link twice gives the same article. Nothing is fetched: that takes a tap."""
        now = time.time()
        async with self._transaction() as db:
            rows = await db.execute_fetchall(
                "SELECT id FROM articles WHERE feed_id IS NULL AND url = ?", (url,)
            )
            if rows:
                return rows[0]["id"], False
            rows = await db.execute_fetchall(
                "INSERT INTO articles (feed_id, guid, url, title, sort_at, added_at)"
                " VALUES (NULL, :url, :url, :title, :now, :now) RETURNING id",
                {"url": url, "title": title or url, "now": now},
            )
            return rows[0]["id"], True

    async def search(self, query: str, *, limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
        """Full-text search, best match first, each with a snippet whose matches are
        wrapped in \x02 ... \x03 (the caller escapes the text and turns those into marks).
        `query` is an FTS5 query: build it with `fts_query`."""
        now = time.time()
        # Rank first and cut to one page, then build snippets and join the article
        # columns for that page only: snippets for every match cost 3x the ranking.
        articles = await self._all(
            f"""
            WITH hits AS (
                SELECT rowid AS id, bm25(search, 8.0, 2.0, 1.0) AS score
                FROM search WHERE search MATCH :query
                ORDER BY score, rowid DESC
                LIMIT :limit OFFSET :offset
            )
            SELECT {_ARTICLE_COLUMNS},
                   snippet(search, -1, char(2), char(3), '…', 16) AS snippet
            FROM hits JOIN search ON search.rowid = hits.id
                 JOIN articles a ON a.id = hits.id {_ARTICLE_LEFT_JOINS}
            WHERE search MATCH :query
            ORDER BY hits.score, hits.id DESC
            """,
            {"query": query, "now": now, "limit": limit, "offset": offset},
        )
        return await self._with_positions(articles, now)

    # -- the queue: filled only by taps ------------------------------------------

    async def enqueue(self, article_id: int, lane: str = "normal", next_lead: float = 600.0) -> bool:
        """A person's tap. Returns False if the article does not exist. Tapping twice is
        harmless; an article already cleaned is not queued again; tapping a queued article
        with the other lane moves it (its tap time stays).

        The lane rule: a "next" tap is due `next_lead` seconds before its tap time, so it
        goes ahead of every normal article tapped less than `next_lead` before it, and
        behind those tapped earlier. No normal article is ever passed by a "next" tap made
        more than `next_lead` after it: the normal lane cannot starve."""
        now = time.time()
        async with self._transaction() as db:
            exists = await db.execute_fetchall(
                "SELECT (SELECT 1 FROM contents WHERE article_id = :id) AS ready"
                " FROM articles WHERE id = :id",
                {"id": article_id},
            )
            if not exists:
                return False
            if exists[0]["ready"]:
                return True
            await db.execute(
                """
                INSERT INTO queue (article_id, lane, tapped_at, due_at)
                VALUES (:id, :lane, :now, :now - :lead)
                ON CONFLICT (article_id) DO UPDATE SET
                    lane = excluded.lane, due_at = queue.tapped_at - :lead
                """,
                {"id": article_id, "lane": lane, "now": now, "lead": next_lead if lane == "next" else 0.0},
            )
            return True

    async def dequeue(self, article_id: int) -> bool:
        """Take an article out of the line. One already being cleaned is finished and kept:
        that work was paid for."""
        async with self._transaction() as db:
            cur = await db.execute("DELETE FROM queue WHERE article_id = ?", (article_id,))
            return cur.rowcount > 0

    async def queue(self, now: float | None = None) -> list[dict[str, Any]]:
        """The line in service order, with positions; items being cleaned are not in line."""
        rows = await self._all(
            f"""
            SELECT q.article_id, q.lane, q.tapped_at, q.due_at, a.title, a.url
            FROM queue q JOIN articles a ON a.id = q.article_id
            WHERE {_WAITING} {_SERVICE_ORDER}
            """,
            {"now": time.time() if now is None else now},
        )
        for position, row in enumerate(rows, start=1):
            row["position"] = position
        return rows

    # -- claims: one per article, shared by the worker and a direct open ------------

    async def take_next(self, worker: str, ttl: float) -> Run | None:
        """A worker takes the next article in line and makes it its own, in one
        transaction: pick, claim and open a ledger run, with no gap between them."""
        now = time.time()
        async with self._transaction() as db:
            rows = await db.execute_fetchall(
                f"SELECT q.article_id FROM queue q WHERE {_WAITING} {_SERVICE_ORDER} LIMIT 1",
                {"now": now},
            )
            if not rows:
                return None
            return await _claim_in(db, rows[0]["article_id"], worker, "queue", ttl, now)

    async def claim(self, article_id: int, worker: str, ttl: float) -> Run | None:
        """The direct lane: claim one article, unless it is cleaned already or someone
        holds a live claim on it."""
        now = time.time()
        async with self._transaction() as db:
            rows = await db.execute_fetchall(
                """
                SELECT 1 FROM articles a WHERE a.id = :id
                AND NOT EXISTS (SELECT 1 FROM contents WHERE article_id = :id)
                AND NOT EXISTS (SELECT 1 FROM claims WHERE article_id = :id AND expires_at > :now)
                """,
                {"id": article_id, "now": now},
            )
            if not rows:
                return None
            return await _claim_in(db, article_id, worker, "direct", ttl, now)

    async def renew(self, run: Run, ttl: float) -> bool:
        """Extend a live claim. Fenced: a run whose claim was taken over cannot renew."""
        async with self._transaction() as db:
            cur = await db.execute(
                "UPDATE claims SET expires_at = ? WHERE article_id = ? AND run_id = ?",
                (time.time() + ttl, run.article_id, run.id),
            )
            return cur.rowcount > 0

    async def release(self, run: Run) -> None:
        """Give a claim back without a result (shutdown): the run is abandoned and the
        article, still in the queue if it was queued, goes to the next taker."""
        async with self._transaction() as db:
            await _finish(db, run, "abandoned", None)

    async def claim_holder(self, article_id: int) -> dict[str, Any] | None:
        return await self._one("SELECT * FROM claims WHERE article_id = ?", (article_id,))

    async def store_cleaned(self, run: Run, content: dict[str, Any]) -> None:
        """Keep the result: content in, out of the queue, error cleared, run cached,
        claim released. A result that arrives after the claim was lost is still kept
        (it was paid for); the first stored content wins."""
        async with self._transaction() as db:
            await db.execute(
                """
                INSERT INTO contents (article_id, title, author, published, html, text, words, cleaned_at)
                VALUES (:article_id, :title, :author, :published, :html, :text, :words, :now)
                ON CONFLICT (article_id) DO NOTHING
                """,
                {**content, "article_id": run.article_id, "now": time.time()},
            )
            # A saved link knows only its URL until its page is read: take the page's title.
            await db.execute(
                """
                UPDATE articles SET error = NULL, failed_at = NULL,
                    title = CASE WHEN feed_id IS NULL AND title = url AND :title IS NOT NULL
                                 THEN :title ELSE title END
                WHERE id = :id
                """,
                {"id": run.article_id, "title": content.get("title")},
            )
            await db.execute("DELETE FROM queue WHERE article_id = ?", (run.article_id,))
            await _finish(db, run, "cached", None)

    async def store_failed(self, run: Run, error: str) -> None:
        """Record why extraction failed. Whatever good content exists stays untouched. A
        run that no longer holds the claim (it expired and passed on) only closes its
        ledger row: the article's state belongs to the new holder."""
        async with self._transaction() as db:
            holds = await db.execute_fetchall(
                "SELECT 1 FROM claims WHERE article_id = ? AND run_id = ?", (run.article_id, run.id)
            )
            if holds:
                await db.execute(
                    "UPDATE articles SET error = ?, failed_at = ? WHERE id = ?",
                    (error, time.time(), run.article_id),
                )
                await db.execute("DELETE FROM queue WHERE article_id = ?", (run.article_id,))
            await _finish(db, run, "failed", error)

    async def get_content(self, article_id: int) -> dict[str, Any] | None:
        return await self._one("SELECT * FROM contents WHERE article_id = ?", (article_id,))

    # -- workers and the ledger ---------------------------------------------------------

    async def worker_alive(self, name: str, slots: int, ttl: float) -> None:
        """A worker process says it is running, with how many articles it cleans at once."""
        async with self._transaction() as db:
            await db.execute(
                "INSERT INTO workers (name, slots, expires_at) VALUES (?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET slots = excluded.slots, expires_at = excluded.expires_at",
                (name, slots, time.time() + ttl),
            )
            await db.execute("DELETE FROM workers WHERE expires_at < ?", (time.time() - 3600,))

    async def worker_gone(self, name: str) -> None:
        async with self._transaction() as db:
            await db.execute("DELETE FROM workers WHERE name = ?", (name,))

    async def capacity(self) -> int:
        """Articles the live workers clean at once, all processes together."""
        row = await self._one("SELECT coalesce(sum(slots), 0) AS n FROM workers WHERE expires_at > ?", (time.time(),))
        return row["n"]

    async def recent_durations(self, limit: int = 20) -> list[float]:
        """Seconds the latest finished extractions took, newest first: wait estimates."""
        rows = await self._all(
            "SELECT finished_at - started_at AS seconds FROM runs"
            " WHERE outcome IN ('cached', 'failed') ORDER BY finished_at DESC LIMIT ?",
            (limit,),
        )
        return [r["seconds"] for r in rows]


    async def stats(self) -> dict[str, int]:
        row = await self._one(
            """
            SELECT count(*) AS started,
                   count(*) FILTER (WHERE outcome = 'cached') AS cached,
                   count(*) FILTER (WHERE outcome = 'failed') AS failed,
                   count(*) FILTER (WHERE outcome = 'abandoned') AS abandoned,
                   count(*) FILTER (WHERE outcome IS NULL) AS running
            FROM runs
            """
        )
        row["queued"] = (await self._one("SELECT count(*) AS n FROM queue"))["n"]
        return row

    async def runs(self, article_id: int | None = None) -> list[dict[str, Any]]:
        if article_id is None:
            return await self._all("SELECT * FROM runs ORDER BY id")
        return await self._all("SELECT * FROM runs WHERE article_id = ? ORDER BY id", (article_id,))

    # -- library and portability: subscriptions in bulk, export and import ------------------
    # (reader/discover.py, reader/opml.py, reader/portability.py)

    async def feed_by_url(self, url: str) -> dict[str, Any] | None:
        return await self._one("SELECT * FROM feeds WHERE url = ?", (url,))

    async def subscribe_many(self, feeds: Sequence[dict[str, Any]]) -> list[tuple[int, bool]]:
        """Subscribe to many feeds ({url, title, site_url}) in one transaction; returns
        (feed id, created) for each. Existing subscriptions are left exactly as they are."""
        now = time.time()
        results = []
        async with self._transaction() as db:
            for feed in feeds:
                rows = await db.execute_fetchall(
                    "INSERT INTO feeds (url, title, site_url, added_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (url) DO NOTHING RETURNING id",
                    (feed["url"], feed.get("title") or "", feed.get("site_url"), now),
                )
                if rows:
                    results.append((rows[0]["id"], True))
                else:
                    rows = await db.execute_fetchall("SELECT id FROM feeds WHERE url = ?", (feed["url"],))
                    results.append((rows[0]["id"], False))
        return results

    async def export_articles(self) -> list[dict[str, Any]]:
        """What an export keeps: saved links, starred articles and every cleaned article,
        with its feed's URL, its reading state and its cleaned content (c_* columns)."""
        return await self._all(
            """
            SELECT a.id, a.guid, a.url, a.title, a.summary, a.summary_text, a.author, a.published,
                   a.sort_at, a.added_at, a.read_at, a.starred_at,
                   f.url AS feed_url, f.title AS feed_title,
                   c.article_id IS NOT NULL AS cleaned, c.title AS c_title, c.author AS c_author,
                   c.published AS c_published, c.html AS c_html, c.text AS c_text, c.words AS c_words,
                   c.cleaned_at AS c_cleaned_at
            FROM articles a
            LEFT JOIN feeds f ON f.id = a.feed_id
            LEFT JOIN contents c ON c.article_id = a.id
            WHERE a.feed_id IS NULL OR a.starred_at IS NOT NULL OR c.article_id IS NOT NULL
            ORDER BY a.id
            """
        )

    async def import_articles(self, records: Sequence[dict[str, Any]]) -> dict[str, int]:
        """Bring exported articles back, in one transaction, idempotently: an article is
        found by (feed URL, guid), a saved link by its URL; missing ones are inserted,
        existing ones only gain what they lack (a read or starred time, cleaned content).
        Nothing that is already there is overwritten, so importing twice changes nothing.
        Records are validated and sanitized by the caller (portability.py)."""
        counts = {"articles": 0, "contents": 0, "states": 0, "feeds": 0}
        now = time.time()
        async with self._transaction() as db:
            for r in records:
                feed_id = None
                if r.get("feed_url"):
                    rows = await db.execute_fetchall(
                        "INSERT INTO feeds (url, title, added_at) VALUES (?, ?, ?)"
                        " ON CONFLICT (url) DO NOTHING RETURNING id",
                        (r["feed_url"], r.get("feed_title") or "", now),
                    )
                    if rows:
                        counts["feeds"] += 1
                        feed_id = rows[0]["id"]
                    else:
                        feed_id = (await db.execute_fetchall(
                            "SELECT id FROM feeds WHERE url = ?", (r["feed_url"],)))[0]["id"]
                    rows = await db.execute_fetchall(
                        "SELECT id FROM articles WHERE feed_id = ? AND guid = ?", (feed_id, r["guid"]))
                else:
                    rows = await db.execute_fetchall(
                        "SELECT id FROM articles WHERE feed_id IS NULL AND url = ?", (r["url"],))
                if rows:
                    article_id = rows[0]["id"]
                    cur = await db.execute(
                        """
                        UPDATE articles SET read_at = coalesce(read_at, :read_at),
                                            starred_at = coalesce(starred_at, :starred_at)
                        WHERE id = :id AND ((read_at IS NULL AND :read_at IS NOT NULL)
                                            OR (starred_at IS NULL AND :starred_at IS NOT NULL))
                        """,
                        {"id": article_id, "read_at": r.get("read_at"), "starred_at": r.get("starred_at")},
                    )
                    counts["states"] += cur.rowcount > 0
                else:
                    rows = await db.execute_fetchall(
                        """
                        INSERT INTO articles (feed_id, guid, url, title, summary, summary_text, author,
                                              published, sort_at, added_at, read_at, starred_at)
                        VALUES (:feed_id, :guid, :url, :title, :summary, :summary_text, :author,
                                :published, :sort_at, :added_at, :read_at, :starred_at)
                        RETURNING id
                        """,
                        {**{k: r.get(k) for k in ("url", "title", "summary", "summary_text", "author",
                                                  "published", "read_at", "starred_at")},
                         "feed_id": feed_id, "guid": r.get("guid") or r["url"],
                         "sort_at": r.get("sort_at") or r.get("published") or now,
                         "added_at": r.get("added_at") or now},
                    )
                    article_id = rows[0]["id"]
                    counts["articles"] += 1
                content = r.get("content")
                if content:
                    rows = await db.execute_fetchall(
                        """
                        INSERT INTO contents (article_id, title, author, published, html, text, words, cleaned_at)
                        VALUES (:article_id, :title, :author, :published, :html, :text, :words, :cleaned_at)
                        ON CONFLICT (article_id) DO NOTHING RETURNING article_id
                        """,
                        {**content, "article_id": article_id, "cleaned_at": content.get("cleaned_at") or now},
                    )
                    if rows:
                        counts["contents"] += 1
                        # cleaned now: out of the line, any old error gone (as store_cleaned does)
                        await db.execute("DELETE FROM queue WHERE article_id = ?", (article_id,))
                        await db.execute(
                            "UPDATE articles SET error = NULL, failed_at = NULL WHERE id = ?", (article_id,))
        return counts


async def _claim_in(
    db: aiosqlite.Connection, article_id: int, worker: str, lane: str, ttl: float, now: float
) -> Run:
    """Inside a write transaction that has checked nobody holds a live claim: open a
    ledger run and make its claim the article's. An expired claim's run is marked
    abandoned (its holder died or stalled past the expiry)."""
    await db.execute(
        """
        UPDATE runs SET outcome = 'abandoned', finished_at = :now,
            error = 'claim expired before the run finished'
        WHERE id = (SELECT run_id FROM claims WHERE article_id = :id) AND outcome IS NULL
        """,
        {"id": article_id, "now": now},
    )
    rows = await db.execute_fetchall(
        "INSERT INTO runs (article_id, lane, worker, started_at) VALUES (?, ?, ?, ?) RETURNING id",
        (article_id, lane, worker, now),
    )
    run_id = rows[0]["id"]
    await db.execute(
        "INSERT INTO claims (article_id, run_id, expires_at) VALUES (?, ?, ?)"
        " ON CONFLICT (article_id) DO UPDATE SET run_id = excluded.run_id, expires_at = excluded.expires_at",
        (article_id, run_id, now + ttl),
    )
    url = (await db.execute_fetchall("SELECT url FROM articles WHERE id = ?", (article_id,)))[0]["url"]
    return Run(id=run_id, article_id=article_id, url=url, lane=lane)


async def _finish(db: aiosqlite.Connection, run: Run, outcome: str, error: str | None) -> None:
    """Close a run and drop its claim. Both fenced by run id: a run cannot release a
    claim that has passed to someone else, nor rewrite an outcome already recorded."""
    await db.execute(
        "UPDATE runs SET outcome = ?, error = ?, finished_at = ? WHERE id = ? AND outcome IS NULL",
        (outcome, error, time.time(), run.id),
    )
    await db.execute("DELETE FROM claims WHERE article_id = ? AND run_id = ?", (run.article_id, run.id))


async def _migrate(db: aiosqlite.Connection) -> None:
    async with db.execute("PRAGMA user_version") as cur:
        version = (await cur.fetchone())[0]
    if version > len(MIGRATIONS):
        raise RuntimeError(
            f"database schema version {version} is newer than this reader ({len(MIGRATIONS)})"
        )
    for step in range(version, len(MIGRATIONS)):
        await db.execute("BEGIN IMMEDIATE")
        try:
            await MIGRATIONS[step](db)
            await db.execute(f"PRAGMA user_version = {step + 1}")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
        await db.execute("COMMIT")


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (executescript would commit on its own)."""
    statements, current = [], []
    for line in script.splitlines():
        current.append(line)
        candidate = "\n".join(current)
        if sqlite3.complete_statement(candidate):
            statements.append(candidate.strip())
            current = []
    return [s for s in statements if s and s != ";"]


def fts_query(text: str) -> str:
    """Turn what a person typed into a safe FTS5 query: "quoted phrases" stay phrases,
    every other word must appear, and no character can be FTS5 syntax. Empty if nothing
    searchable is left."""
    terms = []
    for phrase, word in re.findall(r'"([^"]*)"|(\S+)', text):
        term = (phrase or word).replace('"', " ").strip()
        if re.search(r"\w", term):
            terms.append('"' + term + '"')
    return " ".join(terms)
