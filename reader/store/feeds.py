"""Feeds: subscriptions, their refresh state and the headlines a refresh brings."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from typing import Any, cast
from urllib.parse import urlsplit

import aiosqlite

from .base import StoreBase, rows_of
from .rows import FeedRow
from .schema import url_key


async def insert_feed(
    db: aiosqlite.Connection, url: str, title: str = "", site_url: str | None = None, now: float | None = None
) -> tuple[int, bool]:
    """Inside a write transaction: the feed with this URL, created if missing. Returns
    (feed id, created); an existing feed is left exactly as it is."""
    rows = await rows_of(db, 
        "INSERT INTO feeds (url, title, site_url, added_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (url) DO NOTHING RETURNING id",
        (url, title, site_url, time.time() if now is None else now),
    )
    if rows:
        return rows[0]["id"], True
    rows = await rows_of(db, "SELECT id FROM feeds WHERE url = ?", (url,))
    return rows[0]["id"], False


# What unsubscribing never destroys: an article a person starred, saved (by hand or an
# import, also one the feed's article took in) or highlighted, or read once it was
# cleaned (tags join this when they exist). Needs the alias a.
_KEPT = """(a.starred_at IS NOT NULL OR a.saved_at IS NOT NULL
    OR (a.read_at IS NOT NULL AND EXISTS (SELECT 1 FROM contents c WHERE c.article_id = a.id))
    OR EXISTS (SELECT 1 FROM highlights h WHERE h.article_id = a.id))"""


async def _adopt_saved(db: aiosqlite.Connection, feed_id: int, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Inside a refresh's transaction: a headline new to this feed whose link is already a
    saved or imported article (no feed; the same url_key) becomes that article, which
    joins the feed, instead of a second card: its tags, notes, state, place in the line
    and text stay, the feed's title, summary, author and date come in (as every later
    refresh of the item would bring them). Returns the rows left to insert or update.
    Another feed's article of the same link stays apart (one story in two feeds is not
    this rule's to merge)."""
    listed = {r["guid"] for r in await rows_of(
        db, "SELECT guid FROM articles WHERE feed_id = ? AND guid IN (SELECT value FROM json_each(?))",
        (feed_id, json.dumps([row["guid"] for row in rows])))}
    arriving = [row for row in rows if row["guid"] not in listed]
    saved: dict[str, int] = {}
    for r in await rows_of(
            db, "SELECT id, url_key FROM articles WHERE feed_id IS NULL AND url_key IN (SELECT value FROM json_each(?))"
                " ORDER BY id", (json.dumps([row["url_key"] for row in arriving]),)):
        saved.setdefault(r["url_key"], r["id"])
    adopted = {row["guid"]: saved.pop(row["url_key"]) for row in arriving if row["url_key"] in saved}
    await db.executemany(
        """
        UPDATE articles SET feed_id = :feed_id, guid = :guid, url = :url, url_key = :url_key,
            title = coalesce(nullif(:title, ''), title),
            summary = CASE WHEN :summary != '' THEN :summary ELSE summary END,
            summary_text = CASE WHEN :summary_text != '' THEN :summary_text ELSE summary_text END,
            author = coalesce(:author, author), published = coalesce(:published, published),
            sort_at = coalesce(:published, sort_at)
        WHERE id = :id
        """,
        [{**row, "id": adopted[row["guid"]]} for row in rows if row["guid"] in adopted])
    return [row for row in rows if row["guid"] not in adopted]


# One story, many feeds (schema v18). How close in time two items with the same title from the
# same site are one story: a site's main feed and its category feed list a post within hours;
# a weekly column that keeps its title is another story each week.
STORY_WINDOW = 3 * 24 * 3600


