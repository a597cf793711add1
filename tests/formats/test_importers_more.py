"""More files people move in with: the JSON that browsers keep (Chrome's `Bookmarks`,
Firefox's backup), Pinboard's and Delicious' JSON exports and wallabag v1's. Each is read
from a sample written in the shape the app writes (tests/fixtures/import: several folders,
tags, dates in the app's own clock, a duplicate with utm_* parameters, bad rows), told
apart by content whatever the file is called, and imported through Reader.import_data into
a real database file; hostile versions are cut down to size or refused, never a traceback."""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings
from hypothesis import strategies as st

from reader.core import running
from reader.errors import Invalid
from reader.formats.importers import FORMATS, ImportFileError, Note, detect_format, parse_file
from reader.formats.importers.base import BadDate, Ticks, parse_time
from reader.formats.importers.bookmarkjson import CHROME_EPOCH
from reader.store import Store

from ..importfiles import library

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "import"
NEW = {"chrome-Bookmarks": "chrome", "firefox-bookmarks.json": "firefox", "pinboard.json": "pinboard",
       "delicious.json": "delicious", "wallabag-v1.json": "wallabag-v1"}


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def utc(text: str) -> float:
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC).timestamp()


def by_url(parsed):
    return {link.url: link for link in parsed.links}


def reasons(parsed) -> dict[str, tuple[str, bool]]:
    return {issue.where: (issue.reason, issue.kept) for issue in parsed.report.issues}


# -- Chrome -------------------------------------------------------------------------------


def test_chrome_bookmarks_folders_become_tags_and_its_roots_do_not():
    parsed = parse_file(fixture("chrome-Bookmarks"), "Bookmarks")
    assert parsed.format == "chrome"
    links = by_url(parsed)
    assert list(links) == ["https://sea.example/tides", "https://essays.example/slow-web?id=3",
                           "https://essays.example/letters", "https://food.example/bread", "https://food.example/soup",
                           "https://m.example/phone"]
    tides = links["https://sea.example/tides"]
    # microseconds since 1601-01-01, not since 1970
    assert tides.added_at == pytest.approx(utc("2021-03-04T05:06:07.123456"), abs=1e-5)
    # The bookmarks bar's own name (in German here) is no tag, nor is "Weitere Lesezeichen"
    assert tides.tags == set() and tides.folder == () and tides.title == "Tide tables"
    letters = links["https://essays.example/letters"]
    assert letters.folder == ("Reading", "Long reads") and letters.tags == {"Reading", "Long reads"}
    # Again under Other bookmarks, with utm_* parameters and saved earlier: merged, the
    # earlier time kept, the first one's title and folder kept
    slow = links["https://essays.example/slow-web?id=3"]
    assert slow.title == "The slow web" and slow.folder == ("Reading",) and slow.tags == {"Reading"}
    assert slow.added_at == pytest.approx(utc("2019-06-01T08:00:00.123456"), abs=1e-5)
    assert links["https://food.example/bread"].tags == {"Recipes"}
    assert links["https://food.example/bread"].added_at is None
    assert links["https://food.example/soup"].added_at is None  # out of any range: kept without it
    assert links["https://m.example/phone"].added_at is None and links["https://m.example/phone"].tags == set()
    assert not any(link.read or link.starred for link in parsed.links)  # a browser knows nothing of reading
    assert reasons(parsed) == {
        "bookmark 4": ("not an http(s) URL: javascript:location.href='https://reader.example/save?url='"
                       "+encodeURIComponent(location.href)", False),
        "bookmark 5": ("not an http(s) URL: chrome://settings/", False),
        "bookmark 6": ("the same link as bookmark 2: merged into it", True),
        "bookmark 7": ("the time added is not a date we can read ('not a number'): kept without it", True),
        "bookmark 8": ("the time added is not a date we can read ('99999999999999999999'): kept without it", True),
        "bookmark 9": ("not a bookmark (not a JSON object)", False),
        "bookmark 10": ("neither a bookmark nor a folder (type 'workspace')", False),
    }


