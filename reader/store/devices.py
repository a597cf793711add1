"""What devices send and keep: reading positions, the actions a device sent with its own
id (remembered with their answers, so a replay is a no-op), and the reading list as a
device saves it for offline reading."""

from __future__ import annotations

import time
from typing import Any, cast

from ..records import FINISHED
from .base import GLANCED, NOT_DONE, StoreBase, rows_of
from .rows import OfflineRow

# An action remembered this long answers its replays; a device offline for longer than
# this sends its action as new (reading state is set, never toggled, so it lands the same).
ACTION_MEMORY = 30 * 86400.0
# An action claimed but not finished this long ago was cut off (the process died while
# applying it): its next replay applies it again.
ACTION_STALE = 120.0


class DeviceStore(StoreBase):

    async def set_read_position(self, article_id: int, fraction: float, at: float) -> bool | None:
        """Where the person is in an article, reached at `at` (the device's clock). A place
        reached earlier than the one stored is ignored: an offline phone syncing late must
        not move a newer place back. Returns whether it was stored; None: no such article."""
        async with self._transaction() as db:
            rows = await rows_of(db, "SELECT read_position_at FROM articles WHERE id = ?", (article_id,))
            if not rows:
                return None
            stored = rows[0]["read_position_at"]
            if stored is not None and stored > at:
                return False
            # reaching the end is being done with it (off the reading list), and read if it
            # was not yet; a place short of it leaves done as it is, but for an article
            # nobody tapped and only glanced at (store.base.GLANCED): being read in, it is
            # on the list again, in progress
            await db.execute(
                "UPDATE articles SET read_position = :fraction, read_position_at = :at,"
                " read_at = CASE WHEN :fraction >= :end THEN coalesce(read_at, :now) ELSE read_at END,"
                f" done_at = CASE WHEN :fraction >= :end THEN CASE WHEN done_at IS NULL OR {GLANCED} THEN :now"
                "                                                 ELSE done_at END"
                f"                WHEN :fraction > 0 AND {GLANCED} THEN NULL ELSE done_at END WHERE id = :id",
                {"fraction": fraction, "at": at, "end": FINISHED, "now": time.time(), "id": article_id})
            return True

    async def begin_action(self, key: str, action: str) -> dict[str, Any] | None:
        """Claim the device's action `key` for applying it now: None if this caller is to
        apply it, else the row of the same key (`action`, `status`, `answer`; status NULL:
        someone else is applying it right now). One transaction, so two replays racing
        cannot both apply it."""
        now = time.time()
        async with self._transaction() as db:
            await db.execute("DELETE FROM actions WHERE at < ? AND status IS NOT NULL", (now - ACTION_MEMORY,))
            rows = await rows_of(db, "SELECT key, action, status, answer, at FROM actions WHERE key = ?", (key,))
            if rows:
                row = dict(rows[0])
                if row["status"] is not None or row["at"] > now - ACTION_STALE or row["action"] != action:
                    return row
                await db.execute("UPDATE actions SET at = ? WHERE key = ?", (now, key))
                return None
            await db.execute("INSERT INTO actions (key, action, at) VALUES (?, ?, ?)", (key, action, now))
            return None

    async def finish_action(self, key: str, status: int, answer: str) -> None:
        async with self._transaction() as db:
            await db.execute("UPDATE actions SET status = ?, answer = ? WHERE key = ?", (status, answer, key))

    async def drop_action(self, key: str) -> None:
        """Forget an action that could not be applied (the disk, a shutdown): a replay tries again."""
        async with self._transaction() as db:
            await db.execute("DELETE FROM actions WHERE key = ? AND status IS NULL", (key,))

    async def action(self, key: str) -> dict[str, Any] | None:
        return await self._one("SELECT key, action, status, answer, at FROM actions WHERE key = ?", (key,))

    async def reading_list_contents(self, limit: int) -> list[OfflineRow]:
        """The reading list in tap order (oldest first), each article's id, cleaned HTML
        and its size: what a device saves for offline reading."""
        return cast(list[OfflineRow], await self._all(
            f"""
            SELECT a.id, c.html, length(CAST(c.html AS BLOB)) AS bytes
            FROM articles a JOIN contents c ON c.article_id = a.id
            WHERE a.tap_order IS NOT NULL AND {NOT_DONE}  -- the articles_to_read index, in order
            ORDER BY a.tap_order, a.id
            LIMIT ?
            """,
            (limit,),
        ))
