"""OPML in and out: a file exported by another reader (nested folders) comes in, goes out,
and comes back into a fresh database as the same feeds; hostile and wrong files are
refused with a clear message. Through the store, the feeds page and the CLI."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from reader.formats.importers import FeedRecord, ImportFileError
from reader.formats.opml import build_opml, parse_opml
from reader.store import Store

from reader.core.library import IMPORT_FETCH_LIMIT
from reader.web.app import running

from ..helpers import app_client, rss, run_cli, wait_for

RSS = {"Content-Type": "application/rss+xml"}

# What Feedly and Inoreader write: a head with a title, folders as outlines with only
# text/title, feeds as outlines with type, xmlUrl and htmlUrl, one folder inside another,
# a feed listed in two folders, and a feed outside any folder.
FOREIGN_OPML = """<?xml version="1.0" encoding="UTF-8"?>
<opml version="1.0">
  <head>
    <title>Ann subscriptions in Inoreader</title>
    <dateCreated>Sat, 28 Nov 2026 09:14:03 +0000</dateCreated>
  </head>
  <body>
    <outline text="Tech" title="Tech">
      <outline type="rss" text="LWN.net" title="LWN.net" xmlUrl="https://lwn.net/headlines/rss" htmlUrl="https://lwn.net/"/>
      <outline type="rss" text="Julia Evans" title="Julia Evans" xmlUrl="https://jvns.ca/atom.xml" htmlUrl="https://jvns.ca/"/>
      <outline text="Databases" title="Databases">
        <outline type="rss" text="SQLite News" title="SQLite News" xmlUrl="https://sqlite.org/news.rss" htmlUrl="https://sqlite.org/"/>
        <outline type="rss" text="Use The Index, Luke" title="Use The Index, Luke" xmlUrl="https://use-the-index-luke.com/blog/feed" htmlUrl="https://use-the-index-luke.com/"/>
      </outline>
    </outline>
    <outline text="Reading" title="Reading">
      <outline type="rss" text="Julia Evans" title="Julia Evans" xmlUrl="https://jvns.ca/atom.xml" htmlUrl="https://jvns.ca/"/>
      <outline type="rss" text="Butterick &amp; Co" xmlURL="https://practicaltypography.com/feed.xml"/>
    </outline>
    <outline type="rss" text="Loose feed" title="Loose feed" xmlUrl="http://example.org/loose.xml"/>
    <outline type="rss" text="A podcast link" title="A podcast link" xmlUrl="feed://example.org/podcast"/>
  </body>