def test_ticks_are_read_in_their_own_unit_and_from_their_own_zero():
    chrome_2020 = str(int((utc("2020-01-01T00:00:00") - CHROME_EPOCH) * 1_000_000))
    assert parse_time(Ticks(chrome_2020, 1e6, CHROME_EPOCH)) == utc("2020-01-01T00:00:00")
    assert parse_time(Ticks(1_600_000_000_000_000, 1e6)) == 1_600_000_000
    # Read as a bare number it would be taken for Unix microseconds: 1651 for 2020
    assert parse_time("1600000000000000") == 1_600_000_000
    with pytest.raises(BadDate):
        parse_time(Ticks("1600000000000000", 1e6, CHROME_EPOCH))
    for nothing in (None, "", "0", 0):
        assert parse_time(Ticks(nothing)) is None
    for bad in ("12ab", True, [1], {"a": 1}, 10**400, float("nan"), float("inf"), -5, "99999999999999999999"):
        with pytest.raises(BadDate):
            parse_time(Ticks(bad, 1e6, CHROME_EPOCH))
    assert str(Ticks("13118850929335823", 1e6, CHROME_EPOCH)) == "13118850929335823"


# -- Firefox ------------------------------------------------------------------------------


def test_firefox_backup_folders_tags_and_descriptions():
    parsed = parse_file(fixture("firefox-bookmarks.json"), "bookmarks-2024-01-01.json")
    assert parsed.format == "firefox"
    links = by_url(parsed)
    assert list(links) == ["https://food.example/soup", "https://food.example/bread", "https://news.example/",
                           "https://papers.example/p.pdf", "https://m.example/"]
    soup = links["https://food.example/soup"]
    # Its own tags (joined by commas) and its folder; the toolbar copy (utm_*, a fragment)
    # merged in with its tag, the earlier time kept; the menu itself is no tag
    assert soup.tags == {"soup", "winter", "Cooking", "dinner"} and soup.folder == ("Cooking",)
    assert soup.title == "Soup for winter"
    assert soup.added_at == pytest.approx(utc("2021-12-24T12:00:00.654321"), abs=1e-5)
    bread = links["https://food.example/bread"]
    assert bread.folder == ("Cooking", "Baking") and bread.tags == {"Cooking", "Baking"}
    assert bread.title == "Bread, slowly"
    news = links["https://news.example/"]
    # An older backup's tags folder: its tag folders are tags, not links, not folders
    assert news.tags == {"favourite"} and news.folder == ()
    paper = links["https://papers.example/p.pdf"]
    assert paper.notes == [Note("A paper to print and read on the train")] and paper.added_at is None
    assert links["https://m.example/"].tags == set()  # the mobile root is no tag either
    assert not any(link.read for link in parsed.links)
    # The separator is no row; a smart bookmark (place:) and a bookmarklet are skipped
    assert reasons(parsed) == {
        "bookmark 3": ("not an http(s) URL: place:type=6&sort=14&maxResults=10", False),
        "bookmark 5": ("the same link as bookmark 1: merged into it", True),
        "bookmark 6": ("not an http(s) URL: javascript:alert(1)", False),
        "bookmark 7": ("the time added is not a date we can read ('-5'): kept without it", True),
        "bookmark 9": ("neither a bookmark nor a folder (type 'text/x-moz-place-unknown')", False),
    }


def test_firefox_compressed_backup_is_refused_saying_what_to_do():
    with pytest.raises(ImportFileError, match=r"bookmarks\.jsonlz4: one of Firefox's compressed .*Backup…"):
        parse_file(b"mozLz40\x00\x8a\x02\x00\x00\xf0\x1b{\"guid\":\"root________\"", "bookmarks.jsonlz4")


# -- Pinboard and Delicious ---------------------------------------------------------------


