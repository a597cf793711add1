"""Read and done, two facts (schema v14): the reading list is what is ready and not done.
The migration from v13 keeps every row where a person saw it; the reading list's length
(kept by triggers in the reading_list table, shown in every page's nav) stays the count of
its rule through every kind of change, made through the Reader on a real SQLite file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from reader.core import running
from reader.records import READING_LIST
from reader.store import MIGRATIONS, Store

from ..helpers import database_at, serve_feed

# The reading list as v13 had it: ready, and unread or left short of the end.
V13_RULE = "tap_order IS NOT NULL AND (read_at IS NULL OR read_position < 0.98)"


def ids_where(db: Path, condition: str) -> list[int]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(f"SELECT id FROM articles WHERE {condition} ORDER BY tap_order, id").fetchall()
    connection.close()
    return [article_id for (article_id,) in rows]


def counts(db: Path) -> tuple[int, int]:
    """(the kept length, the count of the rule over the base table)."""
    with sqlite3.connect(db) as connection:
        kept = connection.execute("SELECT articles FROM reading_list").fetchone()[0]
        counted = connection.execute(
            "SELECT count(*) FROM articles WHERE tap_order IS NOT NULL AND done_at IS NULL").fetchone()[0]
    connection.close()
    return kept, counted


async def test_migrating_to_v14_keeps_each_article_on_or_off_the_reading_list(tmp_path):
    db = tmp_path / "v13.db"
    await database_at(db, 13)
    # (id, tapped_at, read_at, read_position, ready): every way an article stood in v13
    rows = [
        (1, 100.0, None, None, True),    # ready, unread: on the list
        (2, 200.0, 50.0, None, True),    # opened and left without moving in: off
        (3, 300.0, 60.0, 0.5, True),     # opened and left half-way: on
        (4, 400.0, 70.0, 1.0, True),     # read to the end: off
        (5, 500.0, None, 0.3, True),     # marked unread, its place kept: on
        (6, 600.0, 80.0, 0.98, True),    # at the end exactly: off
        (7, 700.0, 90.0, None, False),   # tapped, read, not ready: in no ready list
        (8, None, 95.0, 0.4, True),      # opened without a tap, left part-way: on, at its cleaning time
        (9, None, 99.0, None, True),     # opened without a tap and left: off
        (10, None, None, None, False),   # untouched
    ]
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO feeds (id, url, added_at) VALUES (1, 'http://127.0.0.1/f', 0)")
        connection.executemany(
            "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at, tapped_at, read_at,"
            " read_position, read_position_at) VALUES (?, 1, ?, ?, 't', ?, 0, ?, ?, ?, ?)",
            [(i, str(i), f"http://127.0.0.1/{i}", i, tapped, read, place, 1.0 if place is not None else None)
             for i, tapped, read, place, _ in rows])
        connection.executemany(
            "INSERT INTO contents (article_id, html, text, words, cleaned_at) VALUES (?, '<p>x</p>', 'x', 1, ?)",
            [(i, 1000.0 + i) for i, *_, ready in rows if ready])
    connection.close()
    before = ids_where(db, V13_RULE)
    assert before == [1, 3, 5, 8]
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT articles FROM reading_list").fetchone()[0] == 4  # v13's own count
    connection.close()

    async with await Store.open(db) as store:
        assert [a["id"] for a in await store.list_articles(state="ready", unread=True)] == before
        assert await store.reading_count() == len(before)
        with sqlite3.connect(db) as connection:
            assert connection.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
            done = dict(connection.execute("SELECT id, done_at FROM articles"))
        connection.close()
        # off the list: done as of when it was read; everything else not done
        assert done == {1: None, 2: 50.0, 3: None, 4: 70.0, 5: None, 6: 80.0, 7: None, 8: None, 9: 99.0, 10: None}
        assert counts(db) == (4, 4)
        # from now on, opening is not done: one opened keeps its place; the end is done
        assert await store.mark_opened(1)
        assert await store.set_read_position(3, 1.0, 2000.0)
        assert [a["id"] for a in await store.list_articles(state="ready", unread=True)] == [1, 5, 8]
        assert counts(db) == (3, 3)


async def test_merging_two_copies_of_a_link_keeps_the_reading_list_the_card_showed(tmp_path):
    """v15 merges the copies of one link into one article: done goes with the text that
    stays, so a card that was on the reading list is on it after, and one off it stays off."""
    db = tmp_path / "v14.db"
    await database_at(db, 14)
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO feeds (id, url, added_at) VALUES (1, 'http://127.0.0.1/f', 0)")
        # (id, feed, url, read_at, done_at, ready)
        rows = [(1, 1, "http://127.0.0.1/one", None, 5.0, False),    # the feed's: done while it waited
                (2, None, "http://127.0.0.1/one", None, None, True),  # its saved copy, ready: on the list
                (3, 1, "http://127.0.0.1/two", 6.0, 6.0, True),       # the feed's, ready and done
                (4, None, "http://127.0.0.1/two", None, None, False)]  # a saved copy, never cleaned
        connection.executemany(
            "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at, tapped_at, read_at, done_at)"
            " VALUES (?, ?, ?, ?, 't', ?, ?, ?, ?, ?)",
            [(i, feed, str(i), url, i, i, i, read, done) for i, feed, url, read, done, _ in rows])
        connection.executemany(
            "INSERT INTO contents (article_id, html, text, words, cleaned_at) VALUES (?, '<p>x</p>', 'x', 1, ?)",
            [(i, 100.0 + i) for i, *_, ready in rows if ready])
    connection.close()
    assert ids_where(db, "tap_order IS NOT NULL AND done_at IS NULL") == [2]
    async with await Store.open(db) as store:
        assert [a["id"] for a in await store.list_articles(state="ready", unread=True)] == [1]  # one's card
        assert [a["id"] for a in await store.list_articles(state="ready")] == [1, 3]
        assert await store.reading_count() == 1
    assert counts(db) == (1, 1)


def export_with_texts(pages, names: list[str], done: dict[str, float | None]) -> bytes:
    """A reader export of saved links that came with their text, some of them done."""
    articles = [{"url": pages.url(f"/kept-{name}.html"), "title": f"Kept {name}", "feed_url": None,
                 "read_at": done.get(name), "done_at": done.get(name),
                 "content": {"html": f"<p>Kept {name} text.</p>", "text": f"Kept {name} text.", "words": 3}}
                for name in names]
    return json.dumps({"format": "reader-export", "version": 1, "feeds": [], "articles": articles}).encode()


async def test_the_reading_list_count_is_its_rule_after_every_change(settings, pages):
    settings = settings.replace(serve_workers=0, extract_processes=0)
    feed = serve_feed(pages, ["a", "b", "c", "d", "e", "f"])
    async with running(settings, worker=False, refresher=False) as reader:
        seen: list[int] = []

        async def check(step: str) -> None:
            kept, counted = counts(settings.db)
            assert kept == counted == await reader.reading_count(), step
            listed = [x.id for x in await reader.articles(state="ready", unread=True, limit=500)]
            assert len(listed) == counted, step
            seen.append(counted)

        subscription = await reader.subscribe(feed)
        by_url = {x.url: x.id for x in await reader.articles(feed_id=subscription.feed_id, limit=50)}
        a, b, c, d, e, f = (by_url[pages.url(f"/{slug}.html")] for slug in "abcdef")
        await check("subscribed")
        for article_id in (a, b, c, d):
            await reader.queue(article_id)
            await reader.open(article_id)  # cleaned now: ready
        await check("tapped and cleaned")                     # a b c d
        await reader.open(e)                                  # opened without a tap: on it too
        await check("opened without a tap")                   # a b c d e
        await reader.mark_opened(a)
        await reader.set_position(b, 0.4)
        await check("opened, and left part-way")              # unchanged
        await reader.set_position(b, 1.0)
        await check("read to the end")                        # a c d e
        await reader.set_position(b, 0.2)
        await check("a place after the end")                  # still done
        await reader.mark_done(c)
        await reader.mark_done(c)
        await check("done, twice")                            # a d e
        await reader.mark_done(c, False)
        await check("not done")                               # a c d e
        await reader.mark_many(True, within=READING_LIST, until=f)
        await reader.mark_many(False, ids=[a, b, c])
        await check("bulk read and unread")                   # unchanged
        marked = await reader.done_many(True, within=READING_LIST, until=f)
        await check("bulk done of the list")                  # none
        assert sorted(marked.ids) == sorted([a, c, d, e])
        await reader.mark_done(d, False)
        await reader.mark_done(d)                             # done again, by itself: not the bulk's
        assert sorted(await reader.undo_done(marked.stamp)) == sorted([a, c, e])
        await check("its undo")                               # a c e
        await reader.done_many(False, ids=[d, b])
        await check("bulk not done")                          # a b c d e
        await reader.queue(f)
        await reader.mark_done(f)                             # done while waiting
        await reader.queue(f)                                 # tapped again: asking for it
        await reader.open(f)
        await check("done while queued, tapped, cleaned")     # a b c d e f
        outcome = await reader.import_data(export_with_texts(pages, ["one", "two"], {"two": 5.0}), "library.json",
                                           fetch=False)
        assert outcome.contents == 2
        await check("imported with their texts, one done")    # + one
        assert await reader.reclean(a) == ("cached", None)
        await check("cleaned again")
        await reader.unsubscribe(subscription.feed_id)        # kept as library items: read or starred ones
        await check("unsubscribed")
    assert seen == [0, 4, 5, 5, 4, 4, 3, 4, 4, 0, 3, 5, 6, 7, 7, seen[-1]]