</opml>
"""
FOREIGN_FEEDS = {
    "https://lwn.net/headlines/rss": ("LWN.net", "https://lwn.net/"),
    "https://jvns.ca/atom.xml": ("Julia Evans", "https://jvns.ca/"),
    "https://sqlite.org/news.rss": ("SQLite News", "https://sqlite.org/"),
    "https://use-the-index-luke.com/blog/feed": ("Use The Index, Luke", "https://use-the-index-luke.com/"),
    "https://practicaltypography.com/feed.xml": ("Butterick & Co", None),
    "http://example.org/loose.xml": ("Loose feed", None),
}

LAUGHS = '<?xml version="1.0"?>\n<!DOCTYPE opml [<!ENTITY lol0 "lol">' + "".join(
    f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">' for i in range(1, 10)
) + ']>\n<opml version="2.0"><head><title>&lol9;</title></head><body>' \
    '<outline type="rss" text="&lol9;" xmlUrl="https://example.org/feed"/></body></opml>'



def opml_of(feeds: list[dict]) -> bytes:
    return build_opml(FeedRecord(f["url"], f["title"], f["site_url"]) for f in feeds)


async def feeds_in(db) -> dict[str, tuple[str, str | None]]:
    async with await Store.open(db) as store:
        return {f["url"]: (f["title"], f["site_url"]) for f in await store.list_feeds(counts=False)}


# -- parsing ---------------------------------------------------------------------------------------


def test_nested_folders_come_in_as_feeds_deduplicated_with_bad_urls_skipped():
    skipped: list[str] = []
    feeds = parse_opml(FOREIGN_OPML.encode(), "inoreader.opml", refused=skipped)
    assert {f.url: (f.title, f.site_url) for f in feeds} == FOREIGN_FEEDS
    assert [f.url for f in feeds][:2] == ["https://lwn.net/headlines/rss", "https://jvns.ca/atom.xml"]
    assert [f.folder_name for f in feeds][:3] == ["Tech", "Tech", "Tech / Databases"]
    assert skipped == ["feed://example.org/podcast"]


def test_exported_opml_is_valid_and_reads_back_the_same():
    feeds = [{"url": u, "title": t, "site_url": s} for u, (t, s) in FOREIGN_FEEDS.items()]
    data = opml_of(feeds)
    root = ET.fromstring(data)
    assert root.tag == "opml" and root.get("version") == "2.0"
    assert root.find("head/title").text == "reader subscriptions"
    outlines = root.findall("body/outline")
    assert all(o.get("type") == "rss" and o.get("xmlUrl") and o.get("text") for o in outlines)
    skipped: list[str] = []
    back = parse_opml(data, "exported.opml", refused=skipped)
    assert {f.url: (f.title, f.site_url) for f in back} == FOREIGN_FEEDS and skipped == []


@pytest.mark.parametrize("data", [
    LAUGHS.encode(),
    b'<?xml version="1.0"?><!DOCTYPE opml SYSTEM "http://127.0.0.1:9/opml.dtd"><opml><body/></opml>',
    b'<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    b'<opml><body><outline text="&x;" xmlUrl="https://e.org/f"/></body></opml>',
    # the same declaration hidden from a byte search by another encoding
    '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE opml [<!ENTITY a "b">]><opml><body/></opml>'.encode("utf-16"),
])
def test_doctype_and_entity_declarations_are_refused_before_anything_expands(data):
    with pytest.raises(ImportFileError, match=r"^bomb.opml: refused: the file declares a DOCTYPE or entities"):
        parse_opml(data, "bomb.opml")


@pytest.mark.parametrize("data, message", [
    (b"", "not an OPML file (the file is empty)"),
    (b"Name,URL\nLWN,https://lwn.net/headlines/rss\n", "not an OPML file (its XML breaks at line 1, column 1: text"
                                                     " that is not XML (an OPML file begins with <?xml or <opml>))"),
    (rss([{"title": "x", "link": "http://e.org/x"}]).encode(), "not an OPML file (its root element is <rss>, not <opml>)"),
    (b'<opml version="2.0"><head><title>t</title></head></opml>', "not an OPML file (it has no <body>)"),
    (b"<opml><body><outline", "not an OPML file (its XML breaks at line 1, column 13: the file ends in the middle"
                              " of a tag: it was cut short)"),
    (b'<opml><body><outline text="R&D" xmlUrl="https://e.org/f"/></body></opml>',
     "not an OPML file (its XML breaks at line 1, column 31: a character XML does not allow there, such as a bare &"),
    (b"<opml><body><outline text='a'></body></opml>",
     "not an OPML file (its XML breaks at line 1, column 33: a tag is closed that was not the last one opened)"),
])
def test_a_file_that_is_not_opml_gets_a_clear_error(data, message):
    with pytest.raises(ImportFileError) as caught:
        parse_opml(data, "subs.opml")
    assert str(caught.value).startswith(f"subs.opml: {message}")


# -- the round trip ---------------------------------------------------------------------------------


async def test_round_trip_foreign_file_to_export_to_a_fresh_database(tmp_path):
    foreign = tmp_path / "inoreader.opml"
    foreign.write_text(FOREIGN_OPML, encoding="utf-8")
    first, second = tmp_path / "first.db", tmp_path / "second.db"

    code, out, err = await run_cli(first, "import-opml", str(foreign), "--no-refresh")
    assert code == 0, err
    assert out.startswith(f"{foreign}: 6 new feeds, 0 already subscribed, 1 skipped")
    assert "skipped feed://example.org/podcast" in err
    assert await feeds_in(first) == FOREIGN_FEEDS

    code, exported, err = await run_cli(first, "export-opml")
    assert code == 0, err
    assert re.search(r'<outline text="Databases" title="Databases">\s*<outline type="rss" text="SQLite News"', exported)
    (tmp_path / "exported.opml").write_text(exported, encoding="utf-8")

    code, out, err = await run_cli(second, "import-opml", str(tmp_path / "exported.opml"), "--no-refresh")
    assert code == 0, err
    assert await feeds_in(second) == FOREIGN_FEEDS

    # importing again subscribes nothing twice
    code, out, err = await run_cli(second, "import-opml", str(foreign), "--no-refresh")
    assert code == 0 and "0 new feeds, 6 already subscribed" in out
    assert await feeds_in(second) == FOREIGN_FEEDS


async def test_the_cli_refuses_a_bomb_and_a_non_opml_file_and_fetches_new_feeds(tmp_path, pages):
    db = tmp_path / "reader.db"
    bomb = tmp_path / "bomb.opml"
    bomb.write_text(LAUGHS)
    code, out, err = await run_cli(db, "import-opml", str(bomb))
    assert code == 1 and "refused: the file declares a DOCTYPE or entities" in err
    csv = tmp_path / "feeds.csv"
    csv.write_text("name,url\n")
    code, out, err = await run_cli(db, "import-opml", str(csv))
    assert code == 1 and "not an OPML file" in err
    code, out, err = await run_cli(db, "import-opml", str(tmp_path / "missing.opml"))
    assert code == 2 and "missing.opml" in err
    assert await feeds_in(db) == {}

    # without --no-refresh, the new feeds are fetched now
    url = pages.add("/f.xml", rss([{"title": "One", "link": pages.url("/one.html")}], title="Local"), headers=RSS)
    local = tmp_path / "local.opml"
    local.write_bytes(opml_of([{"url": url, "title": "My name for it", "site_url": None}]))
    code, out, err = await run_cli(db, "import-opml", str(local))
    assert code == 0, err
    assert "1 new feeds" in out and "fetched 1 of 1 new feeds" in out
    async with await Store.open(db) as store:
        [feed] = await store.list_feeds()
    assert feed["title"] == "My name for it"  # the name the person chose survives the fetch
    assert feed["articles"] == 1 and feed["refreshed_at"] is not None


async def test_reader_export_writes_the_folders_and_importing_it_keeps_them(tmp_path):
    foreign = tmp_path / "inoreader.opml"
    foreign.write_text(FOREIGN_OPML, encoding="utf-8")
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    assert (await run_cli(first, "import-opml", str(foreign), "--no-refresh"))[0] == 0
    code, _, err = await run_cli(first, "export", "--out", str(tmp_path / "out"))
    assert code == 0, err
    written = (tmp_path / "out" / "feeds.opml").read_text()
    assert re.search(r'<outline text="Databases" title="Databases">\s*<outline type="rss" text="SQLite News"', written)
    code, _, err = await run_cli(second, "import", str(tmp_path / "out"), "--no-refresh")
    assert code == 0, err
    async with await Store.open(second) as store:
        folders = {f["url"]: f["folder"] for f in await store.list_feeds(counts=False)}
    assert folders["https://sqlite.org/news.rss"] == "Tech / Databases" and folders["http://example.org/loose.xml"] is None


# -- one rule for fetching after an import, whichever interface asks (reader/core/library.py) -------


async def test_more_new_feeds_than_the_cap_are_left_to_the_refresher_by_the_cli_too(tmp_path):
    """`import-opml` used to fetch every new feed; now it keeps the rule every import keeps."""
    many = tmp_path / "many.opml"
    count = IMPORT_FETCH_LIMIT + 1
    many.write_bytes(opml_of([{"url": f"https://feeds{i}.reader.invalid/rss", "title": f"Feed {i}", "site_url": None}
                              for i in range(count)]))
    for command in ("import-opml", "import"):
        db = tmp_path / f"{command}.db"
        code, out, err = await run_cli(db, command, str(many))
        assert code == 0, err
        assert out.splitlines()[1] == f"{count} new feeds left to the background refresh" \
                                      " (`reader refresh` fetches them now)"
        async with await Store.open(db) as store:
            feeds = await store.list_feeds(counts=False)
            assert len(feeds) == count and all(f["refreshed_at"] is None for f in feeds)
            assert len(await store.feeds_due(0)) == count  # the refresher's next round takes them


async def test_an_upload_imported_in_the_background_fetches_its_new_feeds(settings, pages):
    """The web form's background import (Reader.start_import_data) keeps the same rule: an
    OPML file's few new feeds are fetched as part of the import, and the job says how it went."""
    good = pages.add("/good.xml", rss([{"title": "Fine", "link": pages.url("/fine.html")}], title="Good feed"),
                     headers=RSS)
    gone = pages.url("/gone.xml")
    data = opml_of([{"url": good, "title": "", "site_url": None}, {"url": gone, "title": "Gone", "site_url": None}])
    async with running(settings, worker=False) as reader:
        job = await reader.start_import_data(data, "subs.opml")
        await wait_for(lambda: job.finished)
        assert job.error is None and job.outcome is not None
        assert job.outcome.feeds_new == 2 and job.outcome.waiting == 0
        assert {r.url: r.error is None for r in job.outcome.fetched} == {good: True, gone: False}
        assert pages.hits["/fine.html"] == 0  # the feed's article is listed, not fetched
        no_fetch = await reader.import_data(opml_of([{"url": pages.url("/other.xml"), "title": "", "site_url": None}]),
                                            "other.opml", fetch=False)
        assert no_fetch.fetched == [] and no_fetch.waiting == 1 and pages.hits["/other.xml"] == 0