def site_of(url: str) -> str | None:
    """The site a link is on, for the same-title test: its host, without a leading www."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.removeprefix("www.") if host else None


async def _join_stories(db: aiosqlite.Connection, feed_id: int, rows: list[dict[str, Any]], now: float,
                        ) -> tuple[list[dict[str, Any]], int]:
    """Inside a refresh's transaction: a headline new to this feed that is a story another
    feed brought already (the same url_key, else the same title from the same site within
    STORY_WINDOW) becomes a source of that feed's article (the table `sources`) instead of a
    second card: the story keeps one state, one text and one fetch, and shows under both
    feeds. An item this feed brought as a source before is left out (its (feed, guid) is
    there already, so a refresh again adds nothing). Returns the rows left to insert or
    update, and how many sources were added."""
    guids = json.dumps([row["guid"] for row in rows])
    carried = {r["guid"] for r in await rows_of(
        db, "SELECT guid FROM sources WHERE feed_id = ? AND guid IN (SELECT value FROM json_each(?))", (feed_id, guids))}
    listed = {r["guid"] for r in await rows_of(
        db, "SELECT guid FROM articles WHERE feed_id = ? AND guid IN (SELECT value FROM json_each(?))", (feed_id, guids))}
    arriving = [row for row in rows if row["guid"] not in carried and row["guid"] not in listed]
    if not arriving:
        return [row for row in rows if row["guid"] not in carried], 0
    by_key: dict[str, int] = {}
    for r in await rows_of(
            db, "SELECT id, url_key FROM articles WHERE url_key IN (SELECT value FROM json_each(?))"
                " AND feed_id IS NOT NULL AND feed_id != ? ORDER BY id",
            (json.dumps([row["url_key"] for row in arriving]), feed_id)):
        by_key.setdefault(r["url_key"], r["id"])
    # a title that is its link (an item without one) says nothing about the story
    titled = [row for row in arriving if row["title"] and row["title"] != row["url"]]
    times = [now if row["published"] is None else row["published"] for row in titled] or [now]
    by_title: dict[str, list[sqlite3.Row]] = {}
    for r in await rows_of(
            # within the window of some arriving item: a title every post of a site has (a
            # podcast's "New episode") reads only the few of those days, not years of them
            db, "SELECT id, title, url, coalesce(published, sort_at) AS at FROM articles"
                " WHERE title IN (SELECT value FROM json_each(?)) AND feed_id IS NOT NULL AND feed_id != ?"
                " AND coalesce(published, sort_at) BETWEEN ? AND ? ORDER BY id",
            (json.dumps([row["title"] for row in titled]), feed_id,
             min(times) - STORY_WINDOW, max(times) + STORY_WINDOW)):
        by_title.setdefault(r["title"], []).append(r)
    joined: dict[str, int] = {}
    for row in arriving:
        story = by_key.get(row["url_key"])
        site, at = site_of(row["url"]), row["published"] if row["published"] is not None else now
        if story is None and site is not None and row["title"] != row["url"]:
            story = next((r["id"] for r in by_title.get(row["title"], [])
                          if site_of(r["url"]) == site and abs(r["at"] - at) <= STORY_WINDOW), None)
        if story is not None:
            joined[row["guid"]] = story
    cur = await db.executemany(
        # one row per feed of a story: a second item of this feed for it adds nothing
        "INSERT OR IGNORE INTO sources (feed_id, guid, article_id, title, published, added_at, sort_at)"
        " SELECT :feed_id, :guid, id, :title, :published, :now, sort_at FROM articles WHERE id = :article_id",
        [{**row, "article_id": joined[row["guid"]]} for row in arriving if row["guid"] in joined])
    return [row for row in rows if row["guid"] not in carried and row["guid"] not in joined], max(cur.rowcount, 0)


# An article another feed carries as well (schema v18). Needs the alias a.
_CARRIED = "EXISTS (SELECT 1 FROM sources s WHERE s.article_id = a.id)"


async def _hand_over(db: aiosqlite.Connection, feed_id: int) -> None:
    """Inside an unsubscribe's transaction: each of the feed's stories that another feed
    carries too becomes that feed's article (the one that brought it first), its source row
    now the article's own feed and guid, so unsubscribing one feed keeps the story, with its
    state, under the others."""
    heirs = await rows_of(
        db,
        """
        SELECT a.id, s.feed_id, s.guid FROM articles a JOIN sources s ON s.article_id = a.id
        WHERE a.feed_id = ? AND (s.added_at, s.feed_id) = (
            SELECT s2.added_at, s2.feed_id FROM sources s2 WHERE s2.article_id = a.id
            ORDER BY s2.added_at, s2.feed_id LIMIT 1)
        """, (feed_id,))
    for heir in heirs:
        await db.execute("DELETE FROM sources WHERE feed_id = ? AND guid = ?", (heir["feed_id"], heir["guid"]))
        await db.execute("UPDATE articles SET feed_id = ?, guid = ? WHERE id = ?",
                         (heir["feed_id"], heir["guid"], heir["id"]))


class FeedStore(StoreBase):

    async def add_feed(self, url: str, title: str = "") -> tuple[int, bool]:
        """Subscribe; returns (feed id, created). Subscribing twice is harmless."""
        async with self._transaction() as db:
            return await insert_feed(db, url, title)

    async def list_feeds(self, *, counts: bool = True) -> list[dict[str, Any]]:
        """Every feed; with counts, how many articles each has and how many are unread
        (costs a count per feed: the browse page's feed filter asks without)."""
        if not counts:
            return await self._all("SELECT f.* FROM feeds f ORDER BY lower(f.title), f.id")
        return await self._all(
            """
            SELECT f.*,
                (SELECT count(*) FROM articles a WHERE a.feed_id = f.id)
                    + (SELECT count(*) FROM sources s WHERE s.feed_id = f.id) AS articles,
                CASE WHEN f.paused_until > :now THEN 0
                     ELSE coalesce((SELECT u.articles FROM unread u WHERE u.feed = f.id), 0)
                        + coalesce((SELECT u.articles FROM unread_sources u WHERE u.feed = f.id), 0) END AS unread
            FROM feeds f ORDER BY lower(f.title), f.id
            """, {"now": time.time()}
        )

    async def rename_feed(self, feed_id: int, title: str) -> bool:
        async with self._transaction() as db:
            cur = await db.execute("UPDATE feeds SET title = ? WHERE id = ?", (title, feed_id))
            return cur.rowcount > 0

    async def get_feed(self, feed_id: int) -> dict[str, Any] | None:
        return await self._one("SELECT * FROM feeds WHERE id = ?", (feed_id,))

    async def unsubscribe_counts(self, feed_id: int) -> tuple[int, int] | None:
        """(articles unsubscribing keeps, articles it removes), or None for no such feed. A
        story another feed carries too stays with that feed: it is neither."""
        rows = await self._all(
            f"""
            SELECT (SELECT count(*) FROM articles a WHERE a.feed_id = f.id AND {_KEPT} AND NOT {_CARRIED}) AS kept,
                   (SELECT count(*) FROM articles a WHERE a.feed_id = f.id AND NOT {_KEPT} AND NOT {_CARRIED})
                   AS removed
            FROM feeds f WHERE f.id = ?
            """,
            (feed_id,),
        )
        return (rows[0]["kept"], rows[0]["removed"]) if rows else None

    async def delete_feed(self, feed_id: int) -> tuple[int, int] | None:
        """Unsubscribe: what a person kept (see _KEPT) stays, as library items with no feed
        and the feed's name as their source; a story another feed carries too stays that
        feed's (_hand_over); the rest of the feed's articles go with it. Returns (kept,
        removed), or None for no such feed."""
        async with self._transaction() as db:
            found = await rows_of(db, "SELECT title, url FROM feeds WHERE id = ?", (feed_id,))
            if not found:
                return None
            name = found[0]["title"] or found[0]["url"]
            await _hand_over(db, feed_id)
            # A saved link with the same URL already is the library item: keep that one.
            cur = await db.execute(
                f"""
                UPDATE articles AS a SET feed_id = NULL, source = :name
                WHERE a.feed_id = :id AND {_KEPT}
                """,
                {"id": feed_id, "name": name},
            )
            kept = cur.rowcount
            rows = await rows_of(db, "SELECT count(*) AS n FROM articles WHERE feed_id = ?", (feed_id,))
            await db.execute("DELETE FROM feeds WHERE id = ?", (feed_id,))
            return kept, int(rows[0]["n"])

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
        articles were new. Headlines only: nothing here touches the queue. Only the newest
        `self.feed_items` entries are taken; the feed's note says how many were left out."""
        now = time.time()
        items = list(entries)
        note = None
        if len(items) > self.feed_items:
            # newest first by date; undated entries after the dated, in the feed's own order
            order = sorted(range(len(items)),
                           key=lambda i: (items[i].get("published") is None, -(items[i].get("published") or 0), i))
            kept = sorted(order[: self.feed_items])
            note = (f"the feed listed {len(items):,} items: only the newest {self.feed_items:,}"
                    " were taken")
            items = [items[i] for i in kept]
        async with self._transaction() as db:
            await db.execute(
                """
                -- a title once set (by the first fetch, a rename or an OPML import) is the
                -- person's: later fetches do not overwrite it
                UPDATE feeds SET title = CASE WHEN title = '' THEN coalesce(:title, '') ELSE title END,
                    site_url = coalesce(:site_url, site_url), etag = :etag,
                    last_modified = :last_modified, refreshed_at = :now, error = NULL, note = :note
                WHERE id = :id
                """,
                {"title": title, "site_url": site_url, "etag": etag,
                 "last_modified": last_modified, "now": now, "id": feed_id, "note": note},
            )
            count = "SELECT count(*) AS n FROM articles WHERE feed_id = ?"
            before = (await rows_of(db, count, (feed_id,)))[0]["n"]
            # What rules decided (feeds/refresh.py) counts for a new article only: one stored
            # already keeps the state it has, whatever a later refresh or rule says.
            tagged = [e for e in items if e.get("tags")]
            known: set[str] = set()
            if tagged:
                known = {r["guid"] for r in await rows_of(
                    db, "SELECT guid FROM articles WHERE feed_id = ? AND guid IN (SELECT value FROM json_each(?))",
                    (feed_id, json.dumps([e["guid"] for e in tagged])))}
            rows = [{"summary_text": "", "categories": "", "hidden_by": None, "star": False,
                     **{k: v for k, v in e.items() if k != "tags"}, "feed_id": feed_id, "now": now,
                     "url_key": url_key(e["url"])} for e in items]
            rows, carried = await _join_stories(db, feed_id, rows, now)
            # (a saved link a headline adopts keeps its own state: a person saved it)
            rows = await _adopt_saved(db, feed_id, rows)
            await db.executemany(
                """
                INSERT INTO articles (feed_id, guid, url, title, summary, summary_text, author,
                                      published, sort_at, added_at, url_key, categories, hidden_by, hidden_at,
                                      read_at, starred_at)
                VALUES (:feed_id, :guid, :url, :title, :summary, :summary_text, :author, :published,
                        coalesce(:published, :now), :now, :url_key, :categories, :hidden_by,
                        CASE WHEN :hidden_by IS NOT NULL THEN :now END,
                        CASE WHEN :hidden_by IS NOT NULL THEN :now END,
                        CASE WHEN :star THEN :now END)
                ON CONFLICT (feed_id, guid) DO UPDATE SET
                    title = excluded.title, summary = excluded.summary, url = excluded.url,
                    author = excluded.author, summary_text = excluded.summary_text, url_key = excluded.url_key,
                    categories = excluded.categories
                WHERE (title, summary, url, coalesce(author, ''), categories)
                   IS NOT (excluded.title, excluded.summary, excluded.url, coalesce(excluded.author, ''),
                           excluded.categories)
                """,
                rows,
            )
            new_tags = [(e["guid"], t) for e in tagged if e["guid"] not in known for t in e["tags"]]
            if new_tags:
                await db.executemany("INSERT INTO tags (name) VALUES (?) ON CONFLICT (name) DO NOTHING",
                                     [(t,) for t in sorted({t for _, t in new_tags})])
                await db.executemany(
                    "INSERT INTO article_tags (article_id, tag_id) SELECT a.id, t.id FROM articles a, tags t"
                    " WHERE a.feed_id = ? AND a.guid = ? AND t.name = ? ON CONFLICT DO NOTHING",
                    [(feed_id, guid, t) for guid, t in new_tags])
            after = (await rows_of(db, count, (feed_id,)))[0]["n"]
            return int(after - before) + carried

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

    async def feed_by_url(self, url: str) -> FeedRow | None:
        return cast("FeedRow | None", await self._one("SELECT * FROM feeds WHERE url = ?", (url,)))