def test_pinboard_json_toread_is_unread_and_the_rest_was_read():
    parsed = parse_file(fixture("pinboard.json"), "pinboard_export")
    assert parsed.format == "pinboard"
    links = by_url(parsed)
    assert list(links) == ["https://pin.example/unread", "https://pin.example/read", "https://pin.example/when"]
    unread = links["https://pin.example/unread"]
    assert not unread.read and unread.title == "Still to read" and unread.tags == {"web", "later"}
    assert unread.added_at == utc("2020-01-02T03:04:05") and unread.notes == []
    read = links["https://pin.example/read"]
    # "extended" is the person's description: a note; the duplicate (utm_*) merged in,
    # read stays read, its tag and earlier time joined
    assert read.read and read.notes == [Note("My notes on it:\nworth a second look.")]
    assert read.tags == {"notes", "dup"} and read.added_at == utc("2018-01-01T00:00:00")
    assert links["https://pin.example/when"].tags == {"spaced", "out"}  # runs of spaces split once
    assert reasons(parsed) == {
        "bookmark 3": ("the same link as bookmark 2: merged into it", True),
        "bookmark 4": ("not an http(s) URL: mailto:someone@pin.example", False),
        "bookmark 5": ("the time added is not a date we can read ('the day before yesterday'): kept without it",
                       True),
        "bookmark 6": ("not a bookmark (not a JSON object)", False),
    }


def test_pinboard_json_without_toread_marks_nothing_read():
    data = json.dumps([{"href": "https://pin.example/a", "description": "A", "extended": "", "tags": ""}]).encode()
    parsed = parse_file(data, "p.json")
    assert parsed.format == "pinboard" and not parsed.links[0].read


def test_delicious_json_tags_descriptions_and_dates():
    parsed = parse_file(fixture("delicious.json"), "delicious_export.2021.02.06_21.10.json")
    assert parsed.format == "delicious"
    links = by_url(parsed)
    assert list(links) == ["https://del.example/loader", "https://del.example/review", "https://del.example/date"]
    loader = links["https://del.example/loader"]
    assert loader.title == "A script loader that caches" and loader.tags == {"javascript", "loader", "cache"}
    assert loader.notes == [Note('"Caches scripts in localStorage"')] and loader.added_at == 1358000000
    assert not loader.read and not loader.starred
    review = links["https://del.example/review"]
    assert review.tags == set() and review.added_at == 1358457437 and review.notes == []
    assert links["https://del.example/date"].added_at is None
    assert reasons(parsed) == {
        "bookmark 3": ("the same link as bookmark 1: merged into it", True),
        "bookmark 4": ("not an http(s) URL: ftp://del.example/file", False),
        "bookmark 5": ("the time added is not a date we can read ('13585316070000000000000'): kept without it",
                       True),
    }


# -- wallabag v1 --------------------------------------------------------------------------


def test_wallabag_v1_content_states_and_unfetched_pages():
    parsed = parse_file(fixture("wallabag-v1.json"), "wallabag-export-1-2016-01-01.json")
    assert parsed.format == "wallabag-v1"
    links = by_url(parsed)
    assert list(links) == ["https://hist.example/printing", "https://hist.example/unfetched",
                           "https://hist.example/sans-titre"]
    printing = links["https://hist.example/printing"]
    assert printing.title == "Printing in the fifteenth century"
    assert printing.starred and printing.read  # starred in one row, read in its duplicate
    assert printing.tags == {"history", "long reads", "press"}  # tags joined by commas in one string
    # The saved text, through the one cleaner: no script, no handler, no frame, links absolute
    html = printing.content_html
    assert "every copy was made <em>by hand</em>" in html
    assert "<script" not in html and "onerror" not in html and "iframe" not in html
    assert 'src="https://hist.example/press.jpg"' in html
    assert printing.added_at is None  # v1 wrote no dates
    # "Untitled" (or its French) was v1's mark of a page it could not fetch: its text is an apology
    for url in ("https://hist.example/unfetched", "https://hist.example/sans-titre"):
        assert links[url].title == "" and links[url].content_html is None
    assert links["https://hist.example/sans-titre"].read and links["https://hist.example/sans-titre"].tags == {"fr"}
    assert parsed.report.notes == ["wallabag v1 exports hold no dates: the links come in as saved now"]
    assert reasons(parsed) == {
        "entry 3": ("the same link as entry 1: merged into it", True),
        "entry 4": ("not an http(s) URL: javascript:void(0)", False),
        "entry 6": ("not an entry (not a JSON object)", False),
    }


