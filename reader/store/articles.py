"""Articles: browse, search, one article with its content, reading state, saved links."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..records import FINISHED
from .base import (
    _ARTICLE_BASE_COLUMNS,
    _ARTICLE_COLUMNS,
    _ARTICLE_JOINS,
    _ARTICLE_LEFT_JOINS,
    _LINE,
    _ONE_ARTICLE_COLUMNS,
    _STATE,
    FIRST_COPY,
    GLANCE_DONE,
    GLANCED,
    NOT_DONE,
    PAUSED,
    SHOWN,
    StoreBase,
    rows_of,
)
from .schema import url_key


# How many of the most recently added matches a search ranks by relevance (bm25); older
# matches follow, newest first. Ranking costs per match, so this bounds a search's cost.
SEARCH_RANKED = 1000


# The reading list's length, kept by triggers (schema v9): counting even its own index
# cost 0.6 ms a page at 3,000 articles.
_READING_COUNT = "(SELECT articles FROM reading_list)"

# Grows with every change an article's page can show (schema v12): read with the page,
# and alone to ask whether a page rendered before is still what it would show.
_LIBRARY_VERSION = "(SELECT version FROM library_version)"

_PAGE_VERSION = f"SELECT {_LIBRARY_VERSION} AS version, read_at IS NULL AS unread FROM articles WHERE id = ?"

# An article's tags as [[lower(name), name], ...], for a row's `tags`.
_TAGS_COLUMN = """,
    (SELECT json_group_array(json_array(lower(t.name), t.name)) FROM article_tags at
     JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS x_tags
"""

# What an article's page shows besides the article, read in the same statement (each
# was a read of its own, and each read is a trip to a read connection's thread: most of
# what a ready article's open cost, see benchmarks/README.md).
_PAGE_COLUMNS = f"""{_TAGS_COLUMN},
    (SELECT json_group_array(json_array(n.id, n.text, n.comment, n.created_at)) FROM notes n
     WHERE n.article_id = a.id) AS x_notes,
    (SELECT version FROM highlight_changes WHERE article_id = a.id) AS x_highlights_at,
    CASE WHEN (SELECT version FROM highlight_changes WHERE article_id = a.id) IS :highlights_known THEN NULL ELSE
    (SELECT json_group_array(json_array(h.id, h.start_offset, h.end_offset, h.color, h.detached, h.quote,
                                        h.note, h.tags, h.created_at))
     FROM highlights h WHERE h.article_id = a.id) END AS x_highlights,
    {_READING_COUNT} AS x_reading_count,
    {_LIBRARY_VERSION} AS x_version
"""


def _highlights(found: str) -> tuple[dict[str, Any], ...]:
    """An article's highlights from the JSON its page's statement reads them as, in the
    order of the text (detached ones last). Tags come as their stored JSON text: SQLite's
    json() of each cost as much again as the rest."""
    return tuple(
        {"id": i, "start": start, "end": end, "color": color, "detached": bool(detached), "quote": quote,
         "note": note, "tags": json.loads(tags), "created_at": created}
        for i, start, end, color, detached, quote, note, tags, created
        in sorted(json.loads(found), key=lambda h: (h[4], h[1] or 0, h[0])))


# Articles whose highlights a store keeps as their page read them last (by article: the
# version they were read at, in highlight_changes, and the highlights): the most recent.
KEPT_HIGHLIGHTS = 64


# The two orders a list can have, as row-value keys, and the same key for the article a
# keyset page continues from. A ready article's tap order (its first tap, else its
# cleaning time: opened directly, never tapped) is the stored, indexed tap_order (schema
# v9), so a page or a neighbour is a seek in articles_by_tap or articles_to_read. The
# article a page continues from need not be ready (one being cleaned, opened from the
# reading list): a tapped one then stands at its tap, as it will once cleaned.
_NEWEST = ("(a.sort_at, a.id)", "SELECT sort_at, id FROM articles WHERE id = :before", ("a.sort_at", "a.id"))
_TAP = ("(a.tap_order, a.id)", "SELECT coalesce(tap_order, tapped_at), id FROM articles WHERE id = :before",
        ("a.tap_order", "a.id"))


def _filters(params: dict[str, Any], *, state: str | None, feed_id: int | None, ids: Sequence[int] | None,
             unread: bool, starred: bool, match: str | None, tag: str | None = None,
             folder: str | None = None) -> list[str]:
    """The WHERE terms of a filter over the article joins (aliases a, q, cl, c), its
    values added to `params`. Every filter combines with the others, and with SHOWN: no
    list holds an article a rule hid or one of a paused feed."""
    # a ready article was tapped or opened: always shown (SHOWN), so the reading list's
    # plan stays the seek in its own index
    where: list[str] = [] if state == "ready" else [SHOWN]
    params.setdefault("now", time.time())
    if ids is not None:
        where.append("a.id IN (SELECT value FROM json_each(:ids))")
        params["ids"] = json.dumps([int(i) for i in ids])
    if feed_id is not None:
        # its own articles and the stories it carries that another feed brought first (v18)
        where.append("(a.feed_id = :feed_id OR a.id IN (SELECT article_id FROM sources WHERE feed_id = :feed_id))")
        params["feed_id"] = feed_id
    if state is not None:
        where.append(f"({_STATE}) = :state")
        params["state"] = state
        if state == "failed":  # lets the planner walk the small articles_failed index
            where.append("a.error IS NOT NULL")
        if state == "ready":  # walk the ready articles' own index (few) rather than every unread one
            where.append("a.tap_order IS NOT NULL")
    if unread:
        # on a ready list (the reading list) unread means not done: read and not done counts
        where.append(NOT_DONE if state == "ready" else "a.read_at IS NULL")
    if starred:
        where.append("a.starred_at IS NOT NULL")
    if match is not None:
        where.append("a.id IN (SELECT rowid FROM search WHERE search MATCH :match)")
        params["match"] = match
    if tag is not None:
        where.append("a.id IN (SELECT at.article_id FROM article_tags at JOIN tags t ON t.id = at.tag_id"
                     " WHERE t.name = :tag)")
        params["tag"] = tag
    if folder is not None:
        where.append("(a.feed_id IN (SELECT id FROM feeds WHERE folder = :folder) OR a.id IN ("
                     "SELECT s.article_id FROM sources s JOIN feeds sf ON sf.id = s.feed_id WHERE sf.folder = :folder))")
        params["folder"] = folder
    return where


def selection(params: dict[str, Any], *, ids: Sequence[int] | None, until: int | None, state: str | None,
              feed_id: int | None, unread: bool, starred: bool, match: str | None, tag: str | None,
              folder: str | None) -> list[str]:
    """The WHERE terms of a bulk action: the articles with these ids, or every article the
    filter matches whose id is at most `until` (nothing added since is touched)."""
    where = _filters(params, state=state, feed_id=feed_id, ids=ids, unread=unread, starred=starred,
                     match=match, tag=tag, folder=folder)
    if until is not None:
        where.append("a.id <= :until")
        params["until"] = until
    return where


# Read by hand, one or in bulk: read at :now, and nothing else (done is another fact).
_READ = "read_at = :now"
# How long (seconds) the state before a bulk read is kept for its undo.
UNDO_KEPT = 7 * 24 * 3600

# A place at the end is forgotten, so the article starts over: on unread, and on not done
# (back on the reading list, its card does not say "read to the end"). (SET reads the row's
# old values throughout.)
_START_OVER = f"""read_position = CASE WHEN read_position >= {FINISHED} THEN NULL ELSE read_position END,
    read_position_at = CASE WHEN read_position >= {FINISHED} THEN NULL ELSE read_position_at END"""
_NOT_READ = f"read_at = NULL, {_START_OVER}"
_NOT_DONE = f"done_at = NULL, {_START_OVER}"
_UNGLANCE = f"done_at = CASE WHEN {GLANCED} THEN NULL ELSE done_at END"


def _list_select(*, state: str | None, feed_id: int | None, before: int | None, ids: Sequence[int] | None,
                 unread: bool, starred: bool, match: str | None, tag: str | None, folder: str | None,
                 limit: int, backwards: bool, now: float, columns: str = _ARTICLE_COLUMNS,
                 ) -> tuple[str, dict[str, Any]]:
    """One page of a list: the SELECT and its parameters. With the article columns (the
    default), its statement starts with `WITH {_LINE}`."""
    params: dict[str, Any] = {"now": now, "limit": limit}
    where = _filters(params, state=state, feed_id=None, ids=ids, unread=unread, starred=starred,
                     match=match, tag=tag, folder=folder)
    key, key_of, order = _TAP if state == "ready" else _NEWEST
    ascending = (state == "ready") != backwards  # the tap order is ascending, the newest descending
    compare = ">" if ascending else "<"
    if before is not None:
        params["before"] = before
    direction = "ASC" if ascending else "DESC"

    def ordered(columns: tuple[str, ...]) -> str:
        return " ORDER BY " + ", ".join(f"{c} {direction}" for c in columns) + " LIMIT :limit"

    after = [f"{key} {compare} ({key_of})"] if before is not None else []
    if feed_id is not None:
        # A feed's list is its own articles and the stories it carries (schema v18). As one
        # term (a.feed_id = ? OR a.id IN sources) the planner took both sets whole and sorted
        # them: 30 ms a page for a feed of 20,000 articles, against 0.8 ms walking its index.
        # So each set's page is read apart, in its own index (articles_by_feed, and
        # sources_by_feed, whose sort_at is the article's), and the page is the first of the
        # two together. The ready list's tap order is not in sources: its few articles are
        # sorted.
        params["feed_id"] = feed_id
        own = (f"SELECT a.id FROM {_ARTICLE_JOINS} WHERE {' AND '.join([*where, *after, 'a.feed_id = :feed_id'])}"
               + ordered(order))
        if state == "ready":
            carried = (f"SELECT a.id FROM {_ARTICLE_JOINS} WHERE "
                       + " AND ".join([*where, *after, "a.id IN (SELECT article_id FROM sources WHERE feed_id = :feed_id)"])
                       + ordered(order))
        else:
            keyed = [f"(s.sort_at, s.article_id) {compare} ({key_of})"] if before is not None else []
            carried = (f"SELECT a.id FROM sources s JOIN articles a ON a.id = s.article_id {_ARTICLE_LEFT_JOINS} WHERE "
                       + " AND ".join([*where, *keyed, "s.feed_id = :feed_id"])
                       + ordered(("s.sort_at", "s.article_id")))
        where = [f"a.id IN (SELECT id FROM ({own}) UNION ALL SELECT id FROM ({carried}))"]
    else:
        where += after
    order_by = ordered(order)
    sql = f"SELECT {columns} FROM {_ARTICLE_JOINS}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    return sql + order_by, params


def list_statement(*, state: str | None, feed_id: int | None, before: int | None, ids: Sequence[int] | None,
                   unread: bool, starred: bool, match: str | None, tag: str | None, folder: str | None,
                   limit: int, backwards: bool, now: float, tags: bool = False) -> tuple[str, dict[str, Any]]:
    """The statement of `ArticleStore.list_articles` and its parameters (apart, so that its
    query plan can be checked)."""
    sql, params = _list_select(state=state, feed_id=feed_id, before=before, ids=ids, unread=unread,
                               starred=starred, match=match, tag=tag, folder=folder, limit=limit,
                               backwards=backwards, now=now,
                               columns=_ARTICLE_COLUMNS + _TAGS_COLUMN if tags else _ARTICLE_COLUMNS)
    return f"WITH {_LINE} {sql}", params


@dataclass(frozen=True)
class ListFilter:
    """Which articles a list holds, as the store takes it (the core's ArticleFilter
    without its search words)."""

    state: str | None = None
    feed_id: int | None = None
    unread: bool = False
    starred: bool = False
    tag: str | None = None
    folder: str | None = None


def reading_statement(article_id: int, *, now: float, page: bool = False, around: ListFilter | None = None,
                      highlights_known: int | None = None) -> tuple[str, dict[str, Any]]:
    """The statement of `ArticleStore.reading` (and, with `page`, of `reading_page`) and
    its parameters (apart, so that its query plan can be checked). The neighbours are
    keyset pages of one article each after and before it, as `list_articles` reads them,
    reduced to their id and title. All in one statement: every separate read is another
    trip to a read connection's thread, and under load those trips were most of what a
    ready article's open cost (benchmarks/README.md). `highlights_known`: the version
    (highlight_changes) of the article's highlights the caller holds; they are read only
    if they changed since."""
    params: dict[str, Any] = {"id": article_id, "now": now}
    if page:
        params["highlights_known"] = highlights_known
    extra = _PAGE_COLUMNS if page else ""
    if page and around is not None:
        for side, backwards in (("prev", True), ("next", False)):
            sql, side_params = _list_select(**vars(around), before=article_id, ids=None, match=None, limit=1,
                                            backwards=backwards, now=now, columns="a.id, a.title")
            params.update(side_params)
            extra += f", (SELECT json_array(id, title) FROM ({sql})) AS x_{side}"
    sql = f"""
        SELECT {_ONE_ARTICLE_COLUMNS}, c.title AS c_title, c.author AS c_author,
               c.published AS c_published, c.html AS c_html, c.text AS c_text,
               c.words AS c_words, c.cleaned_at AS c_cleaned_at, c.partial AS c_partial {extra}
        FROM {_ARTICLE_JOINS} WHERE a.id = :id
    """
    return sql, params


def _article_and_content(row: dict[str, Any] | None, article_id: int,
                         ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """A reading statement's row split into the article and its content (None if not cleaned)."""
    if row is None:
        return None, None
    content: dict[str, Any] | None = {key[2:]: row.pop(key) for key in list(row) if key.startswith("c_")}
    if content is not None and content["html"] is None:
        content = None
    elif content is not None:
        content["article_id"] = article_id
    return row, content


class ArticleStore(StoreBase):

    async def get_article(self, article_id: int) -> dict[str, Any] | None:
        now = time.time()
        article = await self._one(
            f"SELECT {_ONE_ARTICLE_COLUMNS} FROM {_ARTICLE_JOINS} WHERE a.id = :id",
            {"id": article_id, "now": now},
        )
        return article

    async def reading(self, article_id: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """An article and its cleaned content (None if not cleaned) in one query: opening a
        ready article costs one read."""
        sql, params = reading_statement(article_id, now=time.time())
        return _article_and_content(await self._one(sql, params), article_id)

    async def reading_page(self, article_id: int, around: ListFilter | None,
                           ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """`reading`, and in the same read what the article's page shows around it: the
        article's `tags` (sorted by name, any case), its `notes` (oldest first),
        `reading_count` (the reading list's length) and, given a list's filter `around`,
        `prev` and `next` (each {"id", "title"} or None): the articles before and after it
        in that list's order; and the library's `version` (see `page_version`) as of
        this read."""
        kept = self._kept_highlights.get(article_id)
        sql, params = reading_statement(article_id, now=time.time(), page=True, around=around,
                                        highlights_known=kept[0] if kept is not None else None)
        # a primary key and index seeks (the count walks the reading list's own index): quick
        # enough to read on the loop's thread
        rows = self._read_here(sql, params)
        if rows is None:
            rows = await self._all(sql, params)
        article, content = _article_and_content(rows[0] if rows else None, article_id)
        if article is not None:
            # no ORDER BY inside an aggregate before SQLite 3.44: sorted here, by the same keys
            article["tags"] = [name for _, name in sorted(json.loads(article.pop("x_tags")))]
            article["notes"] = [{"text": text, "comment": comment, "created_at": created}
                                for _, text, comment, created in sorted(json.loads(article.pop("x_notes")))]
            at, found = article.pop("x_highlights_at"), article.pop("x_highlights")
            article["highlights"] = list(self._highlights_at(article_id, at, found, kept))
            article["highlights_version"] = at or 0
            article["reading_count"] = article.pop("x_reading_count")
            article["version"] = article.pop("x_version")
            for side in ("prev", "next"):
                found = article.pop(f"x_{side}", None)
                article[side] = dict(zip(("id", "title"), json.loads(found))) if found else None
        return article, content

    def _highlights_at(self, article_id: int, at: int | None, found: str | None,
                       kept: tuple[int, tuple[dict[str, Any], ...]] | None) -> tuple[dict[str, Any], ...]:
        """An article's highlights as its page's statement read them: decoded, or (None: not
        read) those kept from before, still current (or none, for an article that never had
        one). The dicts are shared by every page read while they are current: never
        changed by their readers."""
        if found is None:
            return kept[1] if kept is not None and at is not None and kept[0] == at else ()
        highlights = _highlights(found)
        if at is not None:
            self._kept_highlights[article_id] = (at, highlights)
            self._kept_highlights.move_to_end(article_id)
            while len(self._kept_highlights) > KEPT_HIGHLIGHTS:
                self._kept_highlights.popitem(last=False)
        return highlights

    async def page_version(self, article_id: int) -> tuple[int, bool] | None:
        """The library's version (schema v12) and whether the article is unread, in one
        read; None if there is no such article. A primary key and a one-row table: read
        on the loop's thread, like `reading_page`."""
        rows = self._read_here(_PAGE_VERSION, (article_id,))
        if rows is None:
            rows = await self._all(_PAGE_VERSION, (article_id,))
        return (int(rows[0]["version"]), bool(rows[0]["unread"])) if rows else None

    async def list_articles(
        self,
        *,
        state: str | None = None,
        feed_id: int | None = None,
        before: int | None = None,
        ids: Sequence[int] | None = None,
        unread: bool = False,
        starred: bool = False,
        match: str | None = None,
        tag: str | None = None,
        folder: str | None = None,
        limit: int = 50,
        backwards: bool = False,
        tags: bool = False,
    ) -> list[dict[str, Any]]:
        """Newest first; a `ready` list in tap order (oldest tap first: the reading list).
        `before` is an article id: the page starts right after it in that order (keyset
        pagination, so a deep page costs what the first one does; the article need not
        match the filter any more). `backwards` walks the other way from `before`, nearest
        first: the articles ahead of it. `match` is an FTS5 query (`fts_query`). `tags`:
        each row with its tags (`tags`, by name in any case), read in the same statement
        (apart, they were another trip to a read connection's thread on every list page)."""
        sql, params = list_statement(state=state, feed_id=feed_id, before=before, ids=ids, unread=unread,
                                     starred=starred, match=match, tag=tag, folder=folder, limit=limit,
                                     backwards=backwards, now=time.time(), tags=tags)
        rows = await self._all(sql, params)
        if tags:
            for row in rows:
                # no ORDER BY inside an aggregate before SQLite 3.44: sorted here, by the same keys
                row["tags"] = [name for _, name in sorted(json.loads(row.pop("x_tags")))]
        return rows

    async def list_facts(self) -> dict[str, Any]:
        """What a list's page shows around its articles, in one statement (each read apart
        is another trip to a read connection's thread): every feed for the feed filter with
        its unread count (the stories it carries too, schema v19; a paused feed's 0, as its
        list shows none; `feeds`: JSON, [[id, title, url, folder, unread], ...] in no order:
        sorting by lower(title) here was half the statement's cost), the saved links'
        unread count, the newest article id and the reading list's length."""
        row = await self._one(
            f"""
            SELECT (SELECT coalesce(max(id), 0) FROM articles) AS newest, {_READING_COUNT} AS reading,
                   coalesce((SELECT articles FROM unread WHERE feed = 0), 0) AS saved_unread,
                   (SELECT coalesce(sum(articles), 0) FROM unread
                    WHERE articles > 0 AND feed NOT IN ({PAUSED})) AS total,
                   (SELECT json_group_array(json_array(f.id, f.title, f.url, f.folder,
                        CASE WHEN f.paused_until > :now THEN 0
                             ELSE coalesce(u.articles, 0) + coalesce(us.articles, 0) END))
                    FROM feeds f LEFT JOIN unread u ON u.feed = f.id
                    LEFT JOIN unread_sources us ON us.feed = f.id) AS feeds
            """,
            {"now": time.time()},
        )
        assert row is not None  # an aggregate always answers one row
        return row

    async def count_articles(self, *, cap: int, state: str | None = None, feed_id: int | None = None,
                             unread: bool = False, starred: bool = False, match: str | None = None,
                             tag: str | None = None, folder: str | None = None) -> int:
        """How many articles a filter lists, counted up to `cap` (a count bounded like a
        page: a broad filter in a big library costs what `cap` rows do)."""
        params: dict[str, Any] = {"now": time.time(), "cap": cap}
        where = _filters(params, state=state, feed_id=feed_id, ids=None, unread=unread, starred=starred,
                         match=match, tag=tag, folder=folder)
        return await self._count(
            f"SELECT count(*) FROM (SELECT 1 FROM {_ARTICLE_JOINS} WHERE {' AND '.join(where) or '1'} LIMIT :cap)",
            params)

    async def unread_counts(self) -> dict[int | None, int]:
        """Unread articles per feed (None: saved links), as the triggers keep them: a story
        several feeds carry counts under each of them, as each one's list shows it, so these
        do not add up to the unread articles (`unread_total` does). A hidden article is not
        counted, a paused feed's are left out."""
        rows = await self._all(
            "SELECT feed, sum(articles) AS articles FROM ("
            " SELECT feed, articles FROM unread UNION ALL SELECT feed, articles FROM unread_sources)"
            f" WHERE feed NOT IN ({PAUSED}) GROUP BY feed HAVING sum(articles) > 0", {"now": time.time()})
        return {(int(row["feed"]) or None): int(row["articles"]) for row in rows}

    async def unread_per_folder(self) -> dict[str, int]:
        """Unread articles per folder, each once: a story two feeds of a folder carry is one
        card in the folder's list (the sum of its feeds' counts would count it twice). The
        folder's own articles from the counter, plus the stories only its feeds' sources
        bring (a pass over sources, which holds only the stories in several feeds)."""
        counts = {r["folder"]: int(r["n"]) for r in await self._all(
            "SELECT f.folder, sum(u.articles) AS n FROM unread u JOIN feeds f ON f.id = u.feed"
            " WHERE f.folder IS NOT NULL GROUP BY f.folder")}
        for r in await self._all(
                """
                SELECT sf.folder, count(DISTINCT s.article_id) AS n FROM sources s
                JOIN feeds sf ON sf.id = s.feed_id JOIN articles a ON a.id = s.article_id
                LEFT JOIN feeds pf ON pf.id = a.feed_id
                WHERE a.read_at IS NULL AND sf.folder IS NOT NULL AND pf.folder IS NOT sf.folder
                GROUP BY sf.folder
                """):
            counts[r["folder"]] = counts.get(r["folder"], 0) + int(r["n"])
        return counts

    async def unread_total(self, *, saved: bool = True) -> int:
        """Unread articles, each once whichever feeds carry it; without `saved`, those of feeds."""
        return await self._count("SELECT coalesce(sum(articles), 0) FROM unread WHERE articles > 0"
                                 + ("" if saved else " AND feed != 0"))

    async def reading_count(self) -> int:
        """How many articles are cleaned and not done: the reading list's length."""
        return await self._count(f"SELECT {_READING_COUNT}")

    async def newest_id(self) -> int:
        """The highest article id: anything added later has a higher one."""
        return await self._count("SELECT coalesce(max(id), 0) FROM articles")

    async def mark_many(
        self, read: bool, *, ids: Sequence[int] | None = None, until: int | None = None,
        state: str | None = None, feed_id: int | None = None, unread: bool = False, starred: bool = False,
        match: str | None = None, tag: str | None = None, folder: str | None = None,
    ) -> tuple[list[int], float]:
        """Mark read (or unread) the articles with these ids, or every article the filter
        matches whose id is at most `until` (so nothing added since is touched). Only
        articles whose state changes are written; returns their ids and the read_at they
        now share, in one transaction. Read is not done: an article on the reading list
        stays there. Marking unread starts over one read to the end."""
        now = time.time()
        params: dict[str, Any] = {"now": now}
        where = selection(params, ids=ids, until=until, state=state, feed_id=feed_id, unread=unread,
                          starred=starred, match=match, tag=tag, folder=folder)
        where.append("a.read_at IS NULL" if read else "a.read_at IS NOT NULL")
        chosen = f"SELECT a.id FROM {_ARTICLE_JOINS} WHERE {' AND '.join(where)}"
        async with self._transaction() as db:
            if not read:
                rows = await rows_of(db, f"UPDATE articles SET {_NOT_READ} WHERE id IN ({chosen}) RETURNING id",
                                     params)
                return sorted(int(r["id"]) for r in rows), now
            # What each article was before, for the undo (see unmark_stamp); undo rows are
            # worth keeping only as long as a notice offering the undo may still be open.
            await db.execute("DELETE FROM read_undo WHERE stamp < ?", (now - UNDO_KEPT,))
            await db.execute(
                f"""
                INSERT INTO read_undo (stamp, article_id, read_at, read_position, read_position_at)
                SELECT :now, id, read_at, read_position, read_position_at FROM articles WHERE id IN ({chosen})
                """,
                params,
            )
            rows = await rows_of(
                db,
                f"""
                UPDATE articles SET {_READ}
                WHERE id IN (SELECT article_id FROM read_undo WHERE stamp = :now)
                RETURNING id
                """,
                {"now": now},
            )
        return sorted(int(r["id"]) for r in rows), now

    async def unmark_stamp(self, stamp: float) -> list[int]:
        """Undo a bulk read: every article whose read_at is still exactly that batch's
        stamp gets back the state it had before (unread); one opened since keeps its stamp
        (opening never rewrites read_at), one marked again since is left as it is. (A bulk
        read before schema v14 moved a place left part-way to the end: its undo puts the
        place back, unless it moved since.)"""
        async with self._transaction() as db:
            rows = await rows_of(
                db,
                """
                UPDATE articles SET read_at = u.read_at,
                    read_position = CASE WHEN articles.read_position_at IS :stamp
                                         THEN u.read_position ELSE articles.read_position END,
                    read_position_at = CASE WHEN articles.read_position_at IS :stamp
                                            THEN u.read_position_at ELSE articles.read_position_at END
                FROM read_undo u
                WHERE u.stamp = :stamp AND u.article_id = articles.id AND articles.read_at = :stamp
                RETURNING articles.id
                """,
                {"stamp": stamp},
            )
            await db.execute("DELETE FROM read_undo WHERE stamp = ?", (stamp,))
        return sorted(int(r["id"]) for r in rows)

    async def done_many(
        self, done: bool, *, ids: Sequence[int] | None = None, until: int | None = None,
        state: str | None = None, feed_id: int | None = None, unread: bool = False, starred: bool = False,
        match: str | None = None, tag: str | None = None, folder: str | None = None,
    ) -> tuple[list[int], float]:
        """Done (or not done) with the articles with these ids, or with every article the
        filter matches whose id is at most `until`, as `mark_many` picks them. Only those
        whose state changes are written; returns their ids and the done_at they now share.
        Every one of them was not done before, so that stamp is all an undo needs
        (`undone_stamp`): no table of the state before, as a bulk read keeps."""
        now = time.time()
        params: dict[str, Any] = {"now": now}
        where = selection(params, ids=ids, until=until, state=state, feed_id=feed_id, unread=unread,
                          starred=starred, match=match, tag=tag, folder=folder)
        where.append("a.done_at IS NULL" if done else "a.done_at IS NOT NULL")
        chosen = f"SELECT a.id FROM {_ARTICLE_JOINS} WHERE {' AND '.join(where)}"
        change = "done_at = :now" if done else _NOT_DONE
        async with self._transaction() as db:
            rows = await rows_of(db, f"UPDATE articles SET {change} WHERE id IN ({chosen}) RETURNING id", params)
        return sorted(int(r["id"]) for r in rows), now

    async def undone_stamp(self, stamp: float) -> list[int]:
        """Undo a bulk done: every article whose done_at is still exactly that batch's stamp
        is not done again, back on the reading list in its place (its tap order never
        moved). One made not done and done again since has another done_at: left as it is."""
        async with self._transaction() as db:
            rows = await rows_of(db, "UPDATE articles SET done_at = NULL WHERE done_at = ? RETURNING id", (stamp,))
        return sorted(int(r["id"]) for r in rows)

    async def line(self) -> list[dict[str, Any]]:
        """Every queued article in service order: those being cleaned first, then the
        waiting ones in the order the workers will take them. Positions are counted
        from this one statement's rows (a count per row would cost the square of the line)."""
        now = time.time()
        articles = await self._all(
            f"""
            SELECT {_ARTICLE_BASE_COLUMNS} FROM {_ARTICLE_JOINS}
            WHERE q.seq IS NOT NULL AND c.article_id IS NULL
            ORDER BY coalesce(cl.expires_at > :now, 0) DESC, q.due_at, q.seq
            """,
            {"now": now},
        )
        position = 0
        for article in articles:
            if article["state"] == "queued":
                position += 1
                article["position"] = position
            else:
                article["position"] = None
        return articles

    async def mark_read(self, article_id: int, read: bool = True) -> bool:
        """Mark read by hand (whether it is done is left alone), or unread (a place at the
        end is forgotten, so the article starts over)."""
        async with self._transaction() as db:
            # read_at is kept if it was read already: an undo goes by it
            # (unread: an article nobody tapped, only glanced at, is off the list no more)
            change = "read_at = coalesce(read_at, :now)" if read else f"{_UNGLANCE}, {_NOT_READ}"
            cur = await db.execute(f"UPDATE articles SET {change} WHERE id = :id", {"now": time.time(), "id": article_id})
            return cur.rowcount > 0

    async def mark_done(self, article_id: int, done: bool = True) -> bool:
        """Done with it (off the reading list; done_at kept if it was done already), or not
        done (back on the list in its place, a place at the end forgotten)."""
        async with self._transaction() as db:
            # (a glance's done_at is not the person's: saying done is)
            change = f"done_at = CASE WHEN done_at IS NULL OR {GLANCED} THEN :now ELSE done_at END" if done else _NOT_DONE
            cur = await db.execute(f"UPDATE articles SET {change} WHERE id = :id", {"now": time.time(), "id": article_id})
            return cur.rowcount > 0

    async def mark_opened(self, article_id: int) -> bool:
        """What opening an article does: read if it was unread, its place left alone. A
        tapped article is never done by it (opened and left, it stays on the reading list);
        one nobody tapped is done with at its first open until it is read in (GLANCE_DONE)."""
        async with self._transaction() as db:
            cur = await db.execute(f"UPDATE articles SET {GLANCE_DONE}, read_at = coalesce(read_at, :now) WHERE id = :id",
                                   {"now": time.time(), "id": article_id})
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
        """Save any link as an article (no feed). Returns (article id, created): a link
        here already in any spelling (saved, imported, or a feed's article) is that
        article, now saved as well, so saving it never makes a second card. Nothing is
        fetched: that takes a tap."""
        now = time.time()
        key = url_key(url)
        async with self._transaction() as db:
            rows = await rows_of(db, f"SELECT a.id FROM articles a WHERE a.url_key = ? ORDER BY {FIRST_COPY} LIMIT 1",
                                 (key,))
            if rows:
                await db.execute("UPDATE articles SET saved_at = ? WHERE id = ? AND saved_at IS NULL",
                                 (now, rows[0]["id"]))
                return rows[0]["id"], False
            rows = await rows_of(db,
                "INSERT INTO articles (feed_id, guid, url, title, sort_at, added_at, url_key, saved_at)"
                " VALUES (NULL, :url, :url, :title, :now, :now, :key, :now) RETURNING id",
                {"url": url, "title": title or url, "now": now, "key": key},
            )
            return rows[0]["id"], True

    async def search(self, query: str, *, limit: int = 50, offset: int = 0, ranked: int = SEARCH_RANKED,
                     state: str | None = None, feed_id: int | None = None, unread: bool = False,
                     starred: bool = False, tag: str | None = None, folder: str | None = None,
                     budget: float | None = None) -> list[dict[str, Any]]:
        """Full-text search, best match first among the `ranked` most recently added
        matches, then the older matches newest first; each with a snippet whose matches
        are wrapped in \x02 ... \x03 (the caller escapes the text and turns those into
        marks). `query` is an FTS5 query: build it with `fts_query`. With `budget`
        (seconds), a search still running after that long raises TooSlow."""
        now = time.time()
        params: dict[str, Any] = {"query": query, "now": now, "limit": limit, "offset": offset, "ranked": ranked}
        where = _filters(params, state=state, feed_id=feed_id, ids=None, unread=unread, starred=starred, match=None,
                         tag=tag, folder=folder)
        # the other filters narrow the matches before they are ranked and cut to a page
        # (checked per match: a subquery listing every article the filter admits cost seconds)
        only = (f"AND EXISTS (SELECT 1 FROM {_ARTICLE_JOINS} WHERE a.id = search.rowid AND {' AND '.join(where)})"
                if where else "")
        # bm25 costs a few microseconds for every match it ranks, so ranking all matches
        # made a common word cost O(library) (3.5x slower at 100,000 articles than at
        # 1,000). Only the newest `ranked` matches are ranked; the rest are read in
        # rowid order, which FTS5 gives without sorting and stops at the page. Snippets
        # and the article columns are then built for one page only.
        articles = await self._all(
            f"""
            WITH {_LINE}, cutoff AS (
                SELECT coalesce((SELECT rowid FROM search WHERE search MATCH :query
                                 ORDER BY rowid DESC LIMIT 1 OFFSET :ranked), -1) AS id
            ),
            hits AS (
                SELECT * FROM (
                    SELECT rowid AS id, 0 AS part, bm25(search, 8.0, 2.0, 1.0) AS score
                    FROM search WHERE search MATCH :query AND rowid > (SELECT id FROM cutoff) {only}
                    ORDER BY score, rowid DESC LIMIT :limit + :offset
                )
                UNION ALL
                SELECT * FROM (
                    SELECT rowid AS id, 1 AS part, 0.0 AS score
                    FROM search WHERE search MATCH :query AND rowid <= (SELECT id FROM cutoff) {only}
                    ORDER BY rowid DESC LIMIT :limit + :offset
                )
                ORDER BY part, score, id DESC
                LIMIT :limit OFFSET :offset
            )
            SELECT {_ARTICLE_COLUMNS},
                   snippet(search, -1, char(2), char(3), '…', 16) AS snippet
            FROM hits JOIN search ON search.rowid = hits.id
                 JOIN articles a ON a.id = hits.id {_ARTICLE_LEFT_JOINS}
            WHERE search MATCH :query
            ORDER BY hits.part, hits.score, hits.id DESC
            """,
            params,
            budget=budget,
        )
        return articles
