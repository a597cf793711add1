"""Live workers and the ledger of extraction runs: wait estimates and /stats."""

from __future__ import annotations

import time
from typing import Any

from .base import StoreBase


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
        assert row is not None  # an aggregate always has its one row
        return {**row, "queued": await self._count("SELECT count(*) FROM queue")}

    async def runs(self, article_id: int | None = None) -> list[dict[str, Any]]:
        if article_id is None:
            return await self._all("SELECT * FROM runs ORDER BY id")
        return await self._all("SELECT * FROM runs WHERE article_id = ? ORDER BY id", (article_id,))
