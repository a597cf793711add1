"""Unread articles per feed, kept in a table by triggers (schema v10) so that the browse
page's filter bar and the feeds page do not count them on every request: checked against
a count over the articles themselves after every kind of change, and after migrating a
library that already has articles."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from reader.store import Store
from ..helpers import database_at


def counted(path: Path) -> dict[int | None, int]:
    """The rule, from the base table."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute(
            "SELECT feed_id, count(*) FROM articles WHERE read_at IS NULL GROUP BY feed_id").fetchall()
    connection.close()
    return {feed: n for feed, n in rows}


async def test_unread_counts_follow_every_change_and_the_migration_counts_what_is_there(tmp_path):
    db = tmp_path / "library.db"
    await database_at(db, 9)
    with sqlite3.connect(db) as connection:
        connection.executemany("INSERT INTO feeds (id, url, added_at) VALUES (?, ?, 0)",
                               [(1, "http://127.0.0.1/a"), (2, "http://127.0.0.1/b")])
        connection.executemany(
            "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at, read_at)"
            " VALUES (?, ?, ?, ?, 't', ?, 0, ?)",
            [(i, feed, str(i), f"http://127.0.0.1/{i}", i, read) for i, feed, read in [
                (1, 1, None), (2, 1, None), (3, 1, 5.0), (4, 2, None), (5, None, None), (6, None, 7.0)]])
    connection.close()

    async with await Store.open(db) as store:
        assert await store.unread_counts() == counted(db) == {1: 2, 2: 1, None: 1}
        changes = [
            "UPDATE articles SET read_at = 9 WHERE id = 1",            # read
            "UPDATE articles SET read_at = NULL WHERE id = 3",         # unread again
            "UPDATE articles SET read_at = 10 WHERE id = 3",           # read: written twice, counted once
            "UPDATE articles SET feed_id = NULL WHERE id = 2",         # kept when its feed goes
            "UPDATE articles SET feed_id = 2, read_at = 11 WHERE id = 5",  # moved and read at once
            "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at)"
            " VALUES (7, 2, '7', 'http://127.0.0.1/7', 't', 7, 0)",     # a new unread one
            "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at, read_at)"
            " VALUES (8, 1, '8', 'http://127.0.0.1/8', 't', 8, 0, 3)",  # imported already read
            "UPDATE articles SET title = 'renamed' WHERE id = 7",      # not a change of count
            "DELETE FROM articles WHERE id = 2",
            "DELETE FROM feeds WHERE id = 2",                          # its articles go with it
        ]
        for change in changes:
            with sqlite3.connect(db) as connection:
                connection.execute("PRAGMA foreign_keys = ON")
                connection.execute(change)
            connection.close()
            assert await store.unread_counts() == counted(db), change
        assert await store.unread_counts() == {}
        [first] = [f for f in await store.list_feeds() if f["id"] == 1]
        assert first["unread"] == 0


async def test_marking_through_the_store_keeps_the_counts(tmp_path):
    db = tmp_path / "library.db"
    async with await Store.open(db) as store:
        with sqlite3.connect(db) as connection:
            connection.execute("INSERT INTO feeds (id, url, added_at) VALUES (1, 'http://127.0.0.1/a', 0)")
            connection.executemany(
                "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at) VALUES (?, 1, ?, ?, 't', ?, 0)",
                [(i, str(i), f"http://127.0.0.1/{i}", i) for i in range(1, 11)])
        connection.close()
        assert await store.unread_counts() == {1: 10}
        ids, stamp = await store.mark_many(True, ids=[1, 2, 3])
        assert sorted(ids) == [1, 2, 3] and await store.unread_counts() == counted(db) == {1: 7}
        await store.mark_many(True, until=10, feed_id=1)
        assert await store.unread_counts() == counted(db) == {}
        await store.mark_many(False, ids=[4, 5])
        assert await store.unread_counts() == counted(db) == {1: 2}
        [feed] = await store.list_feeds()
        assert feed["unread"] == 2
