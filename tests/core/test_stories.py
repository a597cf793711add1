"""One card per story across feeds (schema v18): the same story from three real feeds on
127.0.0.1 (its link spelled three ways) is one article with three feeds, tapped once and
fetched once, the same article opened from each feed's list, one read state, and each
feed's unread count what its list shows; unsubscribing one feed keeps the story under the
others; a refresh again adds nothing. Look-alike titles stay apart unless they are one
site's within a few days. Real app, real SQLite file, the page server's hits counted."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from pathlib import Path

import httpx

from reader.store import Store
from reader.store.sync import Stream

from ..helpers import RSS, app_client, published, rss, run_cli, wait_for
from ..loopback import LoopbackServer

COUNT = re.compile(r'>unread <span class="count">(\d+)</span>')


def three_feeds(pages: LoopbackServer) -> tuple[list[str], str]:
    """Feeds A, B and C, each with an item of its own and the story, whose link B spells with
    a tracking parameter and C with a fragment and capitals; their URLs and the story's link."""
    story = pages.add_article("story", title="The story")
    spellings = [story, story + "?utm_source=b", story.replace("http://", "HTTP://", 1) + "#top"]
    urls = []
    for n, (name, link) in enumerate(zip("ABC", spellings)):
        own = pages.add_article(f"own-{name}")
        items = [{"title": f"Own of {name}", "link": own, "date": published(n)},
                 {"title": "The story" if name != "B" else "The story, as B titles it", "link": link,
                  "date": published(10 + n), "guid": f"{name}-story"}]
        urls.append(pages.add(f"/{name}.xml", rss(items, title=f"Feed {name}"), headers=RSS))
    return urls, story


async def subscribe(client: httpx.AsyncClient, url: str) -> int:
    response = await client.post("/api/feeds", json={"url": url})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


async def listed(client: httpx.AsyncClient, feed_id: int, **params: object) -> dict[str, dict]:
    items = (await client.get("/api/articles", params={"feed": feed_id, "limit": 500, **params})).json()["items"]
    return {item["title"]: item for item in items}


def table(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql, params).fetchall()


async def counts_agree(client: httpx.AsyncClient, feeds: list[int]) -> dict[int, int]:
    """Each feed's unread count on its page is the number of unread cards its list holds (and
    the API's feeds say the same); the whole list's count is each unread article once."""
    shown = {}
    for feed_id in feeds:
        page = (await client.get("/", params={"feed": feed_id, "unread": 1})).text
        [count] = COUNT.findall(page)
        cards = re.findall(r'<article class="card[^"]*" id="card-(\d+)"', page)
        assert int(count) == len(cards) == len(await listed(client, feed_id, unread=1)), feed_id
        shown[feed_id] = int(count)
    api = {f["id"]: f["unread"] for f in (await client.get("/api/feeds")).json()["feeds"]}
    assert {f: api[f] for f in feeds} == shown
    everything = (await client.get("/", params={"unread": 1})).text
    assert int(COUNT.findall(everything)[0]) == len(re.findall(r'id="card-(\d+)"', everything))
    return shown


