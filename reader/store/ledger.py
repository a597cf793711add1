"""Live workers and the ledger of extraction runs: wait estimates and /stats."""

from __future__ import annotations

import time
from typing import Any, cast

from .base import RUN_KINDS, StoreBase
from .rows import RunCounts, TimingRow, WorkRow

# The latest finished runs, for the wait estimates. The index is named, not left to the
# planner: without statistics it picks runs_by_outcome and sorts every finished run the
# ledger holds to keep the newest few.
RECENT_TIMINGS = (
    "SELECT a.url, r.finished_at - r.started_at AS seconds FROM runs r INDEXED BY runs_by_finished"
    " LEFT JOIN articles a ON a.id = r.article_id"
    " WHERE r.outcome IN ('cached', 'failed') ORDER BY r.finished_at DESC LIMIT ?"
)


class LedgerStore(StoreBase):

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
        return await self._count("SELECT coalesce(sum(slots), 0) FROM workers WHERE expires_at > ?", (time.time(),))

    async def recent_timings(self, limit: int = 200) -> list[TimingRow]:
        """The latest finished extractions, newest first, each with the URL it fetched
        (None once its article is gone): per-site wait estimates."""
        return cast(list[TimingRow], await self._all(RECENT_TIMINGS, (limit,)))

    async def work_in_line(self) -> list[WorkRow]:
        """What the workers still have to do, in the order they do it: the articles being
        cleaned (with when their run started), then the waiting ones in service order."""
        now = time.time()
        return cast(list[WorkRow], await self._all(
            """
            SELECT q.article_id, a.url, r.started_at,
                   (cl.expires_at IS NOT NULL AND cl.expires_at > :now) AS cleaning
            FROM queue q JOIN articles a ON a.id = q.article_id
            LEFT JOIN claims cl ON cl.article_id = q.article_id
            LEFT JOIN runs r ON r.id = cl.run_id
            WHERE NOT EXISTS (SELECT 1 FROM contents c WHERE c.article_id = q.article_id)
            ORDER BY cleaning DESC, q.due_at, q.seq
            """,
            {"now": now},
        ))


    async def stats(self) -> RunCounts:
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
        assert row is not None  # an aggregate always has its one row
        # imported texts were never fetched: counted apart, outside started = cached + failed + ...
        return {"started": row["started"], "cached": row["cached"], "failed": row["failed"],
                "abandoned": row["abandoned"], "running": row["running"],
                "queued": await self._count("SELECT count(*) FROM queue"),
                "imported": await self._count("SELECT count(*) FROM imported")}

    async def week(self, since: float) -> dict[str, int]:
        """What happened since `since`, for the stats page's summary: articles cleaned and
        failed (runs that finished then) and articles read (opened or marked read)."""
        row = await self._one(
            """
            SELECT count(*) FILTER (WHERE outcome = 'cached') AS cleaned,
                   count(*) FILTER (WHERE outcome = 'failed') AS failed
            FROM runs WHERE finished_at >= :since AND outcome IN ('cached', 'failed')
            """, {"since": since})
        assert row is not None  # an aggregate always has its one row
        read = await self._count("SELECT count(*) FROM articles WHERE read_at >= :since", {"since": since})
        return {"cleaned": row["cleaned"], "failed": row["failed"], "read": read}

    async def stats_by_kind(self) -> dict[str, dict[str, int]]:
        """The same counts for each kind of run (fetch, reclean, browser), each with the
        bytes its runs took in: started = cached + failed + abandoned + running holds for
        every kind on its own."""
        rows = await self._all(
            """
            SELECT kind, count(*) AS started,
                   count(*) FILTER (WHERE outcome = 'cached') AS cached,
                   count(*) FILTER (WHERE outcome = 'failed') AS failed,
                   count(*) FILTER (WHERE outcome = 'abandoned') AS abandoned,
                   count(*) FILTER (WHERE outcome IS NULL) AS running,
                   coalesce(sum(bytes), 0) AS bytes
            FROM runs GROUP BY kind
            """
        )
        found = {row.pop("kind"): row for row in rows}
        empty = {"started": 0, "cached": 0, "failed": 0, "abandoned": 0, "running": 0, "bytes": 0}
        return {kind: found.get(kind, dict(empty)) for kind in RUN_KINDS}

    async def runs(self, article_id: int | None = None) -> list[dict[str, Any]]:
        if article_id is None:
            return await self._all("SELECT * FROM runs ORDER BY id")
        return await self._all("SELECT * FROM runs WHERE article_id = ? ORDER BY id", (article_id,))

    async def latest_runs(self, limit: int) -> list[dict[str, Any]]:
        """The latest runs, newest first, each with its article's title (None once the
        article is gone: the ledger outlives it)."""
        return await self._all(
            "SELECT r.*, a.title FROM runs r LEFT JOIN articles a ON a.id = r.article_id ORDER BY r.id DESC LIMIT ?",
            (limit,),
        )
