"""The reading list's order, stored (schema v9): a ready article stands at its first tap,
else at its cleaning time, ties by id. Every path that changes either (a tap, an untap, a
cleaning, a reclean, an import) is taken for real against a SQLite file, and the lists
and the previous/next of every article are checked against that rule computed from the
base tables; the neighbour statements are checked to seek the index, not scan."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path


from reader.core import running
from reader.records import READING_LIST, ArticleFilter
from reader.store import ListFilter, Store
from reader.store.articles import list_statement, reading_statement
from reader.store.base import NOT_DONE

from ..helpers import database_at, serve_feed

READY = ArticleFilter(state="ready")


def rule_order(db: Path, *, unread: bool = False) -> list[int]:
    """The ready articles in tap order, computed from tapped_at and the contents row alone;
    `unread`: those not done (the reading list)."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT a.id, coalesce(a.tapped_at, c.cleaned_at) AS k FROM articles a JOIN contents c"
            " ON c.article_id = a.id" + (f" WHERE {NOT_DONE}" if unread else "")).fetchall()
    connection.close()
    return [article_id for article_id, _ in sorted(rows, key=lambda r: (r[1], r[0]))]


async def assert_order(reader, db: Path, f: ArticleFilter, expected: list[int]) -> None:
    """The list, its keyset pages and every article's neighbours follow `expected`, and
    the reading list's count (kept by triggers) is what the base tables say."""
    assert expected == rule_order(db, unread=f.unread)
    assert await reader.reading_count() == len(rule_order(db, unread=True))
    listed = [a.id for a in await reader.articles(state=f.state, unread=f.unread, limit=500)]
    assert listed == expected
    for i, article_id in enumerate(expected):
        page = await reader.reading_page(article_id, f)  # its neighbours, as its page reads them
        prev, nxt = page.prev, page.next
        assert (prev.id if prev else None) == (expected[i - 1] if i > 0 else None), (article_id, expected)
        assert (nxt.id if nxt else None) == (expected[i + 1] if i + 1 < len(expected) else None), (article_id, expected)
        page = await reader.articles(state=f.state, unread=f.unread, before=article_id, limit=2)
        assert [a.id for a in page] == expected[i + 1:i + 3]


def export_of(pages, names: list[str], cleaned_at: list[float]) -> bytes:
    """A reader export of saved links whose cleaned text came with them, cleaned at these times."""
    articles = [{"url": pages.url(f"/imported-{name}.html"), "title": f"Imported {name}", "feed_url": None,
                 "content": {"html": f"<p>Imported {name} text.</p>", "text": f"Imported {name} text.",
                             "words": 3, "cleaned_at": at}}
                for name, at in zip(names, cleaned_at)]
    return json.dumps({"format": "reader-export", "version": 1, "feeds": [], "articles": articles}).encode()


