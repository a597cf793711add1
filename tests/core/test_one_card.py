"""One article per link across feeds, saved links and imports (schema v15's url_key): a
Pocket export whose links a subscribed feed also carries, spelled with tracking
parameters, fragments, a trailing slash or a host in capitals, ends as one card per link,
whichever came first; a link whose feed twin is ready is never fetched again. Real feeds
and pages on 127.0.0.1, a real SQLite file, the counts checked against count(*)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

from reader.core import library, running
from reader.store import ImportLink, Store
from reader.urls import normalize_url

from ..helpers import RSS, article_html, published, rss
from ..loopback import LoopbackServer

SLASHED = ("/posts/7/", "/posts/8/")  # paths a feed spells with their trailing slash


def feed_and_pages(pages: LoopbackServer) -> tuple[str, list[str]]:
    """A feed of 10 article pages, two of them at paths ending in a slash; its URL and
    the items' links."""
    links = [pages.add_article(f"s{i}") for i in range(8)]
    links += [pages.add(path, article_html(f"Post {path}", f"marker-{path}")) for path in SLASHED]
    items = [{"title": f"Item {i}", "link": link, "date": published(i)} for i, link in enumerate(links)]
    return pages.add("/feed.xml", rss(items, title="The feed"), headers=RSS), links


def pocket_csv(pages: LoopbackServer, links: list[str]) -> tuple[bytes, int]:
    """A Pocket export: 8 of the feed's links in other spellings, 2 links of its own (one
    of them twice, with and without a trailing slash), a dead link and a javascript: row.
    Also the number of links of its own."""
    capitals = links[3].replace("http://", "HTTP://", 1)
    rows = [
        ("Same as the feed", links[0], "1600000000", "exact", "unread"),
        ("Tracked", links[1] + "?utm_source=newsletter&utm_medium=email", "1600000100", "tracked|later", "unread"),
        ("With a fragment", links[2] + "#comments", "1600000200", "fragment", "archive"),
        ("Capitals", capitals, "1600000300", "caps", "unread"),
        ("Both", links[4] + "?fbclid=abc#top", "1600000400", "later", "unread"),
        ("Tracked again", links[5] + "?utm_campaign=x", "1600000500", "", "unread"),
        ("Slash dropped", links[8].rstrip("/"), "1600000600", "slash", "unread"),
        ("Slash and tracking", links[9].rstrip("/") + "?utm_source=x", "1600000700", "", "archive"),
        ("Only saved", pages.url("/elsewhere/one"), "1600000800", "mine", "unread"),
        ("Only saved and slashed", pages.url("/elsewhere/two/"), "1600000900", "", "unread"),
        ("Only saved again", pages.url("/elsewhere/two?utm_source=x"), "1600001000", "again", "unread"),
        ("Dead link", pages.url("/dead.html"), "1600001100", "", "unread"),
        ("Bookmarklet", "javascript:alert(1)", "1600001200", "", "unread"),
    ]
    lines = ["title,url,time_added,tags,status"] + [",".join(row) for row in rows]
    return ("\r\n".join(lines) + "\r\n").encode(), 2


def one_per_key(db: Path) -> list[tuple[str, int]]:
    """The links that have more than one article."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT url_key, count(*) FROM articles GROUP BY url_key HAVING count(*) > 1").fetchall()


def counters_match(db: Path) -> None:
    """The unread and reading-list tables the triggers keep equal what count(*) says."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        kept = dict(conn.execute("SELECT feed, articles FROM unread WHERE articles != 0").fetchall())
        counted = dict(conn.execute("SELECT coalesce(feed_id, 0), count(*) FROM articles WHERE read_at IS NULL"
                                    " GROUP BY coalesce(feed_id, 0)").fetchall())
        assert kept == counted
        [(listed,)] = conn.execute("SELECT articles FROM reading_list").fetchall()
        [(ready,)] = conn.execute("SELECT count(*) FROM articles WHERE tap_order IS NOT NULL"
                                  " AND (read_at IS NULL OR read_position < 0.98)").fetchall()
        assert listed == ready


