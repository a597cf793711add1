"""Highlights: passages marked in an article's text, with a note, a color and tags.

Placing a quote in a text is reader/clean/anchors.py; this module keeps the result and
places every highlight of an article again, in the same transaction, whenever a new text
is written for it (`reanchor`: a cleaning, a reclean, an import with the saved text)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import aiosqlite

from ..clean.anchors import Anchor, Squeezed, locate, occurrences, text_hash
from .base import StoreBase, rows_of

# What a highlight's row gives its readers (the article's title and feed for lists).
_COLUMNS = """
    h.id, h.article_id, h.quote, h.prefix, h.suffix, h.start_offset AS start, h.end_offset AS "end",
    h.text_hash, h.note, h.color, h.tags, h.detached, h.created_at, h.updated_at
"""
_LISTED = f"""
    SELECT {_COLUMNS}, a.title AS article_title, a.url AS article_url, a.author AS article_author,
           a.added_at AS article_added_at, a.published AS article_published, a.feed_id, f.title AS feed_title
    FROM highlights h JOIN articles a ON a.id = h.article_id LEFT JOIN feeds f ON f.id = a.feed_id
"""


async def bring_back(db: aiosqlite.Connection, article_id: int, records: Sequence[dict[str, Any]], now: float) -> None:
    """An export's highlights into an article, once (the same quote at the same place, or
    detached with the same note, is there already), then placed in its text."""
    await db.executemany(
        """
        INSERT INTO highlights (article_id, quote, prefix, suffix, start_offset, end_offset, note, color, tags,
                                detached, created_at, updated_at)
        SELECT :id, :quote, :prefix, :suffix, :start, :end, :note, :color, :tags, :start IS NULL,
               :created_at, :updated_at
        WHERE NOT EXISTS (SELECT 1 FROM highlights WHERE article_id = :id AND quote = :quote
                          AND start_offset IS :start AND note = :note)
        """,
        [{**r, "id": article_id, "tags": json.dumps(r["tags"]), "created_at": r["created_at"] or now,
          "updated_at": r["updated_at"] or r["created_at"] or now} for r in records])
    await reanchor(db, article_id)


def _row(row: dict[str, Any]) -> dict[str, Any]:
    row["tags"] = json.loads(row["tags"])
    row["detached"] = bool(row["detached"])
    return row


async def place(db: aiosqlite.Connection, article_id: int, quote: str, prefix: str, suffix: str,
                start: int | None, end: int | None) -> tuple[Anchor | None, str | None]:
    """Where a highlight goes in the article's text as stored now, and that text's hash
    (None, None while the article has no text)."""
    rows = await rows_of(db, "SELECT text FROM contents WHERE article_id = ?", (article_id,))
    if not rows:
        return None, None
    text = rows[0]["text"]
    return locate(text, quote, prefix, suffix, start, end), text_hash(text)


async def reanchor(db: aiosqlite.Connection, article_id: int) -> int:
    """Place the article's highlights in its text as stored now; those placed in another
    text (or never placed) are moved, and those that cannot be placed with confidence
    are detached (their old offsets kept, as a hint for the next text). Returns how many
    were detached."""
    rows = await rows_of(db, "SELECT text FROM contents WHERE article_id = ?", (article_id,))
    if not rows:
        return 0
    text = rows[0]["text"]
    digest = text_hash(text)
    stale = await rows_of(
        db, "SELECT id, quote, prefix, suffix, start_offset, end_offset FROM highlights"
            " WHERE article_id = ? AND text_hash IS NOT ?", (article_id, digest))
    detached = 0
    updates = []
    squeezed = Squeezed(text) if stale else None  # made once for all of them
    for h in stale:
        assert squeezed is not None
        anchor = locate(squeezed, h["quote"], h["prefix"], h["suffix"], h["start_offset"], h["end_offset"])
        if anchor is None:
            detached += 1
            updates.append((h["prefix"], h["suffix"], h["start_offset"], h["end_offset"], digest, 1, h["id"]))
        else:
            updates.append((anchor.prefix, anchor.suffix, anchor.start, anchor.end, digest, 0, h["id"]))
    # the quote is kept as the person chose it: an approximate place does not rewrite it
    await db.executemany(
        "UPDATE highlights SET prefix = ?, suffix = ?, start_offset = ?, end_offset = ?, text_hash = ?,"
        " detached = ? WHERE id = ?", updates)
    return detached


class HighlightStore(StoreBase):

    async def highlight_count(self, article_id: int) -> int:
        rows = await self._all("SELECT count(*) AS n FROM highlights WHERE article_id = ?", (article_id,))
        return int(rows[0]["n"])

    async def add_highlight(self, article_id: int, quote: str, prefix: str, suffix: str, start: int | None,
                            end: int | None, note: str, color: str, tags: Sequence[str], *, cap: int,
                            anchored: bool = True) -> tuple[str, dict[str, Any] | None]:
        """Place and keep a highlight, in one transaction: ("made", row), or ("no article",
        None), ("no text", None) (not cleaned yet, nothing to place it in), ("not found",
        None) (the quote is not in the text), ("repeated N", None) (it is, N times, and
        nothing tells which), ("full", None) (the article has `cap`)."""
        now = time.time()
        async with self._transaction() as db:
            found = await rows_of(db, "SELECT (SELECT count(*) FROM highlights WHERE article_id = a.id) AS n"
                                      " FROM articles a WHERE a.id = ?", (article_id,))
            if not found:
                return "no article", None
            if found[0]["n"] >= cap:
                return "full", None
            anchor, digest = await place(db, article_id, quote, prefix, suffix, start, end)
            if digest is None:
                return "no text", None
            if anchor is None:
                rows = await rows_of(db, "SELECT text FROM contents WHERE article_id = ?", (article_id,))
                times = occurrences(rows[0]["text"], quote) if quote.strip() else 0
                return (f"repeated {times}" if times > 1 else "not found"), None
            cur = await db.execute(
                """
                INSERT INTO highlights (article_id, quote, prefix, suffix, start_offset, end_offset, text_hash,
                                        note, color, tags, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                (article_id, anchor.quote, anchor.prefix, anchor.suffix, anchor.start, anchor.end, digest, note,
                 color, json.dumps(list(tags)), now, now))
            new_id = cur.lastrowid
            rows = await rows_of(db, f"{_LISTED} WHERE h.id = ?", (new_id,))
            return "made", _row(dict(rows[0]))

    async def highlights_for(self, article_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
        """The highlights of these articles, each's in the order they were made."""
        found: dict[int, list[dict[str, Any]]] = {}
        for row in await self._all(f"{_LISTED} WHERE h.article_id IN (SELECT value FROM json_each(?))"
                                   " ORDER BY h.article_id, h.created_at, h.id", (json.dumps(list(article_ids)),)):
            found.setdefault(row["article_id"], []).append(_row(row))
        return found

    async def every_highlight(self) -> list[dict[str, Any]]:
        """All of them, article by article (in the order they were saved), each article's in
        the order of its text, detached ones last: what the exports write."""
        return [_row(r) for r in await self._all(
            f"{_LISTED} ORDER BY a.added_at, a.id, h.detached, h.start_offset, h.id")]

    async def highlight(self, highlight_id: int) -> dict[str, Any] | None:
        row = await self._one(f"{_LISTED} WHERE h.id = ?", (highlight_id,))
        return _row(row) if row else None

    async def highlights_of(self, article_id: int) -> list[dict[str, Any]]:
        """An article's highlights in the order of its text (detached ones last)."""
        rows = await self._all(f"{_LISTED} WHERE h.article_id = ? ORDER BY h.detached, h.start_offset, h.id",
                               (article_id,))
        return [_row(r) for r in rows]

    async def list_highlights(self, *, article_id: int | None = None, feed_id: int | None = None,
                              tag: str | None = None, text: str | None = None,
                              before: tuple[float, int] | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first; `before` (created_at, id) continues a page (keyset); `text`, an
        FTS5 query (`fts_query`), is matched against the quote, the note and the tags."""
        where: list[str] = []
        params: list[Any] = []
        if article_id is not None:
            where.append("h.article_id = ?")
            params.append(article_id)
        if feed_id is not None:
            where.append("a.feed_id = ?")
            params.append(feed_id)
        if tag is not None:
            where.append("EXISTS (SELECT 1 FROM json_each(h.tags) WHERE lower(value) = lower(?))")
            params.append(tag)
        if text:  # an FTS5 query (store.search.fts_query)
            where.append("h.id IN (SELECT rowid FROM highlights_search WHERE highlights_search MATCH ?)")
            params.append(text)
        if before is not None:
            where.append("(h.created_at, h.id) < (?, ?)")
            params += [before[0], before[1]]
        sql = (f"{_LISTED} WHERE {' AND '.join(where) or '1'} ORDER BY h.created_at DESC, h.id DESC LIMIT ?")
        return [_row(r) for r in await self._all(sql, (*params, limit))]

    async def highlights_matching(self, text: str, cap: int) -> int:
        """How many highlights the FTS5 query `text` finds in their quotes, notes and tags,
        counted up to `cap`."""
        return await self._count(
            "SELECT count(*) FROM (SELECT 1 FROM highlights_search WHERE highlights_search MATCH ? LIMIT ?)",
            (text, cap))

    async def highlight_tags(self) -> list[str]:
        rows = await self._all("SELECT name FROM highlight_tags ORDER BY lower(name)")
        return [r["name"] for r in rows]

    async def update_highlight(self, highlight_id: int, changes: dict[str, Any]) -> dict[str, Any] | None:
        """Change a highlight's note, color or tags (the keys given); the row, or None."""
        sets = [f"{key} = :{key}" for key in ("note", "color", "tags") if key in changes]
        params = {**changes, "id": highlight_id, "now": time.time()}
        if "tags" in params:
            params["tags"] = json.dumps(list(params["tags"]))
        async with self._transaction() as db:
            cur = await db.execute(
                f"UPDATE highlights SET {', '.join([*sets, 'updated_at = :now'])} WHERE id = :id", params)
            if cur.rowcount == 0:
                return None
            rows = await rows_of(db, f"{_LISTED} WHERE h.id = ?", (highlight_id,))
            return _row(dict(rows[0]))

    async def delete_highlight(self, highlight_id: int) -> bool:
        async with self._transaction() as db:
            cur = await db.execute("DELETE FROM highlights WHERE id = ?", (highlight_id,))
            return cur.rowcount > 0

    async def reanchor_highlights(self, article_id: int) -> int:
        async with self._transaction() as db:
            return await reanchor(db, article_id)
