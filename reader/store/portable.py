"""Export and import of the library: what an export keeps, and bringing it back."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import aiosqlite

from .base import FIRST_COPY, StoreBase, rows_of
from .feeds import insert_feed
from .highlights import bring_back
from .library import _tag_ids
from .schema import url_key


def _saved_at(record: dict[str, Any], feed_id: int | None, now: float) -> float | None:
    """When an exported article was saved: as its record says, and a link without a feed
    is saved whatever it says (an export made before v15 says nothing)."""
    saved: float | None = record.get("saved_at")
    if saved is None and feed_id is None:
        saved = record.get("added_at") or now
    return saved


async def _carry(db: aiosqlite.Connection, article_id: int, item: dict[str, Any], now: float) -> None:
    """Another feed's item of the article's story, back as a row of sources: that feed's
    refresh then finds its item in the story, as it did before the export, and adds no
    second card (the story window has long passed for an old item). Only for a feed the
    library follows (the export's feeds are imported before its articles; a story's entry
    never subscribes anyone), not the article's own, and not where that feed has a card of
    its own for the item already."""
    await db.execute(
        """
        INSERT INTO sources (feed_id, guid, article_id, title, published, added_at, sort_at)
        SELECT f.id, :guid, a.id, :title, :published, :added_at, a.sort_at
        FROM articles a JOIN feeds f ON f.url = :feed_url
        WHERE a.id = :article_id AND a.feed_id IS NOT f.id
          AND NOT EXISTS (SELECT 1 FROM articles WHERE feed_id = f.id AND guid = :guid)
        ON CONFLICT DO NOTHING
        """,
        {"feed_url": item["feed_url"], "guid": item["guid"], "article_id": article_id, "title": item["title"],
         "published": item.get("published"), "added_at": item.get("added_at") or now})


class PortableStore(StoreBase):

    async def export_articles(self) -> list[dict[str, Any]]:
        """What an export keeps: saved links (a feed's article saved too), starred articles
        and every cleaned article, with its feed's URL, its reading state and its cleaned
        content (c_* columns)."""
        return await self._all(
            """
            SELECT a.id, a.guid, a.url, a.title, a.summary, a.summary_text, a.author, a.published,
                   a.sort_at, a.added_at, a.read_at, a.starred_at, a.read_position, a.read_position_at, a.saved_at,
                   a.done_at, f.url AS feed_url, f.title AS feed_title,
                   c.article_id IS NOT NULL AS cleaned, c.title AS c_title, c.author AS c_author,
                   c.published AS c_published, c.html AS c_html, c.text AS c_text, c.words AS c_words,
                   c.cleaned_at AS c_cleaned_at, c.partial AS c_partial
            FROM articles a
            LEFT JOIN feeds f ON f.id = a.feed_id
            LEFT JOIN contents c ON c.article_id = a.id
            WHERE a.feed_id IS NULL OR a.saved_at IS NOT NULL OR a.starred_at IS NOT NULL OR c.article_id IS NOT NULL
            ORDER BY a.id
            """
        )

    async def also_in_for(self, article_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
        """The other feeds' items of each article's story (table sources), as an export keeps
        them: the feed by its URL (ids differ from one library to the next), the item's guid,
        its title and times there."""
        found: dict[int, list[dict[str, Any]]] = {}
        for row in await self._all(
                "SELECT s.article_id, f.url AS feed_url, f.title AS feed_title, s.guid, s.title, s.published,"
                " s.added_at FROM sources s JOIN feeds f ON f.id = s.feed_id"
                " WHERE s.article_id IN (SELECT value FROM json_each(?)) ORDER BY s.article_id, s.added_at, f.url",
                (json.dumps(list(article_ids)),)):
            found.setdefault(row["article_id"], []).append(
                {key: row[key] for key in ("feed_url", "feed_title", "guid", "title", "published", "added_at")})
        return found

    async def import_articles(self, records: Sequence[dict[str, Any]]) -> dict[str, int]:
        """Bring exported articles back, in one transaction, idempotently: an article is
        found by (feed URL, guid), a saved link by its URL; missing ones are inserted,
        existing ones only gain what they lack (a read, starred or done time, cleaned content).
        Nothing that is already there is overwritten, so importing twice changes nothing.
        Records are validated and sanitized by the caller (portability.py)."""
        counts = {"articles": 0, "contents": 0, "states": 0, "feeds": 0}
        now = time.time()
        async with self._transaction() as db:
            for r in records:
                feed_id = None
                if r.get("feed_url"):
                    feed_id, created = await insert_feed(db, r["feed_url"], r.get("feed_title") or "", now=now)
                    counts["feeds"] += created
                    rows = await rows_of(db, 
                        "SELECT id FROM articles WHERE feed_id = ? AND guid = ?", (feed_id, r["guid"]))
                    if not rows:  # the link saved here already: that article joins the feed (one card)
                        rows = await rows_of(db, "UPDATE articles SET feed_id = :feed_id, guid = :guid WHERE id = ("
                                                 "SELECT id FROM articles WHERE feed_id IS NULL AND url_key = :key"
                                                 " ORDER BY id LIMIT 1) RETURNING id",
                                             {"feed_id": feed_id, "guid": r["guid"], "key": url_key(r["url"])})
                else:
                    # a saved link is whichever article has its link, a feed's one too
                    rows = await rows_of(db, f"SELECT a.id FROM articles a WHERE a.url_key = ? ORDER BY {FIRST_COPY}",
                                         (url_key(r["url"]),))
                if rows:
                    article_id = rows[0]["id"]
                    cur = await db.execute(
                        """
                        UPDATE articles SET read_at = coalesce(read_at, :read_at),
                                            starred_at = coalesce(starred_at, :starred_at),
                                            saved_at = coalesce(saved_at, :saved_at),
                                            done_at = coalesce(done_at, :done_at)
                        WHERE id = :id AND ((read_at IS NULL AND :read_at IS NOT NULL)
                                            OR (starred_at IS NULL AND :starred_at IS NOT NULL)
                                            OR (saved_at IS NULL AND :saved_at IS NOT NULL)
                                            OR (done_at IS NULL AND :done_at IS NOT NULL))
                        """,
                        {"id": article_id, "read_at": r.get("read_at"), "starred_at": r.get("starred_at"),
                         "saved_at": _saved_at(r, feed_id, now), "done_at": r.get("done_at")},
                    )
                    changed = cur.rowcount > 0
                    # where the person stopped: the newer place wins, as when a device sends one
                    cur = await db.execute(
                        """
                        UPDATE articles SET read_position = :position, read_position_at = :at
                        WHERE id = :id AND :position IS NOT NULL AND :at IS NOT NULL
                          AND (read_position_at IS NULL OR read_position_at < :at)
                        """,
                        {"id": article_id, "position": r.get("read_position"), "at": r.get("read_position_at")},
                    )
                    counts["states"] += changed or cur.rowcount > 0
                else:
                    rows = await rows_of(db, 
                        """
                        INSERT INTO articles (feed_id, guid, url, title, summary, summary_text, author,
                                              published, sort_at, added_at, read_at, starred_at,
                                              read_position, read_position_at, done_at, url_key, saved_at)
                        VALUES (:feed_id, :guid, :url, :title, :summary, :summary_text, :author,
                                :published, :sort_at, :added_at, :read_at, :starred_at,
                                :read_position, :read_position_at, :done_at, :url_key, :saved_at)
                        RETURNING id
                        """,
                        {**{k: r.get(k) for k in ("url", "title", "summary", "summary_text", "author",
                                                  "published", "read_at", "starred_at",
                                                  "read_position", "read_position_at", "done_at")},
                         "feed_id": feed_id, "guid": r.get("guid") or r["url"], "url_key": url_key(r["url"]),
                         "saved_at": _saved_at(r, feed_id, now),
                         "sort_at": r.get("sort_at") or r.get("published") or now,
                         "added_at": r.get("added_at") or now},
                    )
                    article_id = rows[0]["id"]
                    counts["articles"] += 1
                tag_ids = await _tag_ids(db, r.get("tags") or ())
                await db.executemany(
                    "INSERT INTO article_tags (article_id, tag_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    [(article_id, t) for t in tag_ids.values()])
                await db.executemany(
                    """
                    INSERT INTO notes (article_id, text, comment, created_at)
                    SELECT :id, :text, :comment, :created_at WHERE NOT EXISTS (
                        SELECT 1 FROM notes WHERE article_id = :id AND text = :text AND comment IS :comment)
                    """, [{**n, "id": article_id} for n in r.get("notes") or ()])
                content = r.get("content")
                if content:
                    rows = await rows_of(db, 
                        """
                        INSERT INTO contents (article_id, title, author, published, html, text, words, cleaned_at,
                                              partial)
                        VALUES (:article_id, :title, :author, :published, :html, :text, :words, :cleaned_at,
                                :partial)
                        ON CONFLICT (article_id) DO NOTHING RETURNING article_id
                        """,
                        {**content, "article_id": article_id, "cleaned_at": content.get("cleaned_at") or now,
                         "partial": content.get("partial")},
                    )
                    if rows:
                        counts["contents"] += 1
                        # cleaned now: out of the line, any old error gone (as store_cleaned does)
                        await db.execute("DELETE FROM queue WHERE article_id = ?", (article_id,))
                        await db.execute(
                            "UPDATE articles SET error = NULL, failed_at = NULL WHERE id = ?", (article_id,))
                if r.get("highlights"):
                    await bring_back(db, article_id, r["highlights"], now)
                for item in r.get("also_in") or ():
                    await _carry(db, article_id, item, now)
        return counts