def tags_of(db: Path, article_id: int) -> set[str]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return {name for (name,) in conn.execute(
            "SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = ?",
            (article_id,))}


async def test_a_pocket_export_of_links_the_feed_carries_adds_no_second_card(settings, pages):
    feed_url, links = feed_and_pages(pages)
    data, own = pocket_csv(pages, links)
    async with running(settings, worker=False) as reader:
        subscribed = await reader.subscribe(feed_url)
        feed_id = subscribed.feed_id
        by_url = {a.url: a for a in await reader.articles(feed_id=feed_id, limit=100)}
        assert len(by_url) == 10
        ready = by_url[links[1]]
        await reader.open(ready.id)  # its text is there before the export arrives
        assert pages.hits["/s1.html"] == 1

        outcome = await reader.import_data(data, "pocket.csv", fetch=False)
        # 8 links into the feed's articles, 2 + the dead one new, the link twice in the file
        # merged, the javascript: row reported
        assert (outcome.new, outcome.merged, outcome.in_feeds) == (own + 1, 8 + 1, 8)
        assert "3 new links, 9 already there (8 of them from your feeds)" in outcome.summary()
        assert [why for _, why in outcome.skipped] == ["not an http(s) URL: javascript:alert(1)"]
        assert one_per_key(settings.db) == []
        everything = await reader.articles(limit=100)
        assert len(everything) == 10 + own + 1
        assert {a.id for a in everything if a.feed_id == feed_id} == {a.id for a in by_url.values()}

        # each feed article took in what the export said of it, and is saved now
        tracked = await reader.article(ready.id)
        assert tracked.state == "ready" and tags_of(settings.db, ready.id) == {"tracked", "later"}
        assert tracked.added_at == 1600000100
        assert tags_of(settings.db, by_url[links[8]].id) == {"slash"}
        assert (await reader.article(by_url[links[2]].id)).read_at is not None  # archived in Pocket
        with contextlib.closing(sqlite3.connect(settings.db)) as conn:
            unsaved = conn.execute("SELECT count(*) FROM articles WHERE saved_at IS NULL").fetchone()[0]
        assert unsaved == 2  # the feed's two items that were in no export

        # queueing the link in any spelling is the ready article: nothing fetched again
        saved, created = await reader.save(links[1] + "?utm_source=other#x")
        assert saved.id == ready.id and not created
        queued = await reader.queue(saved.id)
        again = await reader.save_and_queue(links[1].replace("http://", "HTTP://", 1))
        assert queued.state == "ready" and again.article.id == ready.id and not again.queued
        assert pages.hits["/s1.html"] == 1

        # the refresh after it brings no second card either, and the import again changes nothing
        await reader.refresh()
        again_outcome = await reader.import_data(data, "pocket.csv", fetch=False)
        assert again_outcome.new == 0 and len(await reader.articles(limit=100)) == 10 + own + 1
        assert one_per_key(settings.db) == []
        counters_match(settings.db)
    assert pages.hits["/dead.html"] == 0 and pages.hits["/elsewhere/one"] == 0  # an import fetches no link