async def test_the_same_story_from_three_feeds_is_one_card_tapped_fetched_and_read_once(client, pages, settings):
    urls, story_url = three_feeds(pages)
    a, b, c = [await subscribe(client, url) for url in urls]

    # one article, A's (it came first), carried by B and C
    stories = [(await listed(client, feed))["The story"] for feed in (a, c)] + \
        [(await listed(client, b))["The story"]]
    assert len({s["id"] for s in stories}) == 1
    story = stories[0]["id"]
    assert stories[0]["feed_id"] == a and stories[0]["also_in"] == ["Feed B", "Feed C"]
    assert table(settings.db, "SELECT feed_id, guid FROM sources WHERE article_id = ? ORDER BY feed_id",
                 (story,)) == [(b, pages.url("/B-story")), (c, pages.url("/C-story"))]  # guids made absolute
    assert table(settings.db, "SELECT count(*) FROM articles") == [(4,)]  # three own items and the story
    page = (await client.get("/", params={"feed": b})).text
    assert "also in Feed A, Feed C" not in page  # the card names its own feed, then the others
    assert "Feed A <span class=\"also-in\">· also in Feed B, Feed C</span>" in page
    assert await counts_agree(client, [a, b, c]) == {a: 2, b: 2, c: 2}

    # tapped once, from B's list: fetched once; a tap from C's is the same article, ready
    assert (await client.post(f"/api/articles/{story}/queue")).status_code == 200

    async def ready() -> bool:
        return (await client.get(f"/api/articles/{story}")).json()["state"] == "ready"

    await wait_for(ready, timeout=30)
    again = (await client.post(f"/api/articles/{story}/queue")).json()
    assert again["id"] == story and again["state"] == "ready"
    assert pages.hits["/story.html"] == 1

    # opened from each feed's list: the same article, read once for all three
    for n, feed in enumerate((a, b, c)):
        page = (await client.get("/", params={"feed": feed})).text
        link = re.findall(rf'<h2 id="title-{story}"><a href="(/articles/{story}[^"]*)"', page)[0]
        assert "feed%3D" + str(feed) in link  # read through that feed's list
        opened = await client.get(link.replace("&amp;", "&"))
        assert opened.status_code == 200 and "marker-story" in opened.text
        if n == 0:
            assert (await client.get(f"/api/articles/{story}")).json()["read"]
            assert await counts_agree(client, [a, b, c]) == {a: 1, b: 1, c: 1}
    assert pages.hits["/story.html"] == 1

    # one read state: unread again from C's list, unread in all three
    assert (await client.delete(f"/api/articles/{story}/read")).status_code == 200
    assert ["The story" in await listed(client, feed, unread=1) for feed in (a, b, c)] == [True] * 3
    assert await counts_agree(client, [a, b, c]) == {a: 2, b: 2, c: 2}

    # a refresh again adds nothing
    before = table(settings.db, "SELECT (SELECT count(*) FROM articles), (SELECT count(*) FROM sources)")
    assert (await client.post("/api/refresh")).status_code == 200
    assert table(settings.db, "SELECT (SELECT count(*) FROM articles), (SELECT count(*) FROM sources)") == before

    # unsubscribing A keeps the story, unread and ready, under B and C; then B: under C alone
    await client.post(f"/api/articles/{story}/star")
    assert (await client.delete(f"/api/feeds/{a}")).status_code == 200
    [moved] = [s for s in (await listed(client, b)).values() if s["id"] == story]
    assert moved["feed_id"] == b and moved["also_in"] == ["Feed C"] and moved["state"] == "ready"
    assert moved["starred"] and not moved["read"]
    assert story in {s["id"] for s in (await listed(client, c)).values()}
    assert await counts_agree(client, [b, c]) == {b: 2, c: 2}
    assert (await client.delete(f"/api/feeds/{b}")).status_code == 200
    [alone] = [s for s in (await listed(client, c)).values() if s["id"] == story]
    assert alone["feed_id"] == c and alone["also_in"] == [] and alone["state"] == "ready"
    assert table(settings.db, "SELECT count(*) FROM sources") == [(0,)]
    assert await counts_agree(client, [c]) == {c: 2}
    # the refresh after that brings C's item as the same article still
    assert (await client.post("/api/refresh")).status_code == 200
    assert table(settings.db, "SELECT count(*) FROM articles WHERE url_key = ?", (story_url,)) == [(1,)]
    assert pages.hits["/story.html"] == 1
    counters_match(settings.db)


