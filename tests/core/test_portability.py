"""Your data is yours: `reader backup` while the app runs and writes, `reader export` and
`reader import` (restoring feeds, saved links, stars and cleaned text idempotently, with
no page fetched, and new feeds fetched by the one rule unless --no-refresh), and a
database made by the first released schema migrating."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path

from reader.store import MIGRATIONS, Store, fts_query

from ..helpers import FIXTURES, app_client, rss, run_cli, wait_for

RSS = {"Content-Type": "application/rss+xml"}


async def article_count(store: Store) -> int:
    """How many articles the library holds, as the browse listing sees them."""
    return len(await store.list_articles(limit=1_000_000))



def table_rows(db: Path, *tables: str) -> dict[str, list[tuple]]:
    connection = sqlite3.connect(db)
    try:
        return {t: connection.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}
    finally:
        connection.close()


def user_version(db: Path) -> int:
    connection = sqlite3.connect(db)
    try:
        return connection.execute("PRAGMA user_version").fetchone()[0]
    finally:
        connection.close()


# -- backup ----------------------------------------------------------------------------------------


async def test_backup_while_the_app_runs_and_a_worker_writes(settings, pages, tmp_path):
    links = [pages.add_article(f"b{i}") for i in range(6)]
    feed = pages.add("/feed.xml", rss([{"title": f"B{i}", "link": link} for i, link in enumerate(links)]),
                     headers=RSS)
    copy = tmp_path / "backups" / "copy.db"
    copy.parent.mkdir()
    async with app_client(settings) as client:  # the in-process worker cleans what is tapped
        assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
        store = client.app.state.reader._store
        for item in (await client.get("/api/articles")).json()["items"]:
            await client.post(f"/api/articles/{item['id']}/queue")
        before = await article_count(store)

        backup = asyncio.create_task(run_cli(settings.db, "backup", str(copy)))
        writes = 0
        while not backup.done() or writes == 0:  # write for as long as the backup runs
            await store.save_link(f"http://127.0.0.1:1/saved-{writes}")
            writes += 1
            await asyncio.sleep(0)
        code, out, err = await backup
        assert code == 0, err
        assert out.strip() == f"backed up {settings.db} to {copy}"
        after = await article_count(store)

        async def all_cleaned():
            return (await store.stats())["cached"] == len(links)

        await wait_for(all_cleaned)

    assert copy.is_file() and not Path(str(copy) + "-wal").exists()
    assert [p.name for p in copy.parent.iterdir()] == ["copy.db"]  # no temporary left behind
    connection = sqlite3.connect(copy)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        assert connection.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
        copied = connection.execute("SELECT count(*) FROM articles").fetchone()[0]
        # one snapshot: the search index (kept by triggers) matches the articles exactly
        assert connection.execute("SELECT count(*) FROM search").fetchone()[0] == copied
        assert connection.execute("SELECT count(*) FROM feeds").fetchone()[0] == 1
        titles = {r[0] for r in connection.execute("SELECT title FROM articles WHERE feed_id IS NOT NULL")}
    finally:
        connection.close()
    assert before <= copied <= after and titles == {f"B{i}" for i in range(6)}
    async with await Store.open(copy) as restored:  # and reader opens it
        assert await article_count(restored) == copied


async def test_backup_into_a_directory_and_its_errors(settings, tmp_path):
    code, out, err = await run_cli(tmp_path / "missing.db", "backup", str(tmp_path / "x.db"))
    assert code == 1 and "no database at" in err
    assert not (tmp_path / "missing.db").exists() and not (tmp_path / "x.db").exists()
    async with await Store.open(settings.db) as store:
        await store.save_link("https://example.org/a")
    folder = tmp_path / "into"
    folder.mkdir()
    code, out, err = await run_cli(settings.db, "backup", str(folder))
    assert code == 0, err
    [made] = folder.iterdir()
    assert made.name.startswith("reader-") and made.suffix == ".db"
    assert table_rows(made, "articles")["articles"] == table_rows(settings.db, "articles")["articles"]
    code, out, err = await run_cli(settings.db, "backup", str(tmp_path / "nowhere" / "x.db"))
    assert code == 1 and "no such directory" in err


# -- export and import ---------------------------------------------------------------------------------


async def make_library(settings, pages) -> dict:
    """A library with a feed, a cleaned and read article, a starred one, a saved link
    (cleaned) and a saved link not yet read."""
    links = [pages.add_article(slug, f"Page {slug}") for slug in ("one", "two", "three")]
    feed = pages.add("/feed.xml", rss([{"title": f"Item {i}", "link": link, "summary": f"Summary {i}"}
                                       for i, link in enumerate(links)], title="Exported feed"), headers=RSS)
    async with app_client(settings.replace(serve_workers=0)) as client:
        store = client.app.state.reader._store
        feed_id = (await client.post("/api/feeds", json={"url": feed})).json()["id"]
        await client.post(f"/feeds/{feed_id}/rename", data={"title": "My feed"})
        by_url = {a["url"]: a["id"] for a in (await client.get("/api/articles")).json()["items"]}
        cleaned = (await client.get(f"/api/articles/{by_url[links[0]]}/content")).json()  # the direct lane
        assert "marker-one" in cleaned["text"]
        await store.mark_read(by_url[links[0]])
        await store.star(by_url[links[1]])
        saved = (await client.post("/api/articles", json={"url": pages.add_article("saved", "Saved page")})).json()
        assert (await client.get(f"/api/articles/{saved['id']}/content")).status_code == 200
        later = (await client.post("/api/articles", json={"url": "https://example.org/later", "title": "Later"})).json()
    return {"links": links, "feed": feed, "saved": pages.url("/saved.html"), "later": later["url"]}


async def test_export_then_import_into_an_empty_database_restores_the_library(settings, pages, tmp_path):
    library = await make_library(settings, pages)
    out = tmp_path / "export"
    code, stdout, err = await run_cli(settings.db, "export", "--out", str(out))
    assert code == 0, err
    assert stdout.split() == ["wrote", str(out / "feeds.opml"), "wrote", str(out / "articles.json")]
    document = json.loads((out / "articles.json").read_text())
    assert document["format"] == "reader-export" and document["version"] == 1
    exported = {a["url"]: a for a in document["articles"]}
    # saved links, the starred one and the cleaned ones; not the untouched third item
    assert set(exported) == {library["links"][0], library["links"][1], library["saved"], library["later"]}
    assert "marker-one" in exported[library["links"][0]]["content"]["text"]

    fresh = tmp_path / "fresh.db"
    hits = dict(pages.hits)
    code, stdout, err = await run_cli(fresh, "import", str(out), "--no-refresh")
    assert code == 0, err
    assert stdout.strip() == "1 new feeds, 4 new articles, 2 cleaned texts, 0 read/starred states, 0 skipped records"

    async with app_client(settings.replace(db=fresh, serve_workers=0)) as client:
        [feed] = (await client.get("/api/feeds")).json()["feeds"]
        assert (feed["url"], feed["title"]) == (library["feed"], "My feed")
        items = {a["url"]: a for a in (await client.get("/api/articles")).json()["items"]}
        assert {u: a["state"] for u, a in items.items()} == {
            library["links"][0]: "ready", library["links"][1]: "new", library["saved"]: "ready",
            library["later"]: "new"}
        assert items[library["saved"]]["title"] == "Saved page" and items[library["saved"]]["feed_id"] is None
        assert items[library["later"]]["title"] == "Later"
        store = client.app.state.reader._store
        one = await store.get_article(items[library["links"][0]]["id"])
        two = await store.get_article(items[library["links"][1]]["id"])
        assert one["read_at"] is not None and one["starred_at"] is None
        assert two["starred_at"] is not None and two["read_at"] is None
        assert one["feed_title"] == "My feed" and one["summary_text"] == "Summary 0"
        page = (await client.get(f"/articles/{one['id']}")).text
        assert "marker-one" in page
        content = (await client.get(f"/api/articles/{items[library['saved']]['id']}/content")).json()
        assert "marker-saved" in content["text"]
        found = await store.search(fts_query("marker-one"))
        assert [a["id"] for a in found] == [one["id"]]  # the cleaned text is searchable again
    assert dict(pages.hits) == hits  # nothing was fetched: not the feed, not a page


async def test_importing_an_export_fetches_its_new_feeds_and_no_page(settings, pages, tmp_path):
    """The one rule after an import (reader/core/library.py): a restore's new feeds are
    fetched right away, as an OPML upload's are; the articles' pages are not."""
    library = await make_library(settings, pages)
    out = tmp_path / "export"
    assert (await run_cli(settings.db, "export", "--out", str(out)))[0] == 0
    hits = dict(pages.hits)
    fresh = tmp_path / "fresh.db"
    code, stdout, err = await run_cli(fresh, "import", str(out))
    assert code == 0, err
    assert stdout.splitlines() == [
        "1 new feeds, 4 new articles, 2 cleaned texts, 0 read/starred states, 0 skipped records",
        "fetched 1 of 1 new feeds"]
    assert {path: n - hits.get(path, 0) for path, n in pages.hits.items() if n != hits.get(path, 0)} \
        == {"/feed.xml": 1}
    async with await Store.open(fresh) as store:
        [feed] = await store.list_feeds()
        articles = {a["url"] for a in await store.list_articles(limit=100)}
    assert feed["title"] == "My feed" and feed["refreshed_at"] is not None
    assert library["links"][2] in articles  # the item the export left out came with the fetch
    # a second import has no new feed: nothing to fetch
    code, stdout, err = await run_cli(fresh, "import", str(out))
    assert code == 0 and "fetched" not in stdout, err


async def test_importing_twice_changes_nothing(settings, pages, tmp_path):
    await make_library(settings, pages)
    single = tmp_path / "everything.json"
    code, _, err = await run_cli(settings.db, "export", "--out", str(single))
    assert code == 0, err
    fresh = tmp_path / "fresh.db"
    tables = ("feeds", "articles", "contents", "queue", "search")
    assert (await run_cli(fresh, "import", str(single)))[0] == 0
    first = table_rows(fresh, *tables)
    code, stdout, err = await run_cli(fresh, "import", str(single))
    assert code == 0, err
    assert stdout.strip() == "0 new feeds, 0 new articles, 0 cleaned texts, 0 read/starred states, 0 skipped records"
    assert table_rows(fresh, *tables) == first
    # and importing into the very database it came from changes nothing either
    original = table_rows(settings.db, *tables)
    assert (await run_cli(settings.db, "import", str(single)))[0] == 0
    assert table_rows(settings.db, *tables) == original


async def test_reading_positions_go_out_in_the_export_and_come_back(settings, pages, tmp_path):
    library = await make_library(settings, pages)
    async with app_client(settings.replace(serve_workers=0)) as client:
        by_url = {a["url"]: a["id"] for a in (await client.get("/api/articles")).json()["items"]}
        one, saved = by_url[library["links"][0]], by_url[library["saved"]]
        for article_id, place, at in ((one, 0.42, 1_700_000_000.0), (saved, 1.0, 1_700_000_500.0)):
            answer = await client.put(f"/api/articles/{article_id}/position", json={"position": place, "at": at})
            assert answer.status_code == 200, answer.text
    out = tmp_path / "export.json"
    code, _, err = await run_cli(settings.db, "export", "--out", str(out))
    assert code == 0, err
    exported = {a["url"]: a for a in json.loads(out.read_text())["articles"]}
    assert (exported[library["links"][0]]["read_position"], exported[library["links"][0]]["read_position_at"]) \
        == (0.42, 1_700_000_000.0)
    assert exported[library["later"]]["read_position"] is None

    fresh = tmp_path / "fresh.db"
    code, _, err = await run_cli(fresh, "import", str(out))
    assert code == 0, err

    async def positions(db: Path) -> dict[str, tuple]:
        async with await Store.open(db) as store:
            return {a["url"]: (a["read_position"], a["read_position_at"])
                    for a in await store.list_articles(limit=100)}

    restored = await positions(fresh)
    assert restored[library["links"][0]] == (0.42, 1_700_000_000.0)
    assert restored[library["saved"]] == (1.0, 1_700_000_500.0)
    assert restored[library["later"]] == (None, None)

    # a newer place read since stays; an older one in the file never rolls it back, and a
    # newer one in the file moves an older one forward
    async with app_client(settings.replace(db=fresh, serve_workers=0)) as client:
        by_url = {a["url"]: a["id"] for a in (await client.get("/api/articles")).json()["items"]}
        await client.put(f"/api/articles/{by_url[library['links'][0]]}/position",
                         json={"position": 0.9, "at": 1_700_000_100.0})
        await client.put(f"/api/articles/{by_url[library['saved']]}/position",
                         json={"position": 0.1, "at": 1_600_000_000.0})
    document = json.loads(out.read_text())
    for record in document["articles"]:
        if record["url"] == library["saved"]:
            record["read_position_at"] = 1_700_000_900.0
        if record["url"] == library["later"]:  # a hostile place: out of range, no time
            record["read_position"], record["read_position_at"] = 7, None
    out.write_text(json.dumps(document))
    code, stdout, err = await run_cli(fresh, "import", str(out))
    assert code == 0, err
    assert "1 read/starred states" in stdout
    after = await positions(fresh)
    assert after[library["links"][0]] == (0.9, 1_700_000_100.0)
    assert after[library["saved"]] == (1.0, 1_700_000_900.0)
    assert after[library["later"]] == (None, None)


async def test_done_goes_out_in_the_export_and_comes_back_exactly(settings, pages, tmp_path):
    library = await make_library(settings, pages)
    one, saved = library["links"][0], library["saved"]
    async with app_client(settings.replace(serve_workers=0)) as client:
        by_url = {a["url"]: a["id"] for a in (await client.get("/api/articles")).json()["items"]}
        assert (await client.post(f"/api/articles/{by_url[one]}/done")).status_code == 200
        assert (await client.post(f"/api/articles/{by_url[library['later']]}/done")).status_code == 200

    def done_by_url(db: Path) -> dict[str, float | None]:
        connection = sqlite3.connect(db)
        try:
            return dict(connection.execute("SELECT url, done_at FROM articles"))
        finally:
            connection.close()

    async def reading_list(db: Path) -> set[str]:
        async with await Store.open(db) as store:
            return {a["url"] for a in await store.list_articles(state="ready", unread=True, limit=100)}

    stored = done_by_url(settings.db)
    assert stored[one] is not None and stored[saved] is None and stored[library["later"]] is not None
    out = tmp_path / "export.json"
    code, _, err = await run_cli(settings.db, "export", "--out", str(out))
    assert code == 0, err
    document = json.loads(out.read_text())
    exported = {a["url"]: a for a in document["articles"]}
    assert {u: a["done_at"] for u, a in exported.items()} == {u: stored[u] for u in exported}

    fresh = tmp_path / "fresh.db"
    code, _, err = await run_cli(fresh, "import", str(out), "--no-refresh")
    assert code == 0, err
    assert {u: d for u, d in done_by_url(fresh).items()} == {u: stored[u] for u in exported}  # the very times
    assert await reading_list(fresh) == await reading_list(settings.db) == {saved}

    # An export made before done_at (schema v13): read and cleaned was off the reading list
    # then, so it comes back done as of its read; unread, it comes back on the list.
    for record in document["articles"]:
        del record["done_at"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(document))
    older = tmp_path / "older.db"
    code, _, err = await run_cli(older, "import", str(old), "--no-refresh")
    assert code == 0, err
    restored = done_by_url(older)
    assert restored[one] == exported[one]["read_at"] is not None
    assert restored[saved] is None and restored[library["later"]] is None  # unread: not done
    assert await reading_list(older) == {saved}


async def test_import_refuses_what_it_cannot_read_and_cleans_what_it_brings(settings, tmp_path):
    not_ours = tmp_path / "other.json"
    not_ours.write_text('{"items": []}')
    code, _, err = await run_cli(settings.db, "import", str(not_ours))
    # any file is told apart by content now: one of another shape is refused with the formats read
    assert code == 1 and "a JSON file of another shape" in err and "reader's own export" in err
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("hello")
    code, _, err = await run_cli(settings.db, "import", str(garbage))
    assert code == 1 and "not a format reader can import" in err and "an OPML list of feeds" in err
    code, _, err = await run_cli(settings.db, "import", str(tmp_path / "missing.json"))
    assert code == 1 and "no such file" in err

    hostile = tmp_path / "hostile.json"
    followed = [{"url": f"https://example.org/{i}.xml", "title": f"Feed {i}"} for i in range(0, 200, 2)]
    hostile.write_text(json.dumps({"format": "reader-export", "version": 1, "feeds": followed, "articles": [
        {"url": "javascript:alert(1)", "title": "bad"},
        {"url": "https://example.org/x", "title": "<script>alert(1)</script>Fine", "feed_url": None,
         "content": {"html": '<p onclick="alert(2)">Body <script>alert(3)</script><a href="javascript:x">l</a></p>',
                     "text": "Body", "words": 1},
         # the other feeds of its story: only an http feed with a guid is taken, and not too many
         "also_in": [{"feed_url": "javascript:alert(4)", "guid": "g"}, {"feed_url": "https://example.org/f.xml"},
                     "junk", {"feed_url": "https://example.org/f.xml", "guid": {"x": 1}},
                     *({"feed_url": f"https://example.org/{i}.xml", "guid": f"g{i}", "title": "<b>T</b>"}
                       for i in range(200))]},
        {"url": "https://example.org/y", "title": "Odd also_in", "also_in": "not a list"},
        "not even an object",
    ]}))
    code, stdout, err = await run_cli(settings.db, "import", str(hostile))
    assert code == 0, err
    assert "2 new articles" in stdout and "2 skipped records" in stdout
    async with await Store.open(settings.db) as store:
        [article] = [a for a in await store.list_articles() if a["url"] == "https://example.org/x"]
        content = await store.get_content(article["id"])
    sources = table_rows(settings.db, "sources")["sources"]
    # the first MAX_ALSO_IN (50) entries are read, four of them not an item; of the 46 items only the
    # 23 of feeds the library follows are kept, and no feed is made for the others; titles as text
    assert len(sources) == 23 and {row[3] for row in sources} == {"T"}
    assert len(table_rows(settings.db, "feeds")["feeds"]) == len(followed)
    assert article["title"] == "Fine"
    assert "script" not in content["html"] and "onclick" not in content["html"]
    assert "javascript:" not in content["html"] and "Body" in content["html"]


# -- migration from the first released schema ---------------------------------------------------------


async def test_a_database_from_the_first_release_migrates_and_is_served(settings, tmp_path):
    old = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "schema-v1.db", old)  # tests open copies, never a tracked file
    connection = sqlite3.connect(old)
    try:
        assert connection.execute("PRAGMA user_version").fetchone() == (1,)
        headlines = connection.execute("SELECT id, title, url, summary FROM articles ORDER BY id").fetchall()
    finally:
        connection.close()
    assert len(headlines) == 8

    async with await Store.open(old) as store:
        assert user_version(old) == len(MIGRATIONS)
        articles = sorted(await store.list_articles(), key=lambda a: a["id"])
        assert [(a["id"], a["title"], a["url"], a["summary"]) for a in articles] == headlines
        assert all(a["read_at"] is None and a["starred_at"] is None and a["summary_text"] for a in articles)
        found = await store.search(fts_query("typography"))
        assert [a["title"] for a in found][:1] == ["On typography for long reads"]

    async with await Store.open(old) as store:  # opening again migrates nothing more
        assert user_version(old) == len(MIGRATIONS) and await article_count(store) == 8

    async with app_client(settings.replace(db=old, serve_workers=0)) as client:
        page = (await client.get("/")).text
        assert all(title in page for _, title, _, _ in headlines)
        assert len((await client.get("/api/articles")).json()["items"]) == 8
        feeds = (await client.get("/feeds")).text
        assert "reader samples" in feeds and "8 articles · 8 unread" in feeds


async def test_a_text_that_may_be_only_the_start_says_so_after_a_round_trip(settings, pages, tmp_path):
    """contents.partial (schema v21) goes out with the text and comes back: a restored teaser
    still says it may be only the start (otherwise the export restores it as a whole article)."""
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(12))
    teaser = pages.add("/teaser.html", f"""<!doctype html><html><head><meta charset="utf-8"><title>Locked story</title>
        </head><body><header><nav><ul>{nav}</ul></nav></header><main><article><h1>Locked story</h1>
        <p>The first paragraph of the report says what the committee found, in ordinary words and at length.</p>
        <p>The second paragraph goes on about the letter and the plan before the page stops.</p></article>
        <div class="article-paywall"><p>Our reporting costs money.</p><a href="/plans">Plans</a></div></main>
        </body></html>""", content_type="text/html; charset=utf-8")
    async with app_client(settings.replace(serve_workers=0)) as client:
        saved = (await client.post("/api/articles", json={"url": teaser})).json()
        content = (await client.get(f"/api/articles/{saved['id']}/content")).json()
    assert content["partial"] == "the page has a paywall"
    out = tmp_path / "export.json"
    code, _, err = await run_cli(settings.db, "export", "--out", str(out))
    assert code == 0, err
    document = json.loads(out.read_text())
    assert [a["content"]["partial"] for a in document["articles"]] == ["the page has a paywall"]

    # a file that says something else than a short string there is not taken at its word
    document["articles"].append({**document["articles"][0], "url": "https://example.org/odd", "guid": "odd",
                                 "content": {**document["articles"][0]["content"], "partial": {"x": 1}}})
    out.write_text(json.dumps(document))
    fresh = tmp_path / "fresh.db"
    code, _, err = await run_cli(fresh, "import", str(out), "--no-refresh")
    assert code == 0, err
    with sqlite3.connect(fresh) as db:
        restored = dict(db.execute("SELECT a.url, c.partial FROM contents c JOIN articles a ON a.id = c.article_id"))
    assert restored == {teaser: "the page has a paywall", "https://example.org/odd": None}