# -- the feeds page -----------------------------------------------------------------------------------


async def test_uploading_opml_on_the_feeds_page_subscribes_and_fetches_a_few_now(settings, pages):
    urls = [pages.add(f"/f{i}.xml", rss([{"title": f"Item {i}", "link": pages.url(f"/i{i}.html")}],
                                         title=f"Feed {i}"), headers=RSS) for i in range(3)]
    data = opml_of([{"url": u, "title": "", "site_url": None} for u in urls])
    async with app_client(settings.replace(serve_workers=0)) as client:
        page = (await client.get("/feeds")).text
        assert 'enctype="multipart/form-data"' in page and 'action="/feeds/import"' in page
        assert 'href="/feeds.opml"' in page
        response = await client.post("/feeds/import", files={"opml": ("subs.opml", data, "text/x-opml")})
        assert response.status_code == 303
        page = (await client.get(response.headers["location"])).text
        assert "Imported 3 new feeds, 0 already subscribed." in page
        feeds = (await client.get("/api/feeds")).json()["feeds"]
        assert sorted(f["title"] for f in feeds) == ["Feed 0", "Feed 1", "Feed 2"]
        assert all(f["articles"] == 1 and f["refreshed_at"] for f in feeds)

        export = await client.get("/feeds.opml")
        assert export.status_code == 200
        assert export.headers["content-type"].startswith("text/x-opml")
        assert "attachment" in export.headers["content-disposition"]
        back = parse_opml(export.content)
        assert sorted(f.url for f in back) == sorted(urls)

        again = await client.post("/feeds/import", files={"opml": ("subs.opml", data, "text/x-opml")})
        assert "Imported 0 new feeds, 3 already subscribed." in (await client.get(again.headers["location"])).text
        assert all(pages.hits[f"/f{i}.xml"] == 1 for i in range(3))


