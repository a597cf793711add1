"""Moving in through the pages (issue 14): the feeds page's import form takes every sample
export, follows the import on its own page to the report (new, already there, each skip
with its reason), and fetches and queues nothing; tags on cards, in the reader view and on
a selection of cards; feeds in folders with their unread counts; highlights in the reader
view; imported texts on /stats; the library as a bookmark file."""

from __future__ import annotations

import re
import sqlite3

import pytest

from reader.formats.importers import parse_file

from ..helpers import app_client, rss, wait_for
from ..helpers import run_cli
from ..importfiles import SAMPLES, library, zipped_dir

HTMX = {"HX-Request": "true"}

# file name: (the format it is told to be, what the report says)
UPLOADS = {
    "pocket.csv": ("pocket-csv", "6 new links"),
    "ril_export.html": ("pocket-html", "new links"),
    "instapaper.csv": ("instapaper-csv", "new links"),
    "wallabag.json": ("wallabag", "2 new links, 1 already there, 1 with their saved text, 2 skipped"),
    "bookmarks-firefox.html": ("netscape", "new links"),
    "bookmarks-pinboard.html": ("netscape", "new links"),
    "omnivore.zip": ("omnivore", "3 new links"),
    "pocket.zip": ("pocket-csv", "new links"),
}


def sample(name: str) -> bytes:
    if name == "omnivore.zip":
        return zipped_dir("omnivore")
    if name == "pocket.zip":
        return zipped_dir("pocket-zip")
    return (SAMPLES / name).read_bytes()


async def upload(client, name: str, data: bytes):
    return await client.post("/feeds/import", files={"file": (name, data, "application/octet-stream")})


async def finished_report(client, location: str) -> str:
    """The import's page once it says the import is over (it reloads itself until then)."""
    async def done() -> str | None:
        page = (await client.get(location)).text
        return None if 'http-equiv="refresh"' in page else page
    return await wait_for(done)


@pytest.mark.parametrize("name", list(UPLOADS))
async def test_every_sample_through_the_web_form(settings, name):
    kind, summary = UPLOADS[name]
    async with app_client(settings.replace(serve_workers=0)) as client:
        answer = await upload(client, f"renamed-{name}.bin", sample(name))  # told by content, not by name
        assert answer.status_code == 303 and re.fullmatch(r"/imports/\d+", answer.headers["location"])
        report = await finished_report(client, answer.headers["location"])
        assert f"Done ({kind}):" in report and summary in report
        stats = (await client.get("/api/stats")).json()
        assert stats["queued"] == 0 and stats["started"] == 0  # nothing queued, nothing fetched
        again = await upload(client, f"renamed-{name}.bin", sample(name))
        second = await finished_report(client, again.headers["location"])
        assert " 0 new links" in second
    if name == "wallabag.json":
        # each skip with its reason, on the page
        assert "entry 4: not an http(s) URL: file:///home/me/notes.html" in report
    articles = await library(settings.db)
    assert articles and all(a["state"] in ("new", "ready") for a in articles.values())


async def test_web_import_fetches_nothing_and_keeps_tags_dates_and_states(settings, pages, tmp_path):
    page = pages.add_article("kept", "Kept for later")
    bookmarks = (f"<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT><H3>Later</H3>\n<DL><p>\n"
                 f'<DT><A HREF="{page}" ADD_DATE="1600000000" TAGS="one,two">Kept</A>\n</DL><p>\n</DL>\n')
    async with app_client(settings.replace(serve_workers=0)) as client:
        answer = await upload(client, "bookmarks.html", bookmarks.encode())
        report = await finished_report(client, answer.headers["location"])
        assert "1 new links, 0 already there" in report
        [item] = (await client.get("/api/articles", params={"tag": "later"})).json()["items"]
        assert item["tags"] == ["Later", "one", "two"] and item["state"] == "new" and item["added_at"] == 1600000000
        assert (await client.get("/api/queue")).json()["items"] == []
    assert pages.total == 0


