"""Malformed input gets a clear answer and loses nothing: never a 500, never a traceback.

URLs that break a parser further down (brackets that do not close, host labels IDNA
cannot encode, lone surrogates, URLs pages long), JSON nested thousands deep, OPML in an
encoding Python does not know: refused at the door with a 4xx on the web and one line
and a non-zero status on the command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3

import pytest

from reader.errors import Invalid
from reader.fetch import FetchError, fetch, make_client
from reader.formats.importers import ImportFileError
from reader.formats.opml import parse_opml
from reader.store import MIGRATIONS
from reader.urls import check_url

from . import commands
from .helpers import run_cli, subscribe_slugs

BAD_URLS = [
    "http://[::1",
    "http://xn--/",
    "http://a..b/",
    "http://" + "a" * 64 + ".example/",
    "http://example.com/\ud800",
    "http://example.com/" + "a" * 10_000,
]

NESTED = ("[" * 5000 + "]" * 5000).encode()
BOGUS_OPML = (b'<?xml version="1.0" encoding="x-bogus"?>\n'
              b'<opml version="2.0"><body><outline xmlUrl="http://example.com/feed"/></body></opml>')


def json_bytes(value: object) -> bytes:
    """JSON as a client may send it: a lone surrogate spelled as its \\u escape."""
    return json.dumps(value, ensure_ascii=True).encode()


@pytest.mark.parametrize("url", BAD_URLS)
def test_the_url_check_refuses_what_would_break_a_parser_later(url):
    with pytest.raises(Invalid) as caught:
        check_url(url)
    assert caught.value.status == 422 and caught.value.message


@pytest.mark.parametrize("url", ["http://example.com/", "https://bücher.example/a?b=c", "http://[::1]:8000/x",
                                 "HTTP://EXAMPLE.COM/", "http://my_host.example/", "http://xn--bcher-kva.example/"])
def test_the_url_check_keeps_ordinary_urls(url):
    assert check_url(f"  {url} ") == url


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize("path", ["/api/feeds", "/api/articles"])
async def test_a_bad_url_through_the_api_is_a_422_with_the_reason(client, path, url):
    response = await client.post(path, content=json_bytes({"url": url}),
                                 headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert set(response.json()) == {"error"} and response.json()["error"]
    assert (await client.get("/api/feeds")).json() == {"feeds": []}
    assert (await client.get("/api/articles")).json() == {"items": []}


@pytest.mark.parametrize("url", BAD_URLS[:4])
async def test_a_bad_url_in_the_forms_is_a_422_page(client, url):
    subscribe = await client.post("/feeds", data={"url": url})
    assert subscribe.status_code == 422 and "<html" in subscribe.text
    save = await client.post("/save", data={"url": url})
    assert save.status_code == 422 and "<html" in save.text


async def test_a_lone_surrogate_in_a_title_is_stored_as_a_replacement_character(client):
    response = await client.post("/api/articles", content=json_bytes({"url": "http://example.com/a", "title": "x\ud800y"}),
                                 headers={"content-type": "application/json"})
    assert response.status_code == 201, response.text
    assert response.json()["title"] == "x?y"


async def test_a_lone_surrogate_in_a_tag_or_a_folder_is_stored_as_a_replacement_character(client, pages):
    feed_id, [article_id] = await subscribe_slugs(client, pages, ["a"])
    tagged = await client.post(f"/api/articles/{article_id}/tags", content=json_bytes({"tags": ["x\ud800y"]}),
                               headers={"content-type": "application/json"})
    assert tagged.status_code == 200, tagged.text
    assert tagged.json()["tags"] == ["x?y"]
    moved = await client.patch(f"/api/feeds/{feed_id}", content=json_bytes({"folder": "a\ud800b"}),
                               headers={"content-type": "application/json"})
    assert moved.status_code == 200, moved.text
    assert moved.json()["folder"] == "a?b"


@pytest.mark.parametrize("path", ["/api/feeds", "/api/articles", "/api/articles/1/queue"])
async def test_json_nested_thousands_deep_is_a_400(client, path):
    response = await client.post(path, content=NESTED, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert "nested too deeply" in response.json()["error"]


def test_opml_in_an_unknown_encoding_is_an_opml_error():
    with pytest.raises(ImportFileError, match="encoding"):
        parse_opml(BOGUS_OPML)


async def test_uploading_opml_in_an_unknown_encoding_is_a_422_page(client):
    response = await client.post("/feeds/import", files={"opml": ("bogus.opml", BOGUS_OPML, "text/x-opml")})
    assert response.status_code == 422 and "encoding" in response.text
    assert (await client.get("/api/feeds")).json() == {"feeds": []}



def one_line_error(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("reader:")]
    assert len(lines) == 1, err
    return lines[0]


# argv holds no lone surrogate of its own: an undecodable byte becomes one (surrogateescape)
CLI_BAD_URLS: list[str | bytes] = [u for u in BAD_URLS if "\ud800" not in u] + [b"http://example.com/\xff"]


@pytest.mark.parametrize("url", CLI_BAD_URLS)
@pytest.mark.parametrize("command", ["save", "add-feed"])
async def test_the_cli_refuses_a_bad_url_in_one_line_with_status_2(tmp_path, command, url):
    code, out, err = await run_cli(tmp_path / "reader.db", command, url)
    assert code == 2 and out == ""
    one_line_error(err)


async def test_the_cli_refuses_opml_in_an_unknown_encoding_in_one_line(tmp_path):
    bogus = tmp_path / "bogus.opml"
    bogus.write_bytes(BOGUS_OPML)
    for command in ("import-opml", "import"):
        code, out, err = await run_cli(tmp_path / "reader.db", command, str(bogus))
        assert code != 0 and "encoding" in one_line_error(err)


async def test_the_cli_refuses_json_nested_thousands_deep_in_one_line(tmp_path):
    nested = tmp_path / "nested.json"
    nested.write_bytes(b'{"format": ' + NESTED + b"}")
    code, out, err = await run_cli(tmp_path / "reader.db", "import", str(nested))
    assert code != 0 and "nested too deeply" in one_line_error(err)


async def test_the_cli_imports_an_export_with_lone_surrogates(tmp_path):
    export = tmp_path / "articles.json"
    export.write_bytes(json_bytes({
        "format": "reader-export", "version": 1, "feeds": [],
        "articles": [{"url": "http://example.com/s", "title": "a\ud800b", "summary": "<p>c\udfffd</p>",
                      "starred_at": 1.0, "content": {"html": "<p>e\ud800f</p>", "text": "e\ud800f"}}],
    }))
    code, out, err = await run_cli(tmp_path / "reader.db", "import", str(export))
    assert code == 0, err
    assert "1 new articles" in out and "Traceback" not in err


@pytest.mark.parametrize("target", ["http://" + "a" * 64 + ".example/", "http://a..b/"])
async def test_a_redirect_to_a_host_that_cannot_be_looked_up_is_a_fetch_error(pages, target):
    url = pages.add("/away", b"", status=302, headers={"Location": target})
    async with make_client(allow_private=True) as client:
        with pytest.raises(FetchError) as caught:
            await fetch(client, url, max_bytes=10_000, deadline=10)
    assert str(caught.value)


@pytest.mark.parametrize("path", ["/articles/read", "/articles/tags"])
async def test_a_bulk_form_with_ids_that_are_not_numbers_is_a_422_page(client, path):
    page = await client.post(path, data={"ids": "1,two", "tags": "x", "next": "/"})
    assert page.status_code == 422 and "ids must be article ids" in page.text


@pytest.mark.parametrize("body", [{"ids": [1e400]}, {"until": 1e400}, {"ids": [-1e400]}, {"ids": [1.5]},
                                  {"until": float("nan")}])
@pytest.mark.parametrize("method, path", [("POST", "/api/articles/read"), ("DELETE", "/api/articles/read"),
                                          ("POST", "/api/articles/tags")])
async def test_a_number_json_cannot_make_an_integer_of_is_a_422(client, pages, method, path, body):
    """1e400 in JSON is an infinite float: int() of it raised OverflowError, a 500. And an
    id of 1.5 quietly meant article 1."""
    _, (article_id,) = await subscribe_slugs(client, pages, ["one"])
    response = await client.request(method, path, content=json.dumps({"tags": ["x"], **body}),
                                    headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert "must be an integer" in response.json()["error"]
    article = (await client.get(f"/api/articles/{article_id}")).json()
    assert not article["read"] and article.get("tags", []) == []


def _foreign_database(path) -> None:
    """An SQLite file of another program (a browser's history, say)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
        db.execute("INSERT INTO moz_places (url) VALUES ('https://example.org/')")
        db.commit()


def _newer_database(path, empty_database) -> None:
    shutil.copyfile(empty_database, path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")


@pytest.mark.parametrize("command", [["stats"], ["save", "https://example.org/a"], ["export", "--out", "out"],
                                     ["worker"], ["check"], ["serve", "--port", "0"]])
async def test_another_programs_sqlite_file_is_refused_and_left_as_it_was(tmp_path, command):
    """`--db` naming any SQLite file got reader's twenty tables added to it, and its
    journal switched to WAL; one with a table named like reader's was a traceback."""
    foreign = tmp_path / "places.sqlite"
    _foreign_database(foreign)
    before = foreign.read_bytes()
    code, out, err = await run_cli(foreign, *command, cwd=tmp_path)
    assert code == 2 and "another program" in one_line_error(err)
    assert foreign.read_bytes() == before and not (tmp_path / "out").exists()
    assert not foreign.with_name("places.sqlite-wal").exists()


@pytest.mark.parametrize("command", [["stats"], ["export", "--out", "out"], ["check"]])
async def test_a_database_made_by_a_newer_reader_is_refused_in_one_line(tmp_path, empty_database, command):
    newer = tmp_path / "reader.db"
    _newer_database(newer, empty_database)
    code, out, err = await run_cli(newer, *command, cwd=tmp_path)
    assert code == 2 and "newer than this reader" in one_line_error(err)


async def test_a_file_that_is_no_database_is_refused_in_one_line_and_export_gives_up_at_once(tmp_path):
    """A text file as --db was a traceback; `export` then stepped through a million ids
    a table looking for rows (100 s) to save nothing."""
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    for command in (["stats"], ["save", "https://example.org/a"], ["worker"]):
        code, out, err = await run_cli(text, *command)
        assert code == 2 and "not a database" in one_line_error(err), command
    code, out, err = await run_cli(text, "export", "--out", str(tmp_path / "out"))
    assert code == 1 and "Traceback" not in err and "nothing can be read" in err
    assert text.read_text() == "not a database\n" * 100


@pytest.mark.parametrize("where", ["a directory", "a missing directory"])
async def test_a_database_path_that_cannot_be_a_file_is_refused_in_one_line(tmp_path, where):
    db = tmp_path / "adir" if where == "a directory" else tmp_path / "missing" / "reader.db"
    if where == "a directory":
        db.mkdir()
    for command in (["stats"], ["save", "https://example.org/a"], ["import", str(tmp_path)]):
        code, out, err = await run_cli(db, *command)
        assert code == 2 and str(db.parent if where != "a directory" else db) in one_line_error(err), command


@pytest.mark.parametrize("command", [["reclean", "99999999999999999999"], ["worker", "--concurrency", "0"],
                                     ["worker", "--concurrency", "-1"], ["serve", "--port", "99999"],
                                     ["serve", "--port", "-1"]])
async def test_numbers_out_of_range_on_the_command_line_are_a_usage_error(tmp_path, command):
    """An id past 64 bits and a port past 65535 were tracebacks; a worker of concurrency
    0 ran forever taking nothing."""
    code, out, err = await run_cli(tmp_path / "reader.db", *command)
    assert code == 2 and "Traceback" not in err and "is not between" in err


async def test_a_pipe_or_a_device_given_as_a_file_is_refused_not_read_forever(tmp_path):
    """`reader import /dev/zero` read until memory ran out; a named pipe nobody writes to
    blocked the command at its open, for ever."""
    fifo = tmp_path / "pocket-export.csv"
    os.mkfifo(fifo)
    for args in (["import", str(fifo)], ["import", "/dev/zero"], ["import-opml", str(fifo)]):
        code, out, err = await run_cli(tmp_path / "reader.db", *args)
        assert code != 0 and "not a regular file" in one_line_error(err), args
    for name in (str(fifo), "/dev/zero"):
        done = await commands.run_async(["clean", name], timeout=60)
        assert done.returncode == 1 and b"not a regular file" in done.stderr and b"Traceback" not in done.stderr


async def test_a_title_with_characters_xml_cannot_carry_leaves_the_opml_export_readable(client, pages, tmp_path):
    """A feed's name or folder holding a control character (a feed's own title, or one
    typed in) was written into the OPML as it was: /feeds.opml and `reader export` were
    not XML, and importing reader's own export failed whole."""
    feed_id, _ = await subscribe_slugs(client, pages, ["one"])
    odd = "News\x01 of\x0b the\ufffe day\uffff"
    response = await client.patch(f"/api/feeds/{feed_id}", json={"title": odd, "folder": "Daily\x1f"})
    assert response.status_code == 200, response.text
    exported = await client.get("/feeds.opml")
    assert exported.status_code == 200
    skipped: list[str] = []
    feeds = parse_opml(exported.content, refused=skipped)
    assert [f.title for f in feeds] == ["News of the day"] and not skipped
    assert b'<outline text="Daily" title="Daily">' in exported.content