async def test_the_ready_list_and_its_neighbours_follow_the_tap_then_cleaning_time_in_every_case(settings, pages):
    settings = settings.replace(serve_workers=0, extract_processes=0)
    feed = serve_feed(pages, ["a", "b", "c", "d", "e", "f"])
    async with running(settings, worker=False, refresher=False) as reader:
        subscription = await reader.subscribe(feed)
        by_url = {a.url: a.id for a in await reader.articles(feed_id=subscription.feed_id, limit=50)}
        a, b, c, d, e, f = (by_url[pages.url(f"/{slug}.html")] for slug in "abcdef")
        # imported with their text, never tapped: at their cleaning time; two at the same
        # time stand in id order
        outcome = await reader.import_data(export_of(pages, ["one", "two", "three"], [1000.0, 1000.0, 500.0]),
                                           "library.json", fetch=False)
        assert outcome.contents == 3
        imported = {x.url: x.id for x in await reader.articles(state="ready", limit=50)}
        one, two, three = (imported[pages.url(f"/imported-{n}.html")] for n in ("one", "two", "three"))
        assert one < two

        await reader.queue(a)
        await reader.queue(b)
        await reader.unqueue(b)  # untapped: its first tap still counts once it is cleaned
        await reader.open(a)
        await reader.queue(c)
        await reader.open(c)
        await reader.open(b)  # cleaned after c, tapped before it
        await reader.open(f)  # opened without a tap: at its cleaning time
        await reader.open(d)
        await reader.queue(d)  # a tap on a ready article changes nothing
        await reader.queue(e)
        # tapped, not ready: in no ready list, but reading on from it goes by its tap
        assert e not in [x.id for x in await reader.articles(state="ready", limit=50)]
        page = await reader.reading_page(e, READY)
        prev, nxt = page.prev, page.next
        assert (prev.id if prev else None, nxt) == (d, None)
        await assert_order(reader, settings.db, READY, [three, one, two, a, b, c, f, d])

        await reader.open(e)
        await assert_order(reader, settings.db, READY, [three, one, two, a, b, c, f, d, e])
        # a reclean cleans f again: never tapped, it moves to its new cleaning time; a
        # reclean of a tapped article leaves it where it was
        assert (await reader.reclean(f))[0] == "cached"
        assert (await reader.reclean(c))[0] == "cached"
        await assert_order(reader, settings.db, READY, [three, one, two, a, b, c, d, e, f])

        # the reading list: the same order without what is done; the ready list keeps it
        await reader.mark_done(one)
        await reader.mark_done(c)
        await assert_order(reader, settings.db, READING_LIST, [three, two, a, b, d, e, f])
        await assert_order(reader, settings.db, READY, [three, one, two, a, b, c, d, e, f])
        # reading on from an article just done with still works
        page = await reader.reading_page(c, READING_LIST)
        prev, nxt = page.prev, page.next
        assert (prev.id, nxt.id) == (b, d)
        assert await reader.reading_count() == 7
        offline = [x.id for x in await reader.offline_list("http://reader.test")]
        assert offline == [three, two, a, b, d, e, f]
        # not done again, then gone with the feed (what was not kept), and the count follows
        await reader.mark_done(c, False)
        await assert_order(reader, settings.db, READING_LIST, [three, two, a, b, c, d, e, f])
        await reader.unsubscribe(subscription.feed_id)
        await assert_order(reader, settings.db, READING_LIST, rule_order(settings.db, unread=True))
        assert await reader.reading_count() == len(rule_order(settings.db, unread=True))


async def test_migrating_to_v9_orders_the_ready_articles_already_there(tmp_path):
    db = tmp_path / "v8.db"
    await database_at(db, 8)
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO feeds (id, url, added_at) VALUES (1, 'http://127.0.0.1/f', 0)")
        connection.executemany(
            "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at, tapped_at, read_at)"
            " VALUES (?, 1, ?, ?, 't', ?, 0, ?, ?)",
            [(i, str(i), f"http://127.0.0.1/{i}", i, tapped, read) for i, tapped, read in [
                (1, 300.0, None),   # tapped, ready
                (2, None, None),    # opened without a tap, ready
                (3, 100.0, None),   # tapped, not ready
                (4, None, 5.0),     # ready, read
                (5, 200.0, None),   # tapped at the time another was cleaned: ties go by id
                (6, None, None),    # nothing
            ]])
        connection.executemany(
            "INSERT INTO contents (article_id, html, text, words, cleaned_at) VALUES (?, '<p>x</p>', 'x', 1, ?)",
            [(1, 400.0), (2, 200.0), (4, 50.0), (5, 250.0)])
    connection.close()
    assert rule_order(db) == [4, 2, 5, 1]

    async with await Store.open(db) as store:
        assert [a["id"] for a in await store.list_articles(state="ready")] == [4, 2, 5, 1]
        assert [a["id"] for a in await store.list_articles(state="ready", unread=True)] == [2, 5, 1]
        assert [a["id"] for a in await store.list_articles(state="ready", unread=True, before=2)] == [5, 1]
        assert [a["id"] for a in await store.list_articles(state="ready", before=3, limit=1)] == [2]
        assert await store.reading_count() == 3
    with sqlite3.connect(db) as connection:
        keys = dict(connection.execute("SELECT id, tap_order FROM articles").fetchall())
        counted = connection.execute("SELECT articles FROM reading_list").fetchone()[0]
    connection.close()
    assert keys == {1: 300.0, 2: 200.0, 3: None, 4: 50.0, 5: 200.0, 6: None}
    assert counted == 3
    # the count follows every change, an article deleted with its content included
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA foreign_keys = ON")
        counts = []
        for change in ["DELETE FROM articles WHERE id = 5",
                       "UPDATE articles SET read_at = 9 WHERE id = 2",  # read: still on the list (v14)
                       "UPDATE articles SET done_at = 9 WHERE id = 2",  # done: off it
                       "DELETE FROM contents WHERE article_id = 1",
                       "UPDATE articles SET done_at = NULL WHERE id = 4",  # not done (v14 made it done): back
                       "UPDATE articles SET read_position = 1.0 WHERE id = 4",  # a place alone is no done
                       "DELETE FROM feeds WHERE id = 1"]:
            connection.execute(change)
            counts.append(connection.execute("SELECT articles FROM reading_list").fetchone()[0])
    connection.close()
    assert counts == [2, 2, 1, 0, 1, 1, 0]


