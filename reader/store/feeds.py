"""Feeds: subscriptions, their refresh state and the headlines a refresh brings."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any, cast

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
                (SELECT count(*) FROM articles a WHERE a.feed_id = f.id) AS articles,
                CASE WHEN f.paused_until > :now THEN 0
                     ELSE coalesce((SELECT u.articles FROM unread u WHERE u.feed = f.id), 0) END AS unread
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
        """(articles unsubscribing keeps, articles it removes), or None for no such feed."""
        rows = await self._all(
            f"""
            SELECT (SELECT count(*) FROM articles a WHERE a.feed_id = f.id AND {_KEPT}) AS kept,
                   (SELECT count(*) FROM articles a WHERE a.feed_id = f.id AND NOT {_KEPT}) AS removed
            FROM feeds f WHERE f.id = ?
            """,
            (feed_id,),
        )
        return (rows[0]["kept"], rows[0]["removed"]) if rows else None

    async def delete_feed(self, feed_id: int) -> tuple[int, int] | None:
        """Unsubscribe: what a person kept (see _KEPT) stays, as library items with no feed
        and the feed's name as their source; the rest of the feed's articles go with it.
        Returns (kept, removed), or None for no such feed."""
        async with self._transaction() as db:
            found = await rows_of(db, "SELECT title, url FROM feeds WHERE id = ?", (feed_id,))
            if not found:
                return None
            name = found[0]["title"] or found[0]["url"]
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
            return int(after - before)

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