async def test_a_large_upload_is_left_to_the_refresher_and_bad_files_are_refused(settings):
    many = [{"url": f"https://feeds{i}.reader.invalid/rss", "title": f"Feed {i}", "site_url": None}
            for i in range(25)]
    async with app_client(settings.replace(serve_workers=0)) as client:
        response = await client.post("/feeds/import", files={"opml": ("many.opml", opml_of(many), "text/xml")})
        assert response.status_code == 303
        page = (await client.get(response.headers["location"])).text
        assert "Imported 25 new feeds" in page and "25 feeds will be fetched by the background refresh" in page
        feeds = (await client.get("/api/feeds")).json()["feeds"]
        assert len(feeds) == 25 and all(f["refreshed_at"] is None for f in feeds)  # nothing fetched in the request
        async with await Store.open(settings.db) as store:
            assert len(await store.feeds_due(0)) == 25  # the refresher's next round takes them

        bomb = await client.post("/feeds/import", files={"opml": ("bomb.opml", LAUGHS.encode(), "text/xml")})
        assert bomb.status_code == 422 and "refused: the file declares a DOCTYPE or entities" in bomb.text
        wrong = await client.post("/feeds/import", files={"opml": ("notes.txt", b"just some notes", "text/plain")})
        # refused with every format the form reads, OPML among them
        assert wrong.status_code == 422 and "notes.txt: a file of another kind, not a format reader can import" in wrong.text
        assert "an OPML list of feeds" in wrong.text and "wallabag" in wrong.text
        missing = await client.post("/feeds/import", data={"other": "x"})
        assert missing.status_code == 422 and "choose a file to import" in missing.text
        assert len((await client.get("/api/feeds")).json()["feeds"]) == 25


