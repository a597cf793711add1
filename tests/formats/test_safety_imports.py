"""Imports under attack, second pass (issue 26): files other readers write in encodings
expat cannot read itself, text fields holding lone surrogates, and exports far larger than
any library.

Each file here is made as the app that writes it would make it, and goes through the
parser and through `reader import` / `reader import-opml` as a process of its own."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import sqlite3
import tracemalloc
import zipfile

import pytest

from reader.core import imports
from reader.errors import Invalid
from reader.settings import Settings
from reader.store import Store
from reader.formats.importers import ImportFileError, ImportReport, parse_file
from reader.formats.opml import parse_opml

from ..helpers import run_cli, wait_for
from ..importfiles import library

# Feed titles as Japanese and Chinese feed readers write them, and the folder around them
TITLES = {
    "shift_jis": ("日本語のニュース", "技術"),
    "euc-jp": ("はてなブックマーク", "日記"),
    "gb2312": ("中文新闻", "科技"),
    "big5": ("中文新聞", "科技"),
    "utf-7": ("日本語とEnglish", "フォルダ"),
}


def opml_in(encoding: str, title: str, folder: str) -> bytes:
    document = (f'<?xml version="1.0" encoding="{encoding}"?>\n'
                f'<opml version="2.0"><head><title>{title}</title></head><body>\n'
                f'<outline text="{folder}">\n'
                f'  <outline type="rss" text="{title}" xmlUrl="http://example.com/{encoding}.xml"'
                f' htmlUrl="http://example.com/"/>\n'
                f'</outline></body></opml>\n')
    data = document.encode(encoding)
    assert title.encode("utf-8") not in data  # really written in that encoding, not UTF-8
    return data


@pytest.mark.parametrize("encoding", TITLES)
def test_opml_in_a_multi_byte_encoding_is_read_with_its_titles(encoding):
    title, folder = TITLES[encoding]
    data = opml_in(encoding, title, folder)
    refused: list[str] = []
    feeds = parse_opml(data, "feeds.opml", ImportReport(), refused)
    assert [(f.url, f.title, f.folder) for f in feeds] == [(f"http://example.com/{encoding}.xml", title, (folder,))]
    assert not refused


def test_opml_that_is_not_what_its_declared_encoding_says_is_refused_with_the_reason():
    data = b'<?xml version="1.0" encoding="shift_jis"?><opml version="2.0"><body>' \
           b'<outline text="\xff\xff" xmlUrl="http://example.com/feed"/></body></opml>'
    with pytest.raises(ImportFileError, match="shift_jis"):
        parse_opml(data, "feeds.opml", ImportReport())


def test_a_doctype_hidden_in_utf7_is_still_refused():
    # "+ADw-" is "<" in UTF-7: a reader that checked the bytes before decoding would miss it
    data = (b'<?xml version="1.0" encoding="utf-7"?>+ADw-!DOCTYPE opml [+ADw-!ENTITY a "b"+AD4-]+AD4-'
            b'<opml version="2.0"><body><outline text="&a;" xmlUrl="http://example.com/feed"/></body></opml>')
    with pytest.raises(ImportFileError, match="DOCTYPE"):
        parse_opml(data, "feeds.opml", ImportReport())


@pytest.mark.parametrize("command", ["import-opml", "import"])
async def test_the_cli_imports_opml_in_multi_byte_encodings_with_their_titles(tmp_path, command):
    db = tmp_path / "reader.db"
    for encoding, (title, folder) in TITLES.items():
        path = tmp_path / f"{encoding}.opml"
        path.write_bytes(opml_in(encoding, title, folder))
        code, out, err = await run_cli(db, command, str(path))
        assert code == 0 and "Traceback" not in err, err
    code, out, err = await run_cli(db, "export-opml")
    assert code == 0, err
    written = parse_opml(out.encode(), "export", ImportReport())
    assert {(f.url, f.title, f.folder) for f in written} == {
        (f"http://example.com/{encoding}.xml", title, (folder,)) for encoding, (title, folder) in TITLES.items()}


async def test_uploading_opml_in_shift_jis_subscribes_with_its_titles(client):
    title, folder = TITLES["shift_jis"]
    response = await client.post("/feeds/import", files={"opml": ("feeds.opml", opml_in("shift_jis", title, folder),
                                                                  "text/x-opml")})
    assert response.status_code < 400, response.text
    feeds = (await client.get("/api/feeds")).json()["feeds"]
    assert [(f["url"], f["title"]) for f in feeds] == [("http://example.com/shift_jis.xml", title)]


# -- lone surrogates in JSON exports --------------------------------------------------------

BAD = "a\ud800b"  # JSON can spell a lone surrogate ("\ud800"); UTF-8, SQLite and nh3 cannot hold one
CLEAN = "a?b"  # what the API stores for it (reader.clean.sanitize.valid_text)


def json_bytes(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=True).encode()  # the surrogate as its \\u escape


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def wallabag() -> bytes:
    return json_bytes([
        {"is_archived": 0, "is_starred": 1, "url": "https://example.org/wallabag", "title": f"title {BAD}",
         "tags": [f"tag {BAD}", {"label": f"label {BAD}"}], "created_at": "2024-01-01T00:00:00+0000",
         "published_by": [f"author {BAD}"], "content": f"<p>text {BAD}</p>",
         "annotations": [{"quote": f"quote {BAD}", "text": f"note {BAD}"}]},
        {"is_archived": 0, "url": f"https://example.org/{BAD}", "title": "an address with a surrogate"},
        {"is_archived": 0, "is_starred": 0, "url": "https://example.org/after", "title": "the one after",
         "created_at": "2024-01-02T00:00:00+0000", "content": ""},
    ])


def omnivore_metadata(url: str = "https://example.org/omnivore") -> list[dict]:
    return [
        {"id": "1", "slug": "the-slug", "url": url, "title": f"title {BAD}", "labels": [f"tag {BAD}"],
         "description": f"summary {BAD}", "author": f"author {BAD}", "state": "Active",
         "savedAt": "2024-01-01T00:00:00.000Z"},
        {"id": "2", "slug": "after", "url": "https://example.org/after", "title": "the one after", "state": "Active",
         "savedAt": "2024-01-02T00:00:00.000Z"},
    ]


def pocket_zip() -> bytes:
    return zipped({
        "part_000000.csv": b"title,url,time_added,tags,status\nPocket link,https://example.org/pocket,1700000000,,unread\n"
                           b"After,https://example.org/after,1700000001,,unread\n",
        "annotations/part_000000.json": json_bytes([
            {"url": "https://example.org/pocket", "title": "Pocket link",
             "highlights": [{"quote": f"quote {BAD}", "created_at": 1700001000}]},
            {"url": "https://example.org/highlighted", "title": f"title {BAD}",
             "highlights": [{"quote": f"quote {BAD}", "created_at": 1700001000}]},
        ]),
    })


SURROGATE_FILES = {
    "wallabag.json": wallabag,
    "metadata_0_to_2.json": lambda: json_bytes(omnivore_metadata()),
    "omnivore.zip": lambda: zipped({
        "metadata_0_to_2.json": json_bytes(omnivore_metadata()),
        "content/the-slug.html": "<p>text a\ufffdb</p>".encode(),
        "highlights/the-slug.md": b"> a highlight\n\nmy note\n",
    }),
    "pocket.zip": pocket_zip,
}


async def _finished(client, location: str) -> str | None:
    """The import's page once it says the import is over (it reloads itself until then)."""
    page = (await client.get(location)).text
    return None if 'http-equiv="refresh"' in page else page


