"""The line and its claims: taps fill the queue, workers take from it, and one claim
row per article decides who extracts it (a worker or a direct open)."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import aiosqlite

from ..records import RawPage, StoredImage
from .articles import selection
from .base import _ARTICLE_JOINS, _SERVICE_ORDER, _WAITING, Run, StoreBase, open_connection, rows_of
from .highlights import reanchor
from .rows import ClaimRow, WaitingRow


class LineStore(StoreBase):

    # A connection that only ever asks `PRAGMA data_version`: its own, so the question is
    # never stuck behind a slow read, and (since it never writes) its answer changes with
    # every commit by anyone, this process included.
    _watcher: aiosqlite.Connection | None = None
    # The write connection `url_host` is registered on (take_next's one-site-at-a-time rule).
    _hosts_on: aiosqlite.Connection | None = None

    async def data_version(self) -> int:
        """A number that changes whenever anything commits to the database, in any
        process: how idle workers notice a tap made elsewhere without polling the line."""
        if self._read_only:  # nobody can commit, and a connection of its own cannot even open
            rows = await rows_of(self._read, "PRAGMA data_version")
            return int(rows[0][0])
        if self._watcher is None:
            watcher = await open_connection(self.path, configure=False)
            if self._watcher is None:
                self._watcher = watcher
            else:  # another task opened one meanwhile: one is enough
                await watcher.close()
        rows = await rows_of(self._watcher, "PRAGMA data_version")
        return int(rows[0][0])

    async def next_expiry(self) -> float | None:
        """When the earliest claim on a queued article runs out (wall clock): then that
        article is back in line, if its holder has not renewed by then."""
        rows = await rows_of(
            self._read,
            "SELECT min(cl.expires_at) FROM claims cl JOIN queue q ON q.article_id = cl.article_id",
        )
        value = rows[0][0]
        return None if value is None else float(value)

    async def close(self) -> None:
        if self._watcher is not None:
            await self._watcher.close()
            self._watcher = None
        await super().close()

    # -- the queue: filled only by taps ------------------------------------------

    async def queue(self, article_id: int, lane: str = "normal", next_lead: float = 600.0) -> bool:
        """A person's tap. Returns False if the article does not exist. Tapping twice is
        harmless; an article already cleaned is not queued again; tapping a queued article
        with the other lane moves it (its tap time stays).

        The lane rule: a "next" tap is due `next_lead` seconds before its tap time, so it
        goes ahead of every normal article tapped less than `next_lead` before it, and
        behind those tapped earlier. No normal article is ever passed by a "next" tap made
        more than `next_lead` after it: the normal lane cannot starve."""
        now = time.time()
        async with self._transaction() as db:
            exists = await rows_of(db, 
                "SELECT (SELECT 1 FROM contents WHERE article_id = :id) AS ready"
                " FROM articles WHERE id = :id",
                {"id": article_id},
            )
            if not exists:
                return False
            if exists[0]["ready"]:
                return True
            await _tap(db, [article_id], lane, now, next_lead if lane == "next" else 0.0)
            return True

    async def queue_many(self, *, limit: int, ids: Sequence[int] | None = None, until: int | None = None,
                         state: str | None = None, feed_id: int | None = None, unread: bool = False,
                         starred: bool = False, match: str | None = None, tag: str | None = None,
                         folder: str | None = None) -> tuple[list[int], int, float]:
        """A person's one act for many taps, in the normal lane: the articles with these ids,
        or every article the filter matches whose id is at most `until`, that are neither
        queued, being cleaned nor ready (new or failed). The oldest first, as each would
        have been tapped in turn, and at most `limit` of them. Returns (the ids queued, how
        many there were to queue, the batch's stamp): every queue row of the batch has the
        stamp as its tap time, which is how `unqueue_batch` finds them. `limit` is at most
        BATCH_MOST."""
        params: dict[str, Any] = {}
        where = selection(params, ids=ids, until=until, state=state, feed_id=feed_id, unread=unread,
                          starred=starred, match=match, tag=tag, folder=folder)
        where.append(_QUEUEABLE)
        chosen = f"FROM {_ARTICLE_JOINS} WHERE {' AND '.join(where)}"
        async with self._transaction() as db:
            now = time.time()
            while await rows_of(db, "SELECT 1 FROM queue WHERE tapped_at = ?", (now,)):
                now += BATCH_STEP  # another tap at the very same instant: the stamp must be the batch's own
            params["now"] = now
            matched = (await rows_of(db, f"SELECT count(*) {chosen}", params))[0][0]
            rows = await rows_of(db, f"SELECT a.id {chosen} ORDER BY a.sort_at, a.id LIMIT :limit",
                                 {**params, "limit": max(0, min(limit, BATCH_MOST))})
            batch = [int(r["id"]) for r in rows]
            await _tap(db, batch, "normal", now, 0.0)
        return batch, int(matched), now

    async def queueable(self, *, ids: Sequence[int] | None = None, until: int | None = None,
                        state: str | None = None, feed_id: int | None = None, unread: bool = False,
                        starred: bool = False, match: str | None = None, tag: str | None = None,
                        folder: str | None = None) -> int:
        """How many articles `queue_many` would find to queue in this selection (before its cap)."""
        params: dict[str, Any] = {"now": time.time()}
        where = selection(params, ids=ids, until=until, state=state, feed_id=feed_id, unread=unread,
                          starred=starred, match=match, tag=tag, folder=folder)
        where.append(_QUEUEABLE)
        return await self._count(f"SELECT count(*) FROM {_ARTICLE_JOINS} WHERE {' AND '.join(where)}", params)

    async def unqueue_batch(self, stamp: float) -> tuple[list[int], int]:
        """Take back one `queue_many`: exactly its articles still waiting in line, with no
        live claim (one a worker or an open has started is finished and kept: that work is
        under way), their first tap forgotten again. Returns (the ids taken back, how many
        of the batch could not be: being cleaned, cleaned or failed since). In the same
        write transaction as any take, so a claim either came first and stays, or comes
        after and finds the article gone from the line. An article of the batch that was
        tapped once before (a failed one retried) is counted only while it is still in line."""
        span = {"stamp": stamp, "last": stamp + BATCH_SPAN}
        async with self._transaction() as db:
            now = time.time()
            rows = await rows_of(db,
                """
                DELETE FROM queue WHERE tapped_at = :stamp AND NOT EXISTS (
                    SELECT 1 FROM claims cl WHERE cl.article_id = queue.article_id AND cl.expires_at > :now)
                RETURNING article_id
                """,
                {**span, "now": now},
            )
            taken = sorted(int(r["article_id"]) for r in rows)
            await db.execute(
                "UPDATE articles SET tapped_at = NULL WHERE id IN (SELECT value FROM json_each(:ids))"
                " AND tapped_at BETWEEN :stamp AND :last",
                {**span, "ids": json.dumps(taken)},
            )
            kept = await rows_of(db,
                """
                SELECT count(*) FROM articles a LEFT JOIN queue q ON q.article_id = a.id
                WHERE q.tapped_at = :stamp
                   OR (a.tapped_at BETWEEN :stamp AND :last AND q.article_id IS NULL
                       AND (a.error IS NOT NULL OR EXISTS (SELECT 1 FROM contents c WHERE c.article_id = a.id)))
                """,
                span,
            )
        return taken, int(kept[0][0])

    async def unqueue(self, article_id: int) -> bool:
        """Take an article out of the line. One already being cleaned is finished and kept:
        that work was paid for."""
        async with self._transaction() as db:
            cur = await db.execute("DELETE FROM queue WHERE article_id = ?", (article_id,))
            return cur.rowcount > 0

    async def waiting(self, now: float | None = None) -> list[WaitingRow]:
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
        return cast(list[WaitingRow], rows)

    # -- claims: one per article, shared by the worker and a direct open ------------

    async def take_next(self, worker: str, ttl: float) -> Run | None:
        """A worker takes the next article in line and makes it its own, in one
        transaction: pick, claim and open a ledger run, with no gap between them.

        One site at a time: the next article is the first in service order whose site
        (host name) has no live claim that fetches (a reclean reads its stored page). An
        article is passed over only while another article of its site is being cleaned;
        the moment that one is done, it is first again. Decided here, inside the same
        transaction as the claim, so two takers can never both fetch from one site."""
        async with self._transaction() as db:
            now = time.time()  # read once the lock is ours: waiting for it must not eat the claim's life
            await _close_expired(db, now)
            if self._hosts_on is not db:
                await db.create_function("url_host", 1, url_host, deterministic=True)
                self._hosts_on = db
            rows = await rows_of(db,
                f"""
                SELECT q.article_id FROM queue q JOIN articles a ON a.id = q.article_id
                WHERE {_WAITING} AND url_host(a.url) NOT IN (
                    SELECT url_host(busy.url) FROM claims cl
                    JOIN runs r ON r.id = cl.run_id AND r.kind <> 'reclean'
                    JOIN articles busy ON busy.id = cl.article_id
                    WHERE cl.expires_at > :now)
                {_SERVICE_ORDER} LIMIT 1
                """,
                {"now": now},
            )
            if not rows:
                return None
            return await _claim_in(db, rows[0]["article_id"], worker, "queue", ttl, now)

    async def claim(self, article_id: int, worker: str, ttl: float, kind: str = "fetch") -> Run | None:
        """The direct lane: claim one article, unless someone holds a live claim on it,
        or (except for a reclean, which replaces the text) it is cleaned already. The page a
        browser sent replaces a text that may be only the start (contents.partial): the
        person's second chance at the rest of it."""
        async with self._transaction() as db:
            now = time.time()  # as in take_next
            await _close_expired(db, now)
            rows = await rows_of(db, 
                """
                SELECT 1 FROM articles a WHERE a.id = :id
                AND (:reclean OR NOT EXISTS (SELECT 1 FROM contents WHERE article_id = :id
                                             AND NOT (:browser AND partial IS NOT NULL)))
                AND NOT EXISTS (SELECT 1 FROM claims WHERE article_id = :id AND expires_at > :now)
                """,
                {"id": article_id, "now": now, "reclean": kind == "reclean", "browser": kind == "browser"},
            )
            if not rows:
                return None
            return await _claim_in(db, article_id, worker, "direct", ttl, now, kind)

    async def close_expired_claims(self) -> None:
        """At start: close the runs of holders that died (a killed direct open has no
        worker to retake its article, so nothing else would ever close its run)."""
        async with self._transaction() as db:
            await _close_expired(db, time.time())

    async def renew(self, run: Run, ttl: float) -> bool:
        """Extend this run's claim. Fenced: a run whose claim was taken over cannot renew.
        A claim that lapsed (a renewal came late) and was dropped by someone's take, with
        nobody taking the article since, is still this run's: it is made again and the
        run is running again. A late holder is not a dead one."""
        async with self._transaction() as db:
            expires = time.time() + ttl
            cur = await db.execute(
                "UPDATE claims SET expires_at = ? WHERE article_id = ? AND run_id = ?",
                (expires, run.article_id, run.id),
            )
            if cur.rowcount > 0:
                return True
            if not await _holds(db, run):
                return False
            await db.execute("INSERT INTO claims (article_id, run_id, expires_at) VALUES (?, ?, ?)",
                             (run.article_id, run.id, expires))
            await db.execute("UPDATE runs SET outcome = NULL, finished_at = NULL, error = NULL"
                             " WHERE id = ? AND outcome = 'abandoned' AND error = ?", (run.id, EXPIRED))
            return True

    async def release(self, run: Run) -> None:
        """Give a claim back without a result (shutdown): the run is abandoned and the
        article, still in the queue if it was queued, goes to the next taker."""
        async with self._transaction() as db:
            await _finish(db, run, "abandoned", None)

    async def release_after_crash(self, run: Run, note: str, limit: int, reason: str) -> bool:
        """The extraction processes died under this run: give the claim back, with `note`
        on the abandoned run, unless this is the `limit`-th such run of the article since
        it last failed or was cleaned. Then the run fails instead, with `reason`, and the
        article leaves the line: a page that kills the pool every time is not taken
        endlessly. Counted from the ledger, so every process's tries add up. Returns True
        when it failed the article."""
        async with self._transaction() as db:
            rows = await rows_of(db,
                """
                SELECT count(*) AS crashes FROM runs
                WHERE article_id = :id AND outcome = 'abandoned' AND error = :note
                  AND id > coalesce((SELECT max(id) FROM runs WHERE article_id = :id
                                     AND outcome IN ('failed', 'cached')), 0)
                """,
                {"id": run.article_id, "note": note},
            )
            if rows[0]["crashes"] + 1 < limit:
                await _finish(db, run, "abandoned", note)
                return False
            holds = await _holds(db, run)
            if holds and run.kind != "reclean":  # as store_failed: a reclean keeps the text it had
                await db.execute("UPDATE articles SET error = ?, failed_at = ? WHERE id = ?"
                                 " AND NOT EXISTS (SELECT 1 FROM contents WHERE article_id = ?)",
                                 (reason, time.time(), run.article_id, run.article_id))
                await db.execute("DELETE FROM queue WHERE article_id = ?", (run.article_id,))
            await _finish(db, run, "failed", reason, revive=holds)
            return holds

    async def claim_holder(self, article_id: int) -> ClaimRow | None:
        return cast("ClaimRow | None", await self._one("SELECT * FROM claims WHERE article_id = ?", (article_id,)))

    async def store_cleaned(self, run: Run, content: Mapping[str, Any], images: Sequence[StoredImage] = (),
                            page: RawPage | None = None, received: int = 0) -> None:
        """Keep the result: content and its images in, out of the queue, error cleared,
        run cached (with the bytes it took in), claim released; the raw page kept within
        its budget. A result that arrives after the claim was lost is still kept (it was
        paid for); the first stored content wins, with its images. A reclean run replaces
        the text and images instead, but only while it holds the claim, and so does the page
        a browser sent for a text that may be only the start."""
        async with self._transaction() as db:
            holds = await _holds(db, run)
            if run.kind == "reclean" or (run.kind == "browser" and await _stops_short(db, run.article_id)):
                if not holds:
                    await _finish(db, run, "cached", None, received)
                    return
                await _replace_content(db, run, content, images)
                await reanchor(db, run.article_id)
            else:
                rows = await rows_of(
                    db,
                    """
                    INSERT INTO contents (article_id, title, author, published, html, text, words, cleaned_at, partial)
                    VALUES (:article_id, :title, :author, :published, :html, :text, :words, :now, :partial)
                    ON CONFLICT (article_id) DO NOTHING RETURNING article_id
                    """,
                    {**_content_params(content), "article_id": run.article_id, "now": time.time()},
                )
                if rows:
                    await _insert_images(db, run.article_id, images)
                    await reanchor(db, run.article_id)  # highlights that came before the text
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
            if page is not None:
                await _keep_page(db, run.article_id, page, self.raw_pages_budget)
            await _finish(db, run, "cached", None, received, revive=holds)

    async def store_failed(self, run: Run, error: str, page: RawPage | None = None, received: int = 0) -> None:
        """Record why extraction failed. Whatever good content exists stays untouched (a
        reclean that fails leaves the text it was meant to improve). A run that no longer
        holds the claim (it expired and passed on) only closes its ledger row: the
        article's state belongs to the new holder. A page that arrived but could not be
        cleaned is kept all the same: a better cleaner can try it again."""
        async with self._transaction() as db:
            holds = await _holds(db, run)
            if holds and run.kind != "reclean":
                await db.execute(
                    "UPDATE articles SET error = ?, failed_at = ? WHERE id = ?"
                    " AND NOT EXISTS (SELECT 1 FROM contents WHERE article_id = ?)",
                    (error, time.time(), run.article_id, run.article_id),
                )
                await db.execute("DELETE FROM queue WHERE article_id = ?", (run.article_id,))
            if holds and page is not None:
                await _keep_page(db, run.article_id, page, self.raw_pages_budget)
            await _finish(db, run, "failed", error, received, revive=holds)

    async def get_content(self, article_id: int) -> dict[str, Any] | None:
        return await self._one("SELECT * FROM contents WHERE article_id = ?", (article_id,))


# Cached: take_next asks it of every waiting article it passes over, on every look, inside
# the write lock. Parsed afresh, 1,000 articles of a busy site cost 20 ms a look; cached, 0.7 ms.
@functools.lru_cache(maxsize=1 << 16)
def url_host(url: str | None) -> str:
    """A URL's site for take_next: its host name, lower case. A URL without one (none
    should reach the line: saved URLs are http or https) is a site of its own."""
    try:
        host = urlsplit(url or "").hostname
    except ValueError:
        host = None
    return host.lower() if host else f"no host: {url}"


# A batch's articles are first tapped this many seconds apart, in the batch's order, so
# the reading list (in tap order) has them oldest first as the line does; a batch holds
# at most BATCH_MOST, so the undo finds them within BATCH_SPAN of the stamp.
BATCH_STEP = 1e-6
BATCH_MOST = 1000
BATCH_SPAN = BATCH_MOST * BATCH_STEP
# What a bulk queue takes: not in line, not being cleaned, not cleaned (new or failed).
_QUEUEABLE = "c.article_id IS NULL AND q.seq IS NULL AND NOT coalesce(cl.expires_at > :now, 0)"


async def _tap(db: aiosqlite.Connection, article_ids: Sequence[int], lane: str, now: float, lead: float) -> None:
    """Inside a write transaction: the taps themselves, one or a batch in this order. A
    queued article tapped again keeps its tap time and moves to this lane; each one's
    first tap is the reading list's order (a retry or a lane move does not count). A tap is
    asking to read it: one done with before is on the list once it is ready."""
    await db.executemany(
        """
        INSERT INTO queue (article_id, lane, tapped_at, due_at)
        VALUES (:id, :lane, :now, :now - :lead)
        ON CONFLICT (article_id) DO UPDATE SET
            lane = excluded.lane, due_at = queue.tapped_at - :lead
        """,
        [{"id": article_id, "lane": lane, "now": now, "lead": lead} for article_id in article_ids],
    )
    await db.executemany("UPDATE articles SET tapped_at = coalesce(tapped_at, ?), done_at = NULL WHERE id = ?",
                         [(now + i * BATCH_STEP, article_id) for i, article_id in enumerate(article_ids)])


# The note on a run whose claim ran out before it finished (its holder died, or was late).
EXPIRED = "claim expired before the run finished"


async def _close_expired(db: aiosqlite.Connection, now: float) -> None:
    """Inside a write transaction: every claim past its expiry is gone, and its run, if
    still open, is closed as abandoned, so /stats never counts a dead holder as running."""
    await db.execute(
        """
        UPDATE runs SET outcome = 'abandoned', finished_at = :now,
            error = :expired
        WHERE outcome IS NULL AND id IN (SELECT run_id FROM claims WHERE expires_at <= :now)
        """,
        {"now": now, "expired": EXPIRED},
    )
    await db.execute("DELETE FROM claims WHERE expires_at <= ?", (now,))


async def _claim_in(
    db: aiosqlite.Connection, article_id: int, worker: str, lane: str, ttl: float, now: float, kind: str = "fetch"
) -> Run:
    """Inside a write transaction that has checked nobody holds a live claim: open a
    ledger run and make its claim the article's. An expired claim's run is marked
    abandoned (its holder died or stalled past the expiry)."""
    await db.execute(
        """
        UPDATE runs SET outcome = 'abandoned', finished_at = :now,
            error = :expired
        WHERE id = (SELECT run_id FROM claims WHERE article_id = :id) AND outcome IS NULL
        """,
        {"id": article_id, "now": now, "expired": EXPIRED},
    )
    rows = await rows_of(db, 
        "INSERT INTO runs (article_id, lane, worker, started_at, kind) VALUES (?, ?, ?, ?, ?) RETURNING id",
        (article_id, lane, worker, now, kind),
    )
    run_id = rows[0]["id"]
    await db.execute(
        "INSERT INTO claims (article_id, run_id, expires_at) VALUES (?, ?, ?)"
        " ON CONFLICT (article_id) DO UPDATE SET run_id = excluded.run_id, expires_at = excluded.expires_at",
        (article_id, run_id, now + ttl),
    )
    url = (await rows_of(db, "SELECT url FROM articles WHERE id = ?", (article_id,)))[0]["url"]
    return Run(id=run_id, article_id=article_id, url=url, lane=lane, kind=kind)


async def _holds(db: aiosqlite.Connection, run: Run) -> bool:
    """Inside a write transaction: is the article still this run's to write? Yes while
    the claim row is its own, expired or not; and yes when its claim lapsed and was
    dropped by someone's take (_close_expired) but nobody has claimed the article since:
    its result is then the only one, and is recorded as such rather than as abandoned."""
    rows = await rows_of(
        db,
        """
        SELECT EXISTS (SELECT 1 FROM claims WHERE article_id = :article AND run_id = :run)
            OR (NOT EXISTS (SELECT 1 FROM claims WHERE article_id = :article)
                AND NOT EXISTS (SELECT 1 FROM runs WHERE article_id = :article AND id > :run)
                AND EXISTS (SELECT 1 FROM runs WHERE id = :run
                            AND (outcome IS NULL OR (outcome = 'abandoned' AND error = :expired))))
        """,
        {"article": run.article_id, "run": run.id, "expired": EXPIRED},
    )
    return bool(rows[0][0])


async def _finish(db: aiosqlite.Connection, run: Run, outcome: str, error: str | None, received: int = 0,
                  *, revive: bool = False) -> None:
    """Close a run and drop its claim. Both fenced by run id: a run cannot release a
    claim that has passed to someone else, nor rewrite an outcome already recorded;
    except (`revive`, for a run that still holds the article) the `abandoned` that a
    lapsed claim was given, which its real outcome replaces."""
    await db.execute(
        "UPDATE runs SET outcome = ?, error = ?, finished_at = ?, bytes = bytes + ? WHERE id = ?"
        " AND (outcome IS NULL OR (? AND outcome = 'abandoned' AND error = ?))",
        (outcome, error, time.time(), received, run.id, revive, EXPIRED),
    )
    await db.execute("DELETE FROM claims WHERE article_id = ? AND run_id = ?", (run.article_id, run.id))


async def _stops_short(db: aiosqlite.Connection, article_id: int) -> bool:
    """Whether the article's stored text may be only its start (contents.partial)."""
    return bool(await rows_of(db, "SELECT 1 FROM contents WHERE article_id = ? AND partial IS NOT NULL",
                              (article_id,)))


def _content_params(content: Mapping[str, Any]) -> dict[str, Any]:
    return {key: content.get(key) for key in ("title", "author", "published", "html", "text", "words", "partial")}


async def _replace_content(db: aiosqlite.Connection, run: Run, content: Mapping[str, Any],
                           images: Sequence[StoredImage]) -> None:
    """A reclean's result in place of the article's text and images (the caller checked
    that the run still holds the article: else the new holder's result counts)."""
    params = {**_content_params(content), "article_id": run.article_id, "now": time.time()}
    await db.execute(
        """
        INSERT INTO contents (article_id, title, author, published, html, text, words, cleaned_at, partial)
        VALUES (:article_id, :title, :author, :published, :html, :text, :words, :now, :partial)
        ON CONFLICT (article_id) DO UPDATE SET title = excluded.title, author = excluded.author,
            published = excluded.published, html = excluded.html, text = excluded.text,
            words = excluded.words, cleaned_at = excluded.cleaned_at, partial = excluded.partial
        """,
        params,
    )
    kept = json.dumps([image.hash for image in images])
    await db.execute(
        "DELETE FROM images WHERE article_id = ? AND hash NOT IN (SELECT value FROM json_each(?))",
        (run.article_id, kept),
    )
    await _insert_images(db, run.article_id, images)


async def _insert_images(db: aiosqlite.Connection, article_id: int, images: Sequence[StoredImage]) -> None:
    await db.executemany(
        "INSERT INTO images (article_id, hash, source, type, data) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (article_id, hash) DO NOTHING",
        [(article_id, image.hash, image.source, image.type, image.data) for image in images],
    )


async def _keep_page(db: aiosqlite.Connection, article_id: int, page: RawPage, budget: int) -> None:
    """Keep an article's raw page (the latest one replaces an earlier one), then drop the
    oldest raw pages until all of them fit the budget. A page larger than the whole
    budget is not kept at all."""
    if page.size > budget:
        await db.execute("DELETE FROM pages WHERE article_id = ?", (article_id,))
        return
    await db.execute(
        "INSERT INTO pages (article_id, url, charset, size, data, stored_at) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (article_id) DO UPDATE SET url = excluded.url, charset = excluded.charset,"
        " size = excluded.size, data = excluded.data, stored_at = excluded.stored_at",
        (article_id, page.url, page.charset, page.size, page.data, time.time()),
    )
    # the newest pages first: everything past the budget, counting down from them, goes
    await db.execute(
        """
        DELETE FROM pages WHERE article_id IN (
            SELECT article_id FROM (
                SELECT article_id, sum(size) OVER (ORDER BY stored_at DESC, article_id DESC) AS running
                FROM pages
            ) WHERE running > ?
        )
        """,
        (budget,),
    )