def test_wallabag_v1_tags_as_a_list_of_labels_and_flags_of_other_types():
    data = json.dumps([
        {"url": "https://a.example/", "title": "A", "is_read": 1, "is_fav": True, "tags": [{"label": "x"}, "y", 5]},
        {"url": "https://b.example/", "title": "B", "is_read": [1], "is_fav": "no", "tags": 7, "content": 3},
    ]).encode()
    links = by_url(parse_file(data, "w.json"))
    a, b = links["https://a.example/"], links["https://b.example/"]
    assert a.read and a.starred and a.tags == {"x", "y"}
    assert not b.read and not b.starred and b.tags == set() and b.content_html is None


# -- detection and the report -------------------------------------------------------------


@pytest.mark.parametrize(("name", "kind"), NEW.items())
@pytest.mark.parametrize("misleading", ["bookmarks.html", "pocket.csv", "wallabag.json", "Bookmarks", "x"])
def test_format_is_told_by_content_not_by_name(name, kind, misleading):
    assert detect_format(fixture(name), misleading) == kind
    assert parse_file(fixture(name), misleading).format == kind


@pytest.mark.parametrize("name", ["wallabag.json", "omnivore/metadata_0_to_3.json"])
def test_the_older_json_formats_are_still_told_apart(name):
    assert detect_format(fixture(name)) == {"wallabag.json": "wallabag"}.get(name, "omnivore")


@pytest.mark.parametrize("name", NEW)
def test_every_row_is_accounted_for(name):
    parsed = parse_file(fixture(name), name)
    report = parsed.report
    assert report.rows == len(parsed.links) + report.merged + report.skipped_rows
    assert report.skipped_rows == len(report.skipped) and report.merged == 1 and report.skipped


def test_the_refusal_lists_the_new_formats():
    with pytest.raises(ImportFileError) as caught:
        parse_file(b'{"roots": {"elsewhere": {}}, "version": 1}', "odd.json")
    message = str(caught.value)
    assert message.startswith("odd.json: a JSON file of another shape, not a format reader can import")
    for key in NEW.values():
        assert FORMATS[key] in message


# -- hostile files ------------------------------------------------------------------------


def chrome_nested(depth: int) -> bytes:
    """Written as text: json.dumps itself recurses, and gives up long before 100,000."""
    leaf = '{"type": "url", "name": "deep", "url": "https://deep.example/", "date_added": "0"}'
    tree = '{"type": "folder", "name": "f", "children": [' * depth + leaf + "]}" * depth
    return ('{"roots": {"bookmark_bar": {"type": "folder", "name": "Bar", "children": [' + tree
            + ']}}, "version": 1}').encode()


def firefox_nested(depth: int) -> bytes:
    leaf = '{"type": "text/x-moz-place", "title": "deep", "uri": "https://deep.example/"}'
    tree = '{"type": "text/x-moz-place-container", "title": "f", "children": [' * depth + leaf + "]}" * depth
    return ('{"guid": "root________", "type": "text/x-moz-place-container", "root": "placesRoot", "children": ['
            + tree + "]}").encode()