def _plan(connection: sqlite3.Connection, sql: str, params: dict) -> list[str]:
    return [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + sql, params)]


async def test_the_neighbour_lookups_seek_the_tap_order_index(tmp_path):
    """Previous and next in the ready list and the reading list are one seek each (read
    with the article for its page), and so is a keyset page: the query plan walks the
    index (no scan, no sort), and the whole page's read costs fewer virtual-machine
    instructions than there are ready articles, which no plan that looks at each of them
    could (the reading list's length is kept, not counted)."""
    db = tmp_path / "library.db"
    async with await Store.open(db):
        pass
    ready = 2000
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO feeds (id, url, added_at) VALUES (1, 'http://127.0.0.1/f', 0)")
        connection.executemany(
            "INSERT INTO articles (id, feed_id, guid, url, title, sort_at, added_at, tapped_at, read_at)"
            " VALUES (?, 1, ?, ?, 't', ?, 0, ?, ?)",
            [(i, str(i), f"http://127.0.0.1/{i}", i, i if i % 2 else None, 1.0 if i % 3 == 0 else None)
             for i in range(1, 3 * ready + 1)])
        connection.executemany(
            "INSERT INTO contents (article_id, html, text, words, cleaned_at) VALUES (?, '<p>x</p>', 'x', 1, ?)",
            [(i, i + 0.5) for i in range(1, 3 * ready + 1, 3)])
    connection.close()
    connection = sqlite3.connect(db)
    try:
        middle = 3 * (ready // 2) + 1

        def steps_of(sql: str, params: dict) -> int:
            """Virtual-machine instructions the statement runs (SQLite's progress handler)."""
            steps = [0]

            def count() -> int:
                steps[0] += 1
                return 0

            connection.set_progress_handler(count, 1)
            assert connection.execute(sql, params).fetchall()
            connection.set_progress_handler(None, 1)
            return steps[0]

        for unread in (False, True):
            index = "articles_to_read" if unread else "articles_by_tap"
            # the article's page: both neighbours read with it
            page = reading_statement(middle, now=time.time(), page=True, around=ListFilter(state="ready", unread=unread))
            plan = _plan(connection, *page)
            assert len([step for step in plan if step.startswith(f"SEARCH a USING INDEX {index} ")]) == 2, plan
            # (a subquery's one row, the one-row count of the reading list and the library's
            # one-row version are no scan of articles)
            assert not any(step.startswith("SCAN") and not step.startswith(("SCAN (subquery", "SCAN reading_list",
                                                                            "SCAN library_version"))
                           or "TEMP B-TREE" in step for step in plan), plan
            assert steps_of(*page) < ready
            # a keyset page of the ready list, each way
            for backwards in (False, True):
                listed = list_statement(state="ready", unread=unread, backwards=backwards, before=middle,
                                        feed_id=None, ids=None, starred=False, match=None, tag=None, folder=None,
                                        limit=1, now=time.time())
                plan = _plan(connection, *listed)
                assert len([step for step in plan if step.startswith(f"SEARCH a USING INDEX {index} ")]) == 1, plan
                assert not any(step.startswith("SCAN a") or "TEMP B-TREE" in step for step in plan), plan
                assert steps_of(*listed) < ready
    finally:
        connection.close()
