"""Schema v18 merges the copies of one story that older readers made, one per feed that
carried its link: into the feed's article added first, each other feed a source of it, with
every star, read, place, tag, note and text of the copies (v15's _merge_copy), and the unread
counts following. A file built at v15 with raw SQL, as an older reader left it, migrated by
opening it."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from reader.store import Store
from reader.urls import normalize_url

from ..helpers import database_at

KEY = normalize_url("http://example.org/story")


def old_library(path: Path) -> None:
    """Three feeds at v15 with the story each, spelled three ways, a second copy of it in B (a
    guid that changed), a saved copy, and an item of B's own."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA foreign_keys = ON")
        db.executemany("INSERT INTO feeds (id, url, title, added_at) VALUES (?, ?, ?, 0)",
                       [(1, "http://example.org/a.xml", "A"), (2, "http://example.org/b.xml", "B"),
                        (3, "http://example.org/c.xml", "C")])
        articles = [
            # id, feed, guid, url, title, sort_at, added_at, read_at, starred_at, tapped_at, position, position_at
            (10, 1, "a1", "http://example.org/story", "The story", 100, 100, None, 150, None, None, None),
            (11, 2, "b1", "http://example.org/story/?utm_source=x", "The story in B", 200, 200, 250, None, 210,
             0.5, 260),
            (12, 3, "c1", "HTTP://example.org/story#x", "The story in C", 300, 300, None, None, None, None, None),
            (13, 2, "b2", "http://example.org/b-own", "B's own", 50, 50, None, None, None, None, None),
            (14, None, "http://example.org/story?fbclid=1", "http://example.org/story?fbclid=1",
             "http://example.org/story?fbclid=1", 400, 400, None, None, None, None, None),
            (15, 2, "b1-new-guid", "http://example.org/story", "The story in B again", 500, 500, None, None, None,
             None, None),
        ]
        db.executemany(
            "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at, read_at, starred_at, tapped_at,"
            " read_position, read_position_at, url_key, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*row, normalize_url(row[3]), 400 if row[1] is None else None) for row in articles])
        db.execute("INSERT INTO contents (article_id, html, text, words, cleaned_at) VALUES"
                   " (12, '<p>the text of c</p>', 'the text of c', 4, 320)")
        db.executemany("INSERT INTO tags (id, name) VALUES (?, ?)", [(1, "b-tag"), (2, "saved-tag")])
        db.executemany("INSERT INTO article_tags (article_id, tag_id) VALUES (?, ?)", [(11, 1), (14, 2)])
        db.execute("INSERT INTO notes (article_id, text, comment, created_at) VALUES (12, 'a highlight', 'c', 1)")
        db.execute("INSERT INTO runs (article_id, lane, worker, started_at, finished_at, outcome)"
                   " VALUES (12, 'queue', 'w', 310, 320, 'cached')")


def rows(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return db.execute(sql, params).fetchall()


async def test_the_copies_of_a_story_in_several_feeds_merge_into_one_with_every_source(tmp_path):
    db = tmp_path / "reader.db"
    await database_at(db, 15)
    old_library(db)
    async with await Store.open(db) as store:
        # A's article stays, B's and C's are its sources, the saved copy in it; B's second copy
        # (another guid in the same feed) is left as it is
        assert rows(db, "SELECT id FROM articles WHERE url_key = ? ORDER BY id", (KEY,)) == [(10,), (15,)]
        assert rows(db, "SELECT feed_id, guid, article_id, title, added_at FROM sources ORDER BY feed_id") == [
            (2, "b1", 10, "The story in B", 200), (3, "c1", 10, "The story in C", 300)]
        story = await store.get_article(10)
        assert story["feed_id"] == 1 and story["title"] == "The story" and story["sort_at"] == 100
        assert story["starred_at"] == 150 and story["read_at"] == 250  # starred in A, read in B
        assert (story["read_position"], story["read_position_at"]) == (0.5, 260)
        assert story["state"] == "ready"  # C's text came with it
        assert rows(db, "SELECT saved_at, tapped_at FROM articles WHERE id = 10") == [(400, 210)]
        assert (await store.get_content(10))["text"] == "the text of c"
        assert (await store.tags_of([10]))[10] == ["b-tag", "saved-tag"]
        assert [n["text"] for n in await store.notes_of(10)] == ["a highlight"]
        assert rows(db, "SELECT article_id FROM runs") == [(10,)]

        # each feed lists it, and its counts are what the lists show
        for feed in (1, 2, 3):
            assert 10 in {a["id"] for a in await store.list_articles(feed_id=feed)}
        counts = await store.unread_counts()
        for feed in (1, 2, 3):
            assert counts.get(feed, 0) == len(await store.list_articles(feed_id=feed, unread=True))
        assert counts == {2: 2}  # B's own and its second copy; the story is read
        await store.mark_read(10, False)
        assert await store.unread_counts() == {1: 1, 2: 3, 3: 1}
        assert await store.unread_total() == 3
        assert rows(db, "PRAGMA foreign_key_check") == []
        assert rows(db, "SELECT count(*) FROM search") == rows(db, "SELECT count(*) FROM articles")
