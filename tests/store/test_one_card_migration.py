"""Schema v15 merges the copies of one link an older reader made (a saved link, an imported
one and a feed's article of the same page, spelled differently): for each link with at
most one feed's article, one article stays (the feed's, else the oldest) with every tag,
note, star, place, text, image, raw page and ledger row of the others. A file built at
v13 with raw SQL, as an older reader left it, migrated by opening it."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from reader.store import Store
from reader.urls import normalize_url

from ..helpers import database_at

HASH_1, HASH_5 = "1" * 64, "5" * 64


def old_library(path: Path) -> None:
    """Four links at v13: one a feed's article with two saved copies, one saved twice, one
    in two feeds and saved, one alone."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA foreign_keys = ON")
        db.executemany("INSERT INTO feeds (id, url, title, added_at) VALUES (?, ?, ?, 0)",
                       [(1, "http://example.org/a.xml", "A"), (2, "http://example.org/b.xml", "B")])
        articles = [
            # id, feed, url, title, sort_at, added_at, read_at, starred_at, tapped_at, position, position_at, error
            (1, 1, "http://example.org/story", "The story", 400, 500, None, None, 100, None, None, None),
            (2, None, "http://example.org/story/?utm_source=x", "http://example.org/story/?utm_source=x", 200, 200,
             None, 300, None, 0.4, 900, None),
            (3, None, "HTTP://Example.org/story#frag", "Story, saved", 250, 250, 250, None, None, 0.2, 260, None),
            (4, None, "http://example.org/two", "http://example.org/two", 100, 100, None, None, None, None, None,
             "the site answered HTTP 503"),
            (5, None, "http://example.org/two?fbclid=1", "Two", 300, 300, None, None, 310, 0.7, 320, None),
            (6, 1, "http://example.org/three", "Three in A", 10, 10, None, None, None, None, None, None),
            (7, 2, "http://example.org/three/", "Three in B", 11, 11, None, None, None, None, None, None),
            (8, None, "http://example.org/three?utm_medium=y", "Three saved", 12, 12, None, None, None, None, None,
             None),
            (9, None, "http://example.org/alone", "Alone", 13, 13, None, None, 14, None, None, None),
        ]
        db.executemany(
            "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at, read_at, starred_at, tapped_at,"
            " read_position, read_position_at, error, failed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*row[:2], row[2], *row[2:], None if row[-1] is None else 150) for row in articles])  # guid = url
        db.executemany(
            "INSERT INTO contents (article_id, html, text, words, cleaned_at) VALUES (?, ?, ?, 3, ?)",
            [(1, f'<p>story</p><img src="/articles/1/images/{HASH_1}">', "the feed story", 120),
             (5, f'<p>two</p><img src="/articles/5/images/{HASH_5}" srcset="/articles/5/images/{HASH_5} 2x">',
              "zebrawords of two", 330)])
        db.executemany("INSERT INTO images (article_id, hash, source, type, data) VALUES (?, ?, ?, 'image/png', x'00')",
                       [(1, HASH_1, "http://example.org/1.png"), (5, HASH_5, "http://example.org/5.png")])
        db.execute("INSERT INTO pages (article_id, url, size, data, stored_at) VALUES (5, 'http://example.org/two',"
                   " 1, x'00', 330)")
        db.execute("INSERT INTO imported (article_id, source, imported_at) VALUES (5, 'wallabag', 330)")
        db.executemany("INSERT INTO queue (article_id, tapped_at, due_at) VALUES (?, ?, ?)",
                       [(2, 600, 600), (4, 50, 50), (9, 14, 14)])
        db.executemany("INSERT INTO tags (id, name) VALUES (?, ?)", [(1, "feedtag"), (2, "b"), (3, "c")])
        db.executemany("INSERT INTO article_tags (article_id, tag_id) VALUES (?, ?)",
                       [(1, 1), (2, 2), (3, 2), (3, 3), (4, 3)])
        db.executemany("INSERT INTO notes (article_id, text, comment, created_at) VALUES (?, ?, ?, ?)",
                       [(2, "a highlight", "mine", 1.0), (3, "a highlight", "mine", 2.0), (3, "another", None, 3.0)])
        db.executemany("INSERT INTO runs (article_id, lane, worker, started_at, finished_at, outcome, error)"
                       " VALUES (?, 'queue', 'w', ?, ?, ?, ?)",
                       [(1, 110, 120, "cached", None), (3, 240, 241, "failed", "HTTP 503"), (5, 325, 330, "cached", None)])
        db.execute("INSERT INTO read_undo (stamp, article_id, read_at) VALUES (250, 3, NULL)")


def rows(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return db.execute(sql, params).fetchall()


async def test_the_copies_of_a_link_merge_into_one_article_and_lose_nothing(tmp_path):
    db = tmp_path / "reader.db"
    await database_at(db, 13)
    old_library(db)
    async with await Store.open(db) as store:
        # (7 and 8 are merged into 6 later, by v18: see the end)
        assert rows(db, "SELECT id FROM articles ORDER BY id") == [(1,), (4,), (6,), (9,)]
        assert rows(db, "SELECT count(*) FROM articles WHERE url_key IS NULL") == [(0,)]
        assert all(key == normalize_url(url) for url, key in rows(db, "SELECT url, url_key FROM articles"))

        # the feed's article stays, with what both saved copies had
        story = await store.get_article(1)
        assert story["feed_id"] == 1 and story["title"] == "The story" and story["state"] == "ready"
        assert story["starred_at"] == 300 and story["read_at"] == 250  # starred by one, read by the other
        assert story["added_at"] == 200 and story["sort_at"] == 400  # saved earlier; the feed's date orders it
        assert (story["read_position"], story["read_position_at"]) == (0.4, 900)  # the newer place
        assert (await store.tags_of([1]))[1] == ["b", "c", "feedtag"]
        assert [(n["text"], n["comment"]) for n in await store.notes_of(1)] == [("a highlight", "mine"),
                                                                              ("another", None)]
        assert rows(db, "SELECT saved_at, tapped_at FROM articles WHERE id = 1") == [(200, 100)]
        assert rows(db, "SELECT article_id FROM queue ORDER BY article_id") == [(9,)]  # the merged are ready: out of line
        assert rows(db, "SELECT article_id, outcome FROM runs ORDER BY id") == [(1, "cached"), (1, "failed"),
                                                                             (4, "cached")]
        assert rows(db, "SELECT article_id FROM read_undo") == [(1,)]

        # two saved copies: the older stays, and takes the other's text, images, raw page and place
        two = await store.get_article(4)
        assert two["title"] == "Two" and two["state"] == "ready" and two["error"] is None
        assert (two["read_position"], two["added_at"]) == (0.7, 100)
        content = await store.get_content(4)
        assert content is not None and content["text"] == "zebrawords of two"
        assert "/articles/5/" not in content["html"] and content["html"].count(f"/articles/4/images/{HASH_5}") == 2
        assert (await store.image(4, HASH_5)) is not None
        assert rows(db, "SELECT article_id FROM pages") == [(4,)]
        assert rows(db, "SELECT article_id, source FROM imported") == [(4, "wallabag")]
        assert rows(db, "SELECT tap_order FROM articles WHERE id = 4") == [(310,)]  # its first tap
        assert (await store.tags_of([4]))[4] == ["c"]

        # one link in two feeds is not this step's to merge: v18 makes it one story, A's
        # article with B as its source, the saved copy in it
        assert rows(db, "SELECT id FROM articles WHERE url_key = 'http://example.org/three'") == [(6,)]
        assert rows(db, "SELECT feed_id, guid, article_id FROM sources") == [(2, "http://example.org/three/", 6)]

        # the search index, the counts and the keys all follow
        found = rows(db, "SELECT rowid FROM search WHERE search MATCH 'zebrawords'")
        assert found == [(4,)] and rows(db, "SELECT count(*) FROM search") == [(4,)]
        assert await store.reading_count() == rows(db, "SELECT count(*) FROM articles WHERE tap_order IS NOT NULL"
                                                       " AND (read_at IS NULL OR read_position < 0.98)")[0][0] == 2
        unread = dict(rows(db, "SELECT coalesce(feed_id, 0), count(*) FROM articles WHERE read_at IS NULL"
                               " GROUP BY coalesce(feed_id, 0)"))
        assert unread == {0: 2, 1: 1}
        # the story A and B carry counts in both
        assert {feed or 0: n for feed, n in (await store.unread_counts()).items()} == {0: 2, 1: 1, 2: 1}
        assert rows(db, "PRAGMA foreign_key_check") == []
        assert rows(db, "SELECT saved_at FROM articles WHERE id IN (6, 9) ORDER BY id") == [(12,), (13,)]