@pytest.mark.parametrize("nested", [chrome_nested, firefox_nested])
def test_deep_folders_are_walked_without_recursion_and_deeper_files_refused(nested):
    # as deep as the JSON reader goes (two levels a folder): the link comes in, 32 folders kept
    link = parse_file(nested(300), "deep.json").links[0]
    assert link.url == "https://deep.example/" and len(link.folder) == 32 and link.tags == {"f"}
    with pytest.raises(ImportFileError, match="nested too deeply"):
        parse_file(nested(100_000), "deeper.json")


def test_wrong_types_everywhere_in_a_chrome_file():
    data = json.dumps({"roots": {
        "bookmark_bar": {"type": "folder", "name": 5, "children": "not a list"},
        "other": {"type": "folder", "children": [
            {"type": "folder", "name": ["x"], "children": [{"type": "url", "url": "https://a.example/", "name": 3,
                                                            "date_added": {"a": 1}}]},
            {"type": "folder", "name": "ok", "children": None},
            {"type": "url", "url": ["https://b.example/"], "name": "b"},
            {"type": "url", "name": "no url"},
            {"type": "url", "url": "https://c.example/", "date_added": True},
            None,
        ]},
        "synced": "not a folder",
    }, "version": "one"}).encode()
    parsed = parse_file(data, "Bookmarks")
    links = by_url(parsed)
    assert set(links) == {"https://a.example/", "https://c.example/"}
    a = links["https://a.example/"]
    assert a.title == "" and a.tags == set() and a.folder == () and a.added_at is None
    assert reasons(parsed) == {
        "bookmark 1": ("the time added is not a date we can read (\"{'a': 1}\"): kept without it", True),
        "bookmark 2": ("no URL", False), "bookmark 3": ("no URL", False),
        "bookmark 4": ("the time added is not a date we can read ('True'): kept without it", True),
        "bookmark 5": ("not a bookmark (not a JSON object)", False),
    }
    assert parsed.report.rows == 5 and len(parsed.report.skipped) == 3


def test_wrong_types_everywhere_in_a_firefox_backup():
    data = json.dumps({"type": "text/x-moz-place-container", "root": "placesRoot", "children": [
        {"type": "text/x-moz-place-container", "title": None, "children": [
            {"type": "text/x-moz-place", "uri": "https://a.example/", "title": 7, "tags": 5, "annos": "x",
             "dateAdded": "soon"},
            {"type": "text/x-moz-place", "uri": 12},
            {"type": "text/x-moz-place", "uri": "https://b.example/", "tags": ["x", 1], "dateAdded": 1e300,
             "annos": [None, {"name": "bookmarkProperties/description", "value": 5}]},
        ]},
        {"guid": "tags________", "type": "text/x-moz-place-container", "children": [
            "x", {"type": "text/x-moz-place-container", "title": "t", "children": [{"uri": 5}, 3]}]},
        {"type": "text/x-moz-place-container", "children": {"not": "a list"}},
    ]}).encode()
    parsed = parse_file(data, "backup.json")
    links = by_url(parsed)
    assert set(links) == {"https://a.example/", "https://b.example/"}
    assert links["https://a.example/"].title == "" and links["https://a.example/"].tags == set()
    assert links["https://b.example/"].tags == {"x"} and links["https://b.example/"].notes == []
    assert reasons(parsed) == {
        "bookmark 1": ("the time added is not a date we can read ('soon'): kept without it", True),
        "bookmark 2": ("no URL", False),
        "bookmark 3": ("the time added is not a date we can read ('1e+300'): kept without it", True),
    }


def test_wrong_types_in_pinboard_and_delicious_files():
    pinboard = json.dumps([{"href": "https://a.example/", "description": ["t"], "extended": 5, "tags": [1, "ok"],
                            "toread": {"yes": 1}, "time": 3.5, "hash": None},
                           {"href": None, "toread": "yes"}]).encode()
    parsed = parse_file(pinboard, "p.json")
    [link] = parsed.links
    assert link.title == "" and link.tags == {"ok"} and link.read and link.notes == [] and link.added_at is None
    delicious = json.dumps([{"url": "https://a.example/", "title": None, "tags": {"a": 1}, "description": [],
                             "created": "yesterday", "owner": 1}]).encode()
    parsed = parse_file(delicious, "d.json")
    assert parsed.format == "delicious" and parsed.links[0].tags == set() and parsed.links[0].added_at is None


