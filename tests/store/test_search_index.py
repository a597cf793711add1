"""The search indexes (schema v24) leave out the characters a browser never shows: a soft
hyphen or a zero-width space inside a word made FTS5 read it as pieces, so the article could
not be found by the word. What was indexed before the upgrade is indexed again; the texts
themselves keep the page's characters."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from reader.store import Store
from reader.store.schema import MIGRATIONS

BODY = "Die Win\u00adzer ober\u00adhalb Bozens keltern den Ver\u200bnatsch"
QUOTE = "Mag\u00adda\u00adle\u00adner"


def _found(db: sqlite3.Connection, table: str, words: str) -> list[int]:
    return [row[0] for row in db.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (words,))]


async def test_an_index_made_before_the_upgrade_is_made_again_without_them(tmp_path: Path):
    path = tmp_path / "reader.db"
    await (await Store.open(path)).close()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        (aid,) = db.execute("INSERT INTO articles (feed_id, guid, url, title, sort_at, added_at)"
                            " VALUES (NULL, 'g', 'http://example.org/wine', ?, 0, 0) RETURNING id",
                            (f"Der St. {QUOTE}",)).fetchone()
        (other,) = db.execute("INSERT INTO articles (feed_id, guid, url, title, sort_at, added_at)"
                              " VALUES (NULL, 'h', 'http://example.org/clay', 'Clay', 0, 0) RETURNING id").fetchone()
        db.execute("INSERT INTO contents (article_id, html, text, words, cleaned_at) VALUES (?, '<p>x</p>', ?, 7, 0)",
                   (aid, BODY))
        (hid,) = db.execute("INSERT INTO highlights (article_id, quote, note, start_offset, end_offset, created_at,"
                            " updated_at) VALUES (?, ?, 'Ver\u200bnatsch', 0, 5, 1, 1) RETURNING id",
                            (aid, QUOTE)).fetchone()
        assert _found(db, "search", "oberhalb") == [aid]  # the triggers index what is written now
        assert _found(db, "highlights_search", "magdalener") == [hid]
        # as a reader before v24 indexed them: with the marks, in pieces
        db.execute("UPDATE search SET title = (SELECT title FROM articles WHERE id = ?), body = ? WHERE rowid = ?",
                   (aid, BODY, aid))
        db.execute("UPDATE highlights_search SET quote = ?, note = 'Ver\u200bnatsch' WHERE rowid = ?", (QUOTE, hid))
        assert _found(db, "search", "oberhalb") == [] and _found(db, "highlights_search", "vernatsch") == []
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")
    await (await Store.open(path)).close()  # migrates
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        for words in ("oberhalb", "vernatsch", "magdalener", "winzer bozens"):
            assert _found(db, "search", words) == [aid], words
        assert _found(db, "search", "clay") == [other]  # the rest of the index is as it was
        assert _found(db, "highlights_search", "magdalener") == _found(db, "highlights_search", "vernatsch") == [hid]
        assert db.execute("SELECT text FROM contents WHERE article_id = ?", (aid,)).fetchone()[0] == BODY
