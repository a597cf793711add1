"""highlight_changes (schema v18): the library's version when each article's highlights last
changed, by which the reader view keeps them and reads them again only when it moved. Every
write to a highlight, by any connection, must move it; an article migrated with highlights
must have it (one without a row is read as having none)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from reader.store import Store
from reader.store.schema import MIGRATIONS, _v19_to_v20


def _versions(db: sqlite3.Connection) -> dict[int, int]:
    return dict(db.execute("SELECT article_id, version FROM highlight_changes").fetchall())


def _highlight(db: sqlite3.Connection, article_id: int, quote: str) -> int:
    cur = db.execute("INSERT INTO highlights (article_id, quote, start_offset, end_offset, created_at, updated_at)"
                     " VALUES (?, ?, 0, 5, 1, 1)", (article_id, quote))
    assert cur.lastrowid is not None
    return cur.lastrowid


async def test_every_write_to_a_highlight_moves_its_articles_version(tmp_path: Path):
    path = tmp_path / "reader.db"
    await (await Store.open(path)).close()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:  # any other connection
        assert _versions(db) == {}
        one = _highlight(db, 1, "one")
        first = _versions(db)[1]
        db.execute("UPDATE articles SET starred_at = 1")  # elsewhere in the library: not its highlights
        db.execute("UPDATE highlights SET note = 'a note' WHERE id = ?", (one,))
        noted = _versions(db)[1]
        db.execute("UPDATE highlights SET start_offset = 2 WHERE id = ?", (one,))  # placed again
        placed = _versions(db)[1]
        db.execute("UPDATE highlights SET article_id = 2 WHERE id = ?", (one,))  # both articles change
        moved = _versions(db)
        db.execute("DELETE FROM highlights WHERE id = ?", (one,))
        deleted = _versions(db)[2]
        assert first < noted < placed < moved[1] == moved[2] < deleted


async def test_a_database_migrated_with_highlights_has_their_versions(tmp_path: Path):
    path = tmp_path / "reader.db"
    await (await Store.open(path)).close()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        _highlight(db, 3, "three")
        _highlight(db, 3, "again")
        _highlight(db, 4, "four")
        # back to schema v19, as a reader before highlight_changes (v20) left it: without
        # it, and without what the steps after it add (v21, contents.partial; v22, imports;
        # v23, rules.swept_at)
        for trigger in ("insert", "update", "delete"):
            db.execute(f"DROP TRIGGER highlight_changes_{trigger}")
        db.execute("DROP TABLE highlight_changes")
        db.execute("ALTER TABLE contents DROP COLUMN partial")
        db.execute("DROP TABLE imports")
        db.execute("ALTER TABLE rules DROP COLUMN swept_at")
        db.execute(f"PRAGMA user_version = {MIGRATIONS.index(_v19_to_v20)}")
    await (await Store.open(path)).close()  # migrates
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert set(_versions(db)) == {3, 4}
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