def test_huge_fields_are_cut_down_and_a_big_file_reads_quickly():
    name = "N" * 1_000_000
    items = [{"type": "url", "name": name, "url": "https://huge.example/"},
             {"type": "folder", "name": "F" * 10_000, "children": [{"type": "url", "url": "https://in.example/"}]}]
    items += [{"type": "url", "name": f"Bookmark {i}", "url": f"https://many.example/{i}",
               "date_added": str(13_200_000_000_000_000 + i)} for i in range(20_000)]
    data = json.dumps({"roots": {"bookmark_bar": {"type": "folder", "children": items}}, "version": 1}).encode()
    started = time.perf_counter()
    parsed = parse_file(data, "Bookmarks")
    elapsed = time.perf_counter() - started
    links = by_url(parsed)
    assert len(parsed.links) == 20_002 and len(links["https://huge.example/"].title) == 500
    assert [len(t) for t in links["https://in.example/"].tags] == [100]
    assert elapsed < 5, elapsed  # about 0.3 s on the machine this was written on
    tags = ",".join(f"t{i}" for i in range(100_000))
    backup = json.dumps({"type": "text/x-moz-place-container", "children": [
        {"type": "text/x-moz-place", "uri": "https://tags.example/", "tags": tags}]}).encode()
    assert len(parse_file(backup, "b.json").links[0].tags) == 100


FUZZ = hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
    | st.sampled_from(["https://a.example/x", "url", "folder", "text/x-moz-place", "text/x-moz-place-container",
                       "13200000000000000", "2020-01-01T00:00:00Z", "yes", "no", "1"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "name", "url", "uri", "title", "children", "date_added", "dateAdded", "tags",
                         "annos", "root", "guid", "href", "toread", "created", "is_read", "content"]),
        children, max_size=6),
    max_leaves=20)


def _check(data: bytes) -> None:
    try:
        parsed = parse_file(data, "fuzzed")
    except ImportFileError as exc:
        assert str(exc).startswith("fuzzed: ")
        return
    for link in parsed.links:
        assert link.url.lower().startswith(("http://", "https://")) and len(link.title) <= 500


@FUZZ
@given(st.sampled_from(["chrome", "firefox", "pinboard", "delicious", "wallabag-v1"]), JSON_VALUES)
def test_trees_and_entries_of_any_types_parse_or_fail_with_an_import_error(kind, value):
    document = {
        "chrome": lambda: {"roots": {"bookmark_bar": {"type": "folder", "children": [value]}, "other": value}},
        "firefox": lambda: {"type": "text/x-moz-place-container", "root": "placesRoot", "children": [value]},
        "pinboard": lambda: [{"href": "https://m.example/", "toread": "yes"}, value],
        "delicious": lambda: [{"url": "https://m.example/", "owner": "o"}, value],
        "wallabag-v1": lambda: [{"url": "https://m.example/", "is_read": "1"}, value],
    }[kind]()
    _check(json.dumps(document, allow_nan=True).encode())


@FUZZ
@given(st.sampled_from(list(NEW)), st.data())
def test_mangled_samples_parse_or_fail_with_an_import_error(name, data):
    original = fixture(name)
    start = data.draw(st.integers(0, len(original)))
    end = data.draw(st.integers(start, min(len(original), start + 200)))
    _check(original[:start] + data.draw(st.binary(max_size=50)) + original[end:])


# -- into a real database, through the Reader ---------------------------------------------


