"""Moving in (issue 14, the storage half): every sample export imported through the real
`reader import` command into a real database file, then checked through the store and the
JSON API: counts, tags, folders, states, stars, dates, notes and the texts that came with
the export. No link is fetched and nothing is queued (new feeds are fetched by the one rule
after an import, unless --no-refresh); importing twice changes nothing; a round trip
through `reader export` and `reader import` loses nothing."""

from __future__ import annotations

import datetime
import json
import sqlite3
from pathlib import Path

from reader.store import Store

from ..helpers import app_client, run_cli
from ..importfiles import SAMPLES, library, zipped_dir


def utc(text: str) -> float:
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC).timestamp()



def snapshot(db: Path) -> dict[str, list[tuple]]:
    tables = ("feeds", "articles", "contents", "tags", "article_tags", "notes", "imported", "queue", "runs")
    connection = sqlite3.connect(db)
    try:
        return {t: connection.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in tables}
    finally:
        connection.close()



async def test_every_sample_through_the_cli_nothing_fetched_nothing_queued(settings, tmp_path):
    db = settings.db
    omnivore, pocket_zip = tmp_path / "omnivore-export.zip", tmp_path / "pocket.zip"
    omnivore.write_bytes(zipped_dir("omnivore"))
    pocket_zip.write_bytes(zipped_dir("pocket-zip"))
    files = [SAMPLES / n for n in ("pocket.csv", "ril_export.html", "instapaper.csv", "wallabag.json",
                                   "bookmarks-firefox.html", "bookmarks-pinboard.html", "feeds.opml")]
    files += [omnivore, pocket_zip]
    code, out, err = await run_cli(db, "import", *map(str, files), "--no-refresh")
    assert code == 0, err
    assert "wallabag.json (wallabag): 2 new links, 1 already there, 1 with their saved text, 2 skipped" in out
    assert "omnivore-export.zip (omnivore): 3 new links" in out and "2 with their saved text" in out
    assert "feeds.opml (opml):" in out and "5 new feeds" in out
    # each skip with its reason
    assert "skipped entry 4: not an http(s) URL: file:///home/me/notes.html" in err
    assert "skipped row 7: not an http(s) URL: ftp://example.com/file" in err

    articles = await library(db)
    # wallabag: read, starred, tags, time added kept; its content stored, already cleaned
    printing = articles["https://history.example/printing"]
    assert printing["read_at"] is not None and printing["starred_at"] is not None
    assert {"history", "long reads"} <= printing["tags"]
    assert printing["added_at"] == utc("2019-01-01T08:00:00") == printing["sort_at"]
    assert printing["state"] == "ready" and "every copy was made by <em>hand</em>" in printing["content"]["html"]
    assert "onerror" not in printing["content"]["html"]
    # wallabag's annotations with a quote: highlights placed in the saved text
    [made_by_hand] = [h for h in printing["highlights"] if h["quote"] == "every copy was made by hand"]
    assert made_by_hand["note"] == "Compare with the telegraph." and not made_by_hand["detached"]
    assert made_by_hand["created_at"] == utc("2019-02-15T08:00:00")
    text = printing["content"]["text"]
    assert text[made_by_hand["start"]:made_by_hand["end"]] == "every copy was made by hand"
    hammer = articles["https://tools.example/hammer"]
    assert hammer["state"] == "new" and hammer["content"] is None and hammer["read_at"] is None
    # Omnivore: highlights placed in the text, content kept, labels as tags
    vanish = articles["https://example.net/why-sites-vanish"]
    assert vanish["tags"] == {"web", "archiving"} and vanish["read_at"] is not None
    assert vanish["state"] == "ready" and "Half of the links" in vanish["content"]["text"]
    first = vanish["highlights"][0]
    assert first["quote"] == "Half of the links in a study of old articles no longer worked."
    assert first["note"] == "Check the method: what counts as a dead link?" and not first["detached"]
    assert articles["https://example.net/paper.pdf"]["tags"] == {"papers"}
    # bookmarks: folders became tags; no URL of another scheme came in
    deep = articles["https://example.org/deep"]
    # a tag is one tag in any case: Pocket's "reading" came first and named it
    assert {t.lower() for t in deep["tags"]} == {"reading", "deep, very deep", "later"}
    assert not any(url.startswith(("javascript:", "place:", "ftp:", "file:", "mailto:")) for url in articles)

    async with await Store.open(db) as store:
        feeds = {f["url"]: f for f in await store.list_feeds()}
        stats = await store.stats()
    assert len(feeds) == 5 and any(f["folder"] for f in feeds.values())
    assert all(f["refreshed_at"] is None for f in feeds.values())  # --no-refresh: left to the refresher
    assert stats["queued"] == 0 and stats["started"] == 0 and stats["imported"] == 3
    # a second import of everything changes nothing at all
    before = snapshot(db)
    code, out, err = await run_cli(db, "import", *map(str, files))
    assert code == 0, err
    assert " 0 new links" in out and "0 new feeds" in out
    assert snapshot(db) == before