def counters_match(db: Path) -> None:
    """The two unread tables the triggers keep equal what count(*) says."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        kept = dict(conn.execute("SELECT feed, articles FROM unread WHERE articles != 0").fetchall())
        counted = dict(conn.execute("SELECT coalesce(feed_id, 0), count(*) FROM articles WHERE read_at IS NULL"
                                    " GROUP BY coalesce(feed_id, 0)").fetchall())
        assert kept == counted
        kept = dict(conn.execute("SELECT feed, articles FROM unread_sources WHERE articles != 0").fetchall())
        counted = dict(conn.execute("SELECT s.feed_id, count(*) FROM sources s JOIN articles a ON a.id = s.article_id"
                                    " WHERE a.read_at IS NULL GROUP BY s.feed_id").fetchall())
        assert kept == counted


def entry(guid: str, url: str, title: str, published: float | None) -> dict:
    return {"guid": guid, "url": url, "title": title, "summary": "", "author": None, "published": published}


async def store_items(store: Store, feed_id: int, *items: dict) -> int:
    return await store.store_feed_entries(feed_id, title=None, site_url=None, etag=None, last_modified=None,
                                          entries=list(items))


DAY = 24 * 3600.0


async def test_a_title_is_one_story_only_on_one_site_within_days(tmp_path):
    async with await Store.open(tmp_path / "reader.db") as store:
        main, _ = await store.add_feed("http://example.org/feed.xml")
        section, _ = await store.add_feed("http://example.org/section.xml")
        other, _ = await store.add_feed("http://elsewhere.example/feed.xml")
        t = 1_800_000_000.0
        await store_items(store, main,
                          entry("m1", "http://example.org/2026/apple-iphone", "Apple releases a new iPhone", t),
                          entry("m2", "http://example.org/weekly/1", "Weekly links", t),
                          entry("m3", "http://example.org/p?id=9", "Same post, other link", t))
        # the section's feed links the same posts another way: one by the same title a day
        # later is that story; a look-alike title, or one a week later, is another
        new = await store_items(
            store, section,
            entry("s1", "http://example.org/2026/apple-iphones", "Apple releases new iPhones", t),
            entry("s2", "https://www.example.org/weekly/2", "Weekly links", t + 7 * DAY),
            entry("s3", "http://www.example.org/amp/p-9", "Same post, other link", t + DAY))
        assert new == 3
        # another site with the very same titles, the same day: other stories
        await store_items(store, other,
                          entry("o1", "http://elsewhere.example/apple", "Apple releases a new iPhone", t),
                          entry("o3", "http://elsewhere.example/p9", "Same post, other link", t))
        db = tmp_path / "reader.db"
        assert table(db, "SELECT feed_id, guid, (SELECT guid FROM articles WHERE id = article_id) FROM sources") == [
            (section, "s3", "m3")]
        assert table(db, "SELECT count(*) FROM articles") == [(7,)]
        both = await store.list_articles(feed_id=section)
        assert {a["title"] for a in both} == {"Apple releases new iPhones", "Weekly links", "Same post, other link"}
        # again: nothing new
        assert await store_items(store, section, entry("s3", "http://www.example.org/amp/p-9",
                                                      "Same post, other link", t + DAY)) == 0
        assert table(db, "SELECT count(*) FROM sources") == [(1,)]
    counters_match(db)


async def test_a_feed_s_list_pages_through_its_own_articles_and_the_stories_it_carries_in_order(tmp_path):
    async with await Store.open(tmp_path / "reader.db") as store:
        first, _ = await store.add_feed("http://example.org/all.xml")
        second, _ = await store.add_feed("http://example.org/some.xml")
        t = 1_800_000_000.0
        await store_items(store, first, *[entry(f"a{i}", f"http://example.org/{i}", f"Post {i}", t + i * 60)
                                          for i in range(9)])
        # the second feed: three of the first's posts, and its own between them
        await store_items(store, second, *[entry(f"b{i}", f"http://example.org/{i}", f"Post {i}", t + i * 60)
                                           for i in (1, 4, 7)],
                          *[entry(f"own{i}", f"http://example.org/own/{i}", f"Own {i}", t + i * 60 + 30)
                            for i in range(9)])
        whole = [a["id"] for a in await store.list_articles(feed_id=second, limit=100)]
        expected = [a["id"] for a in sorted(
            [a for a in await store.list_articles(limit=100) if a["title"].startswith("Own")
             or a["title"] in ("Post 1", "Post 4", "Post 7")], key=lambda a: (a["sort_at"], a["id"]), reverse=True)]
        assert whole == expected and len(whole) == 12
        paged, before = [], None
        for _ in range(len(whole)):  # a page that does not move on would go round for ever
            page = [a["id"] for a in await store.list_articles(feed_id=second, before=before, limit=2)]
            if not page:
                break
            paged += page
            before = page[-1]
        assert paged == whole
        back = [a["id"] for a in await store.list_articles(feed_id=second, before=whole[-1], backwards=True,
                                                          limit=100)]
        assert back == whole[-2::-1]


async def test_a_folder_counts_a_story_two_of_its_feeds_carry_once(tmp_path):
    async with await Store.open(tmp_path / "reader.db") as store:
        a, _ = await store.add_feed("http://example.org/a.xml")
        b, _ = await store.add_feed("http://example.org/b.xml")
        c, _ = await store.add_feed("http://example.org/c.xml")
        for feed in (a, b):
            await store.set_folder(feed, "News")
        await store.set_folder(c, "Other")
        t = 1_800_000_000.0
        for feed in (a, b, c):
            await store_items(store, feed, entry(f"{feed}-s", "http://example.org/story", "The story", t),
                              entry(f"{feed}-own", f"http://example.org/own/{feed}", f"Own of {feed}", t))
        # c's story is a's: "Other" holds it through its source only
        for folder in ("News", "Other"):
            listed = await store.list_articles(folder=folder, unread=True, limit=100)
            assert (await store.unread_per_folder())[folder] == len(listed) == {"News": 3, "Other": 2}[folder]
        counts = await store.unread_counts()
        assert [counts[f] for f in (a, b, c)] == [2, 2, 2] and await store.unread_total() == 4
        story = (await store.list_articles(feed_id=c, limit=100))[-1]["id"]
        # a native app's stream of each feed and label holds it too, and counts it as the lists do
        for stream in (Stream("feed", a), Stream("feed", b), Stream("feed", c), Stream("label", "Other")):
            assert story in {r["id"] for r in await store.stream_item_ids(stream, limit=100)}, stream
            assert await store.count_stream(stream, unread=True) == 2
        assert await store.count_stream(Stream("label", "News"), unread=True) == 3
        await store.mark_read(story)
        assert await store.unread_per_folder() == {"News": 2, "Other": 1}
    counters_match(tmp_path / "reader.db")


async def test_a_storys_other_feeds_go_out_in_the_export_and_come_back(client, pages, settings, tmp_path):
    """The feeds that carry a story beside its own (sources) are in `reader export` and come
    back on import: the restored card still says where else it is, each feed's list still
    holds it, and their next refresh adds no card of their own for it."""
    urls, _ = three_feeds(pages)
    a, b, c = [await subscribe(client, url) for url in urls]
    story = (await listed(client, a))["The story"]["id"]
    assert (await client.post(f"/api/articles/{story}/star")).status_code == 200  # a starred story is exported
    out = tmp_path / "export.json"
    code, _, err = await run_cli(settings.db, "export", "--out", str(out))
    assert code == 0, err
    [exported] = [r for r in json.loads(out.read_text())["articles"] if r["title"] == "The story"]
    assert [(i["feed_url"], i["guid"], i["title"]) for i in exported["also_in"]] == [
        (urls[1], pages.url("/B-story"), "The story, as B titles it"), (urls[2], pages.url("/C-story"), "The story")]

    fresh = tmp_path / "fresh.db"
    code, _, err = await run_cli(fresh, "import", str(out), "--no-refresh")
    assert code == 0, err
    async with app_client(settings.replace(db=fresh, serve_workers=0)) as restored:
        feeds = {f["url"]: f["id"] for f in (await restored.get("/api/feeds")).json()["feeds"]}
        carried = [(await listed(restored, feeds[url])).get("The story") for url in urls]
        assert all(item is not None for item in carried), carried
        assert len({item["id"] for item in carried}) == 1 and carried[0]["starred"]
        assert carried[0]["also_in"] == ["Feed B", "Feed C"]
        refreshed = (await restored.post("/api/refresh")).json()["feeds"]  # each finds its item in the story
        assert sorted(f["url"] for f in refreshed if f["error"] is None) == sorted(urls)
        assert table(fresh, "SELECT count(*) FROM articles WHERE title LIKE 'The story%'") == [(1,)]
        assert table(fresh, "SELECT count(*) FROM sources") == [(2,)]

    # imported again: nothing doubles
    code, _, err = await run_cli(fresh, "import", str(out), "--no-refresh")
    assert code == 0, err
    assert table(fresh, "SELECT count(*) FROM sources") == [(2,)]