def no_surrogate(value: object) -> None:
    text = json.dumps(value, ensure_ascii=False, default=lambda v: sorted(v) if isinstance(v, set) else str(v))
    text.encode("utf-8")  # raises on a lone surrogate anywhere


@pytest.mark.parametrize("name", SURROGATE_FILES)
def test_every_text_field_a_json_importer_reads_replaces_a_lone_surrogate(name):
    parsed = parse_file(SURROGATE_FILES[name](), name)
    assert parsed.links and "https://example.org/after" in {link.url for link in parsed.links}
    for link in parsed.links:
        no_surrogate([link.title, link.tags, link.author, link.summary, link.content_html,
                      [(n.text, n.comment) for n in link.notes], link.folder])
    text = json.dumps([[link.title, sorted(link.tags), link.author, link.summary, link.content_html,
                        [(n.text, n.comment) for n in link.notes]] for link in parsed.links], ensure_ascii=False)
    assert CLEAN in text
    if name == "wallabag.json":  # an address cannot be mended: that row is skipped, saying why
        assert [i.where for i in parsed.report.skipped] == ["entry 2"]
        assert "lone surrogate" in parsed.report.skipped[0].reason


@pytest.mark.parametrize("name", SURROGATE_FILES)
async def test_the_cli_imports_json_exports_with_lone_surrogates_whole(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(SURROGATE_FILES[name]())
    code, out, err = await run_cli(tmp_path / "reader.db", "import", str(path))
    assert code == 0 and "Traceback" not in err, err
    found = await library(tmp_path / "reader.db")
    assert "https://example.org/after" in found  # the rows after the bad one came in too
    for article in found.values():
        no_surrogate([article["title"], article["tags"], [dict(n) for n in article["notes"]], article["content"]])
    if name != "pocket.zip":
        [article] = [a for url, a in found.items() if url != "https://example.org/after"]
        assert article["title"] == f"title {CLEAN}" and f"tag {CLEAN}" in article["tags"]


async def test_uploading_a_wallabag_export_with_lone_surrogates_imports_it_whole(client):
    response = await client.post("/feeds/import", files={"file": ("wallabag.json", wallabag(), "application/json")})
    assert response.status_code == 303, response.text
    page = await wait_for(lambda: _finished(client, response.headers["location"]))
    assert "the import stopped" not in page and "Done (wallabag)" in page, page
    assert response.status_code < 400, response.text
    titles = {a["title"] for a in (await client.get("/api/articles")).json()["items"]}
    assert titles >= {f"title {CLEAN}", "the one after"}


# -- big files: batches, a cap, one at a time, a stop ------------------------------------------

def pocket_csv(rows: int, start: int = 0) -> bytes:
    return ("title,url,time_added,tags,status\n" + "".join(
        f"Link {i},https://example.org/{i},{1_600_000_000 + i},bulk,unread\n" for i in range(start, start + rows))
    ).encode()


def pocket_zip_of(rows: int) -> bytes:
    return zipped({"part_000000.csv": pocket_csv(rows)})


async def saved_links(db) -> int:
    async with await Store.open(db) as store:
        return len(await store.list_articles(limit=10_000_000))


def test_the_cap_on_links_per_import_is_a_setting():
    assert Settings().max_import_links == 100_000
    assert Settings.from_env({"READER_MAX_IMPORT_LINKS": "5"}).max_import_links == 5


async def test_an_export_past_the_cap_brings_in_its_first_links_and_says_so(settings):
    parsed = imports.parse(pocket_zip_of(2_500), "pocket.zip")
    async with await Store.open(settings.db) as store:
        outcome = await imports.apply(store, parsed, max_links=1_000)
    assert outcome.new == 1_000 and not outcome.stopped
    [note] = [n for n in outcome.notes if "READER_MAX_IMPORT_LINKS" in n]
    assert "more than 1,000 links" in note and "the rest were left out" in note
    assert await saved_links(settings.db) == 1_000


async def _peak_of_an_import(db, rows: int) -> int:
    data = pocket_zip_of(rows)
    tracemalloc.start()
    try:
        async with await Store.open(db) as store:
            parsed = await asyncio.to_thread(imports.parse, data, "pocket.zip")
            outcome = await imports.apply(store, parsed, max_links=10 * rows)
        assert outcome.new == rows
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def test_an_imports_memory_holds_a_batch_not_every_row(tmp_path, empty_database):
    """Every row used to be held as records and then as the store's form at once (about
    1,100 bytes a row: a million rows took a server to 940 MB); now a batch is, and what
    stays per row is the file's own text and the normalized URL that merges duplicates."""
    peaks = {}
    for rows in (5_000, 20_000):
        db = tmp_path / f"{rows}.db"
        shutil.copyfile(empty_database, db)
        peaks[rows] = await _peak_of_an_import(db, rows)
    per_row = (peaks[20_000] - peaks[5_000]) / 15_000
    assert per_row < 400, (peaks, per_row)


async def test_imports_take_turns_and_the_one_waiting_says_so(settings):
    first, second = imports.ImportJob(id=1, name="first.zip"), imports.ImportJob(id=2, name="second.zip")
    third = imports.ImportJob(id=3, name="third.zip")
    async with await Store.open(settings.db) as store:
        blocker = sqlite3.connect(settings.db, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another writer: the first import cannot store yet
        try:
            running = asyncio.ensure_future(imports.apply(store, imports.parse(pocket_zip_of(3_000), "a"), job=first))
            await wait_for(lambda: first.total == 3_000)
            waiting = asyncio.ensure_future(imports.apply(store, imports.parse(pocket_csv(10, 5_000), "b"), job=second))
            told_to_stop = asyncio.ensure_future(imports.apply(store, imports.parse(pocket_csv(10), "c"), job=third))
            await wait_for(lambda: second.waiting and third.waiting)
            assert second.status == "waiting for the import before it" and second.total is None
            imports.stop_imports([third])  # a job told to stop while it waits leaves the line
            with pytest.raises(Invalid, match="nothing was stored"):
                await told_to_stop
            assert not running.done() and second.waiting
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        first.outcome = await running
        second.outcome = await waiting
    assert first.outcome.new == 3_000 and second.outcome.new == 10
    assert not second.waiting and second.status == "10 of 10 links stored"


async def test_a_stopped_import_ends_at_a_batch_and_importing_again_adds_no_copies(settings):
    data = pocket_zip_of(30_000)
    job = imports.ImportJob(id=1, name="pocket.zip")
    async with await Store.open(settings.db) as store:
        started = asyncio.ensure_future(imports.apply(store, imports.parse(data, "pocket.zip"), job=job))
        await wait_for(lambda: job.done > 0, interval=0.002)
        imports.stop_imports([job])
        outcome = await started
        assert outcome.stopped and 0 < outcome.new < 30_000 and outcome.new % imports.BATCH == 0
        [note] = [n for n in outcome.notes if "stopped" in n]
        assert f"after {outcome.new:,} of 30,000 links" in note
        assert await saved_links(settings.db) == outcome.new
        again = await imports.apply(store, imports.parse(data, "pocket.zip"))
    assert again.new == 30_000 - outcome.new and again.merged == outcome.new and not again.stopped
    assert await saved_links(settings.db) == 30_000