async def test_import_fetches_no_link_even_when_reachable_and_fetches_the_new_feed(settings, pages, tmp_path):
    page = pages.add_article("kept", "Kept for later")
    feed = pages.add("/feed.xml", "<rss version='2.0'><channel><title>x</title></channel></rss>",
                     "application/rss+xml")
    bookmarks = tmp_path / "bookmarks.html"
    bookmarks.write_text(f"<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT><H3>Later</H3>\n<DL><p>\n"
                         f'<DT><A HREF="{page}" ADD_DATE="1600000000" TAGS="one,two">Kept</A>\n</DL><p>\n</DL>\n')
    opml = tmp_path / "feeds.opml"
    opml.write_text(f'<opml version="2.0"><body><outline text="Tech"><outline type="rss" text="x" xmlUrl="{feed}"/>'
                    "</outline></body></opml>")
    code, out, err = await run_cli(settings.db, "import", str(bookmarks), str(opml))
    assert code == 0, err
    # the one rule after an import: its new feed is fetched right away, the link is not
    assert "fetched 1 of 1 new feeds" in out
    assert pages.total == 1 and pages.hits["/feed.xml"] == 1
    articles = await library(settings.db)
    assert articles[page]["tags"] == {"Later", "one", "two"} and articles[page]["state"] == "new"
    assert articles[page]["added_at"] == 1600000000
    async with app_client(settings.replace(serve_workers=0, refresh_interval=0)) as client:
        [listed] = (await client.get("/api/feeds")).json()["feeds"]
        assert listed["folder"] == "Tech"
        opml_out = (await client.get("/feeds.opml")).text
        assert '<outline text="Tech"' in opml_out
        got = (await client.get("/api/articles?tag=one")).json()
    ids = [a["id"] for a in got["items"]]
    assert ids == [articles[page]["id"]]
    assert pages.total == 1


async def test_round_trip_through_export_and_import_is_lossless(settings, tmp_path):
    omnivore = tmp_path / "omnivore.zip"
    omnivore.write_bytes(zipped_dir("omnivore"))
    files = [SAMPLES / "wallabag.json", SAMPLES / "feeds.opml", SAMPLES / "instapaper.csv", omnivore]
    assert (await run_cli(settings.db, "import", *map(str, files), "--no-refresh"))[0] == 0
    first = tmp_path / "first.json"
    assert (await run_cli(settings.db, "export", "--out", str(first)))[0] == 0
    fresh = tmp_path / "fresh.db"
    code, out, err = await run_cli(fresh, "import", str(first), "--no-refresh")
    assert code == 0, err
    second = tmp_path / "second.json"
    assert (await run_cli(fresh, "export", "--out", str(second)))[0] == 0
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    a.pop("exported_at"), b.pop("exported_at")
    assert a == b
    assert any(r["tags"] for r in a["articles"]) and any(r["notes"] for r in a["articles"])
    assert any(f["folder"] for f in a["feeds"])
    assert any(r["read_at"] for r in a["articles"]) and any(r["starred_at"] for r in a["articles"])


async def test_unknown_format_is_refused_with_the_formats_and_the_rest_comes_in(settings, tmp_path):
    odd = tmp_path / "notes.txt"
    odd.write_text("just some words\n")
    code, out, err = await run_cli(settings.db, "import", str(odd), str(SAMPLES / "pocket.csv"))
    assert code == 1
    assert "not a format reader can import" in err and "wallabag's JSON export" in err
    assert "pocket.csv (pocket-csv): 6 new links" in out