async def _import(settings, name: str):
    async with running(settings, worker=False, refresher=False) as reader:
        outcome = await reader.import_data(fixture(name), name, fetch=False)
        again = await reader.import_data(fixture(name), name, fetch=False)
    async with await Store.open(settings.db) as store:
        stats = await store.stats()
    return outcome, again, await library(settings.db), stats


EXPECTED = {  # new links, already there (the duplicate), with their text, skipped
    "chrome-Bookmarks": (6, 1, 0, 4),
    "firefox-bookmarks.json": (5, 1, 0, 3),
    "pinboard.json": (3, 1, 0, 2),
    "delicious.json": (3, 1, 0, 1),
    "wallabag-v1.json": (3, 1, 1, 2),
}


@pytest.mark.parametrize("name", NEW)
async def test_each_format_through_reader_import_data_into_a_real_database(settings, name):
    outcome, again, articles, stats = await _import(settings, name)
    assert outcome.format == NEW[name]
    assert (outcome.new, outcome.merged, outcome.contents, len(outcome.skipped)) == EXPECTED[name]
    assert again.new == 0 and len(articles) == EXPECTED[name][0]  # twice changes nothing
    # Only a person's act queues an article: an import queues nothing and fetches nothing
    assert stats["queued"] == 0 and stats["started"] == 0
    assert all(a["state"] == "new" for a in articles.values() if a["content"] is None)
    if name == "chrome-Bookmarks":
        letters = articles["https://essays.example/letters"]
        assert letters["tags"] == {"Reading", "Long reads"} and letters["read_at"] is None
        assert letters["added_at"] == pytest.approx(utc("2020-02-02T12:00:00.123456"), abs=1e-3)
        slow = articles["https://essays.example/slow-web?id=3"]
        assert slow["added_at"] == pytest.approx(utc("2019-06-01T08:00:00.123456"), abs=1e-3)
        assert articles["https://sea.example/tides"]["tags"] == set()
    elif name == "firefox-bookmarks.json":
        soup = articles["https://food.example/soup"]
        assert soup["tags"] == {"soup", "winter", "Cooking", "dinner"} and soup["read_at"] is None
        assert articles["https://news.example/"]["tags"] == {"favourite"}
        assert [n["text"] for n in articles["https://papers.example/p.pdf"]["notes"]] == [
            "A paper to print and read on the train"]
    elif name == "pinboard.json":
        assert articles["https://pin.example/unread"]["read_at"] is None
        read = articles["https://pin.example/read"]
        assert read["read_at"] is not None and read["tags"] == {"notes", "dup"}
        assert read["added_at"] == utc("2018-01-01T00:00:00")
        assert [n["text"] for n in read["notes"]] == ["My notes on it:\nworth a second look."]
    elif name == "delicious.json":
        loader = articles["https://del.example/loader"]
        assert loader["tags"] == {"javascript", "loader", "cache"} and loader["added_at"] == 1358000000
        assert loader["read_at"] is None
    else:
        printing = articles["https://hist.example/printing"]
        assert printing["read_at"] is not None and printing["starred_at"] is not None
        assert printing["state"] == "ready" and "<em>by hand</em>" in printing["content"]["html"]
        assert "<script" not in printing["content"]["html"] and "onerror" not in printing["content"]["html"]
        assert printing["tags"] == {"history", "long reads", "press"}
        assert articles["https://hist.example/unfetched"]["content"] is None
        assert "wallabag v1 exports hold no dates: the links come in as saved now" in outcome.notes


async def test_a_hostile_tree_is_refused_by_reader_import_data_with_its_message(settings):
    async with running(settings, worker=False, refresher=False) as reader:
        with pytest.raises(Invalid, match="deep.json: JSON nested too deeply to be an export"):
            await reader.import_data(chrome_nested(100_000), "deep.json", fetch=False)
        with pytest.raises(Invalid, match="Firefox's compressed automatic backups"):
            await reader.import_data(b"mozLz40\x00rest", "bookmarks.jsonlz4", fetch=False)
    assert await library(settings.db) == {}