async def test_the_import_page_shows_progress_while_it_runs(settings, tmp_path):
    rows = "\n".join(f"Link {i},https://example.org/{i},{1_600_000_000 + i},bulk,unread" for i in range(6000))
    data = ("title,url,time_added,tags,status\n" + rows + "\n").encode()
    async with app_client(settings.replace(serve_workers=0)) as client:
        await client.get("/feeds")  # the app is up and its database made
        # Another writer holds the database: the import has read its file and waits to store.
        blocker = sqlite3.connect(settings.db, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            answer = await upload(client, "big.csv", data)
            location = answer.headers["location"]

            async def waiting() -> str | None:
                text = (await client.get(location)).text
                return text if "0 of 6,000 links stored" in text else None
            during = await wait_for(waiting)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert 'http-equiv="refresh"' in during and '<progress max="6000" value="0">' in during
        report = await finished_report(client, location)
    assert "Done (pocket-csv): 6000 new links, 0 already there, 0 skipped" in report


async def test_the_cli_shows_progress_on_a_big_file(settings, tmp_path):
    rows = "\n".join(f"Link {i},https://example.org/{i},{1_600_000_000 + i},,unread" for i in range(5000))
    big = tmp_path / "big.csv"
    big.write_text("title,url,time_added,tags,status\n" + rows + "\n")
    code, out, err = await run_cli(settings.db, "import", str(big))
    assert code == 0, err
    assert "0 of 5000 links" in err and "2000 of 5000 links" in err and "5000 of 5000 links" in err
    assert "5000 new links" in out


async def test_an_unknown_file_is_refused_on_the_page_with_the_formats_read(settings):
    async with app_client(settings.replace(serve_workers=0)) as client:
        answer = await upload(client, "notes.txt", b"just some words\n")
        assert answer.status_code == 422
        for named in ("Pocket", "Instapaper", "Omnivore", "wallabag", "bookmark file", "OPML"):
            assert named in answer.text
        truncated = sample("omnivore.zip")[:-200]
        answer = await upload(client, "omnivore.zip", truncated)
        assert answer.status_code == 422 and "damaged or incomplete" in answer.text
        assert (await client.get("/api/articles")).json()["items"] == []


async def test_tags_on_a_card_in_the_reader_view_and_on_a_selection(settings):
    async with app_client(settings.replace(serve_workers=0)) as client:
        ids = []
        for slug in ("a", "b", "c"):
            saved = await client.post("/api/articles", json={"url": f"https://example.org/{slug}", "title": slug.upper()})
            ids.append(saved.json()["id"])
        # on the card (htmx swaps it), then without JavaScript (back where the person was)
        card = await client.post(f"/articles/{ids[0]}/tags", data={"tags": "Later, work", "next": "/"}, headers=HTMX)
        assert card.status_code == 200 and 'href="/?tag=Later">#Later</a>' in card.text
        assert 'href="/?tag=work">#work</a>' in card.text  # the ⋯ menu's tags box is filled from these (app.js)
        plain = await client.post(f"/articles/{ids[1]}/tags", data={"tags": "later", "next": "/?starred=1"})
        assert plain.status_code == 303 and plain.headers["location"] == "/?starred=1"
        listed = (await client.get("/", params={"tag": "later"})).text
        assert "#Later" in listed and ">A</a>" in listed and ">B</a>" in listed and ">C</a>" not in listed
        assert 'aria-label="Show every tag"' in listed
        # the reader view: the tags, and the form to change them
        view = (await client.get(f"/articles/{ids[0]}")).text
        assert 'href="/?tag=work">#work</a>' in view and 'id="article-tags"' in view
        await client.post(f"/articles/{ids[0]}/tags", data={"tags": "", "next": f"/articles/{ids[0]}"})
        assert (await client.get(f"/api/articles/{ids[0]}")).json()["tags"] == []
        # a selection: the cards named, then everything the list holds up to the newest shown
        newest = max(ids)
        answer = await client.post("/articles/tags", data={"tags": "batch", "ids": f"{ids[0]},{ids[2]}", "next": "/"})
        assert answer.status_code == 303
        assert "Tagged 2 articles." in (await client.get(answer.headers["location"])).text
        late = (await client.post("/api/articles", json={"url": "https://example.org/late", "title": "Late"})).json()
        answer = await client.post("/articles/tags", data={"tags": "everything", "until": str(newest), "next": "/"})
        assert "tagged=3" in answer.headers["location"]
        tags = {a["id"]: a["tags"] for a in (await client.get("/api/articles")).json()["items"]}
        assert tags[ids[0]] == ["batch", "everything"] and tags[ids[1]] == ["everything", "Later"]  # the first spelling names a tag
        assert tags[ids[2]] == ["batch", "everything"] and tags[late["id"]] == []  # arrived after: untouched
        for bad in ({"tags": "", "ids": str(ids[0])}, {"tags": "x"}, {"tags": "x" * 101, "ids": str(ids[0])}):
            response = await client.post("/articles/tags", data={**bad, "next": "/"})
            assert response.status_code == 422


async def test_feeds_in_folders_with_unread_counts_and_browse_by_folder(settings, pages):
    def feed(path: str, title: str, headlines: list[str]) -> str:
        items = [{"title": h, "link": f"{pages.url}/{h.lower()}.html"} for h in headlines]
        return pages.add(path, rss(items, title=title), "application/rss+xml")
    tech = feed("/tech.xml", "Tech", ["Compilers", "Linkers"])
    news = feed("/news.xml", "News", ["Elections"])
    loose = feed("/loose.xml", "Loose", ["Gardening"])
    opml = (f'<opml version="2.0"><body><outline text="Tech"><outline type="rss" text="Tech" xmlUrl="{tech}"/>'
            f'</outline><outline text="World"><outline text="News"><outline type="rss" text="News" xmlUrl="{news}"/>'
            f'</outline></outline><outline type="rss" text="Loose" xmlUrl="{loose}"/></body></opml>')
    async with app_client(settings.replace(serve_workers=0)) as client:
        answer = await upload(client, "subscriptions.opml", opml.encode())
        assert answer.status_code == 303 and "imported=3" in answer.headers["location"]
        feeds = {f["title"]: f for f in (await client.get("/api/feeds")).json()["feeds"]}
        assert feeds["Tech"]["folder"] == "Tech" and feeds["News"]["folder"] == "World / News"
        assert feeds["Loose"]["folder"] is None
        page = (await client.get("/feeds")).text
        assert re.search(r'href="/\?folder=Tech">Tech</a>\s*<span class="meta">1 feed · 2 unread', page)
        assert re.search(r'href="/\?folder=World\+%2F\+News">World / News</a>\s*<span class="meta">1 feed · 1 unread',
                         page)
        assert "Not in a folder" in page
        listed = (await client.get("/", params={"folder": "Tech"})).text
        assert "Compilers" in listed and "Linkers" in listed and "Elections" not in listed
        assert "Gardening" not in listed
        # combined with another filter, and through the API
        items = (await client.get("/api/articles", params={"folder": "Tech", "q": "linkers"})).json()["items"]
        assert [a["title"] for a in items] == ["Linkers"]
        # a feed moved to a folder on the page; the OPML written back has the nesting
        moved = await client.post(f"/feeds/{feeds['Loose']['id']}/folder", data={"folder": " Tech "})
        assert moved.status_code == 303
        page = (await client.get("/feeds")).text
        assert "Not in a folder" not in page and re.search(r"Tech</a>\s*<span class=\"meta\">2 feeds · 3 unread", page)
        written = (await client.get("/feeds.opml")).text
        assert re.search(r'<outline text="World" title="World">\s*<outline text="News" title="News">', written)


async def test_highlights_and_imported_text_in_the_reader_view_and_stats(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        answer = await upload(client, "wallabag.json", sample("wallabag.json"))
        await finished_report(client, answer.headers["location"])
        [printing] = [a for a in (await client.get("/api/articles")).json()["items"]
                      if a["url"] == "https://history.example/printing"]
        assert printing["state"] == "ready"  # the text came with the export: no fetch to wait for
        view = (await client.get(f"/articles/{printing['id']}")).text
        # the annotation is a highlight painted over the text, across the <em>, and listed under it
        assert "every copy was made by <em>hand</em>" in re.sub(r"</?mark[^>]*>", "", view)
        assert re.search(r'<mark class="hl hl-yellow" id="hl-\d+" data-hl="\d+">every copy was made by </mark>'
                         r'<em><mark class="hl hl-yellow" data-hl="\d+">hand</mark></em>', view)
        assert re.search(r'class="highlight-quote hl-yellow" href="#hl-\d+">every copy was made by hand</a>', view)
        assert "Compare with the telegraph." in view
        stats = (await client.get("/stats")).text
        assert re.search(r"<dt>imported</dt><dd>1</dd>", stats) and re.search(r"<dt>started</dt><dd>0</dd>", stats)
    assert pages.total == 0


async def test_the_library_downloads_as_a_bookmark_file(settings):
    async with app_client(settings.replace(serve_workers=0)) as client:
        answer = await upload(client, "wallabag.json", sample("wallabag.json"))
        await finished_report(client, answer.headers["location"])
        assert 'href="/library.html"' in (await client.get("/feeds")).text
        download = await client.get("/library.html")
    assert download.status_code == 200 and "attachment" in download.headers["content-disposition"]
    parsed = parse_file(download.content, "library.html")
    assert parsed.format == "netscape"
    assert {link.url for link in parsed.links} == set(await library(settings.db))


async def test_readers_own_export_through_the_web_form(settings, tmp_path):
    assert (await run_cli(settings.db, "import", str(SAMPLES / "wallabag.json")))[0] == 0
    exported = tmp_path / "export.json"
    assert (await run_cli(settings.db, "export", "--out", str(exported)))[0] == 0
    fresh = settings.replace(db=tmp_path / "fresh.db", serve_workers=0)
    async with app_client(fresh) as client:
        answer = await upload(client, "export.json", exported.read_bytes())
        report = await finished_report(client, answer.headers["location"])
        assert "Done (reader): 2 new links" in report
    before, after = await library(settings.db), await library(fresh.db)
    assert set(before) == set(after)
    for url, article in before.items():
        assert after[url]["tags"] == article["tags"] and after[url]["notes"] == article["notes"]
        assert (after[url]["content"] or {}).get("html") == (article["content"] or {}).get("html")