async def test_tags_and_folders_through_the_api(quiet, settings):
    client = quiet
    saved = (await client.post("/api/articles", json={"url": "https://example.org/a", "title": "A"})).json()
    other = (await client.post("/api/articles", json={"url": "https://example.org/b", "title": "B"})).json()
    assert saved["tags"] == []
    answer = await client.post(f"/api/articles/{saved['id']}/tags", json={"tags": ["Later", "later", " two  words "]})
    assert answer.status_code == 200 and answer.json()["tags"] == ["Later", "two words"]
    await client.post(f"/api/articles/{other['id']}/tags", json={"tags": "later"})
    listed = (await client.get("/api/articles", params={"tag": "later"})).json()["items"]
    assert sorted(a["id"] for a in listed) == sorted([saved["id"], other["id"]])
    starred = (await client.post(f"/api/articles/{other['id']}/star")).json()
    assert starred["tags"] == ["Later"]  # the tag's first spelling names it
    both = (await client.get("/api/articles", params={"tag": "Later", "starred": "1"})).json()["items"]
    assert [a["id"] for a in both] == [other["id"]]
    # removing every tag; bad input is a clear 4xx, never a 500
    assert (await client.post(f"/api/articles/{saved['id']}/tags", json={"tags": []})).json()["tags"] == []
    for bad in ({"tags": [1, 2]}, {"tags": {"a": 1}}, {}, {"tags": ["x" * 101]}):
        response = await client.post(f"/api/articles/{saved['id']}/tags", json=bad)
        assert 400 <= response.status_code < 500 and "tag" in response.json()["error"]
    assert (await client.post("/api/articles/999999/tags", json={"tags": ["x"]})).status_code == 404
    # a selection at once: by ids, or by a filter up to the newest article seen
    tagged = await client.post("/api/articles/tags", json={"tags": ["bulk"], "ids": [saved["id"], other["id"]]})
    assert tagged.status_code == 200 and tagged.json() == {"tagged": 2}
    starry = await client.post("/api/articles/tags", json={"tags": "starry", "starred": True, "until": other["id"]})
    assert starry.json() == {"tagged": 1}
    assert (await client.get(f"/api/articles/{other['id']}")).json()["tags"] == ["bulk", "Later", "starry"]
    for bad in ({"tags": ["x"]}, {"tags": [], "ids": [saved["id"]]}, {"tags": ["x"], "ids": "1"}):
        assert (await client.post("/api/articles/tags", json=bad)).status_code == 422

    async with await Store.open(settings.db) as store:
        feed_id, _ = await store.add_feed("https://feeds.example/rss", "Feed")
    patched = await client.patch(f"/api/feeds/{feed_id}", json={"folder": "  News   / Local "})
    assert patched.status_code == 200 and patched.json()["folder"] == "News / Local"
    [feed] = (await client.get("/api/feeds")).json()["feeds"]
    assert feed["folder"] == "News / Local" and feed["unread"] == 0
    assert (await client.patch(f"/api/feeds/{feed_id}", json={"folder": None})).json()["folder"] is None
    assert (await client.patch(f"/api/feeds/{feed_id}", json={"folder": 3})).status_code == 422
    assert (await client.patch("/api/feeds/99999", json={"folder": "x"})).status_code == 404


async def test_library_exports_as_bookmarks_that_import_back(settings, tmp_path):
    assert (await run_cli(settings.db, "import", str(SAMPLES / "wallabag.json")))[0] == 0
    out = tmp_path / "library.html"
    code, _, err = await run_cli(settings.db, "export", "--bookmarks", str(out))
    assert code == 0, err
    fresh = tmp_path / "fresh.db"
    code, stdout, err = await run_cli(fresh, "import", str(out))
    assert code == 0 and "(netscape): 2 new links" in stdout, err
    before, after = await library(settings.db), await library(fresh)
    assert set(before) == set(after)
    for url, article in before.items():
        back = after[url]
        assert back["tags"] == article["tags"] and back["added_at"] == int(article["added_at"])
        assert (back["read_at"] is None) == (article["read_at"] is None)
        # a bookmark has one description: the notes come back in it, one after another
        described = "\n".join(n["text"] for n in back["notes"])
        assert all(n["text"] in described for n in article["notes"])
        assert bool(back["notes"]) == bool(article["notes"])