async def test_uploading_without_the_csrf_token_is_refused(settings):
    data = opml_of([{"url": "https://example.org/feed", "title": "x", "site_url": None}])
    async with app_client(settings.replace(serve_workers=0), csrf=False) as bare:
        response = await bare.post("/feeds/import", files={"opml": ("subs.opml", data, "text/xml")})
        assert response.status_code == 403
    async with await Store.open(settings.db) as store:
        assert await store.list_feeds() == []


async def test_the_import_report_lists_each_feed_that_failed_and_why(settings, pages):
    good = pages.add("/good.xml", rss([{"title": "Fine", "link": pages.url("/fine.html")}], title="Good feed"),
                     headers=RSS)
    gone = pages.url("/gone.xml")  # the page server answers 404
    words = pages.add("/words.txt", "not a feed at all", content_type="text/plain")
    data = opml_of([{"url": u, "title": t, "site_url": None}
                       for u, t in ((good, ""), (gone, "Gone feed"), (words, "Wordy"))])
    async with app_client(settings.replace(serve_workers=0)) as client:
        response = await client.post("/feeds/import", files={"opml": ("subs.opml", data, "text/x-opml")})
        assert response.status_code == 303
        page = (await client.get(response.headers["location"])).text
        assert "Imported 3 new feeds, 0 already subscribed." in page
        report = page[page.index('class="notice"'):page.index("</div>", page.index('class="notice"'))]
        assert "2 of the new feeds could not be read:" in report
        items = re.findall(r"<li><a href=\"#feed-\d+\">(.*?)</a>: (.*?)</li>", report)
        assert sorted(name for name, _ in items) == ["Gone feed", "Wordy"]
        reasons = dict(items)
        assert reasons["Gone feed"].startswith("the site answered HTTP 404")
        assert reasons["Wordy"]  # why it is not a feed, in the feed parser's words
        assert "Good feed" not in report
        # the plain feeds page (no import just made) carries no report
        assert "could not be read" not in (await client.get("/feeds")).text