async def test_importing_first_then_subscribing_gives_the_feed_the_saved_articles(settings, pages):
    feed_url, links = feed_and_pages(pages)
    data, own = pocket_csv(pages, links)
    async with running(settings, worker=False) as reader:
        outcome = await reader.import_data(data, "pocket.csv", fetch=False)
        assert (outcome.new, outcome.in_feeds) == (8 + own + 1, 0)
        imported = {a.title: a for a in await reader.articles(limit=100)}
        capitals = imported["Capitals"]
        await reader.queue(capitals.id)
        await reader.open(capitals.id)  # cleaned from the export's spelling of the link
        assert pages.hits["/s3.html"] == 1
        assert (await reader.unread_counts()).get(None) == 8 + own + 1 - 2  # two were archived

        subscribed = await reader.subscribe(feed_url)
        feed_id = subscribed.feed_id
        assert one_per_key(settings.db) == []
        assert len(await reader.articles(limit=100)) == 10 + own + 1
        in_feed = {a.id: a for a in await reader.articles(feed_id=feed_id, limit=100)}
        assert len(in_feed) == 10
        # the 8 imported ones are now the feed's, with the feed's title and date, their tags,
        # state and text kept; the feed's other 2 are new
        new_in_feed = {a.id for a in in_feed.values() if a.url in (links[6], links[7])}
        assert len(new_in_feed) == 2
        assert {i.id for i in imported.values()} & set(in_feed) == set(in_feed) - new_in_feed
        adopted = in_feed[capitals.id]
        assert adopted.title == "Item 3" and adopted.url == links[3] and adopted.state == "ready"
        assert adopted.published is not None and adopted.added_at == 1600000300
        assert tags_of(settings.db, capitals.id) == {"caps"}
        assert (await reader.queue(capitals.id)).state == "ready"
        assert pages.hits["/s3.html"] == 1
        assert (await reader.unread_counts()).get(feed_id) == 10 - 2
        counters_match(settings.db)

        # still saved: unsubscribing keeps the 8 the export brought, drops the feed's 2 others
        assert await reader.unsubscribe(feed_id) == (8, 2)
        assert len(await reader.articles(limit=100)) == 8 + own + 1
        assert tags_of(settings.db, capitals.id) == {"caps"}
        counters_match(settings.db)


async def test_a_saved_feed_article_goes_out_in_the_export_and_comes_back_as_one_saved_card(settings, pages, tmp_path):
    feed_url, links = feed_and_pages(pages)
    async with running(settings, worker=False) as reader:
        feed_id = (await reader.subscribe(feed_url)).feed_id
        saved, created = await reader.save(links[4] + "?utm_source=share")
        assert not created and saved.feed_id == feed_id
    out = tmp_path / "export.json"
    await library.export(settings, out)
    exported = {a["url"]: a for a in json.loads(out.read_text())["articles"]}
    assert set(exported) == {links[4]}  # the feed's other items are neither saved, starred nor cleaned
    assert exported[links[4]]["saved_at"] is not None and exported[links[4]]["feed_url"] == feed_url

    # into a library that saved the link by hand: that card joins the feed, still saved
    other = settings.replace(db=tmp_path / "other.db")
    async with running(other, worker=False) as reader:
        mine, _ = await reader.save(links[4] + "#top")
        await reader.import_path(out, fetch=False)
        [only] = await reader.articles(limit=100)
        assert only.id == mine.id and only.feed_id is not None
        assert await reader.unsubscribe(only.feed_id) == (1, 0)
    assert one_per_key(other.db) == []


async def test_an_import_whose_feed_article_went_meanwhile_brings_the_link_in_anew(tmp_path):
    async with await Store.open(tmp_path / "reader.db") as store:
        feed_id, _ = await store.add_feed("http://127.0.0.1/feed.xml")
        await store.store_feed_entries(feed_id, title="F", site_url=None, etag=None, last_modified=None, entries=[
            {"guid": "1", "url": "http://127.0.0.1/one/", "title": "One", "summary": "", "author": None,
             "published": None}])
        known = await store.link_keys()  # read at the import's start
        assert await store.delete_feed(feed_id) == (0, 1)  # unsubscribed while the file is read
        link = ImportLink(url="http://127.0.0.1/one?utm_source=x", key=normalize_url("http://127.0.0.1/one"),
                          title="One", tags={"kept"}, added_at=1600000000, read=False, starred=False, author=None,
                          published=None, summary="", summary_text="", content=None, notes=[])
        counts = await store.import_links([link], "pocket-csv", known)
        assert (counts.new, counts.merged) == (1, 0)
        [article] = await store.list_articles()
        assert article["feed_id"] is None and (await store.tags_of([article["id"]]))[article["id"]] == ["kept"]
