"""Importers (issue 14, the parsing half): every format people move in with, told apart by
content, read into records with their tags, folders, states, stars, dates, notes and saved
content; duplicates merged; hostile files refused with a clear message or cut down to size.

The sample files in tests/fixtures/import/ were written from each format's published
description; the ZIP exports are kept there as directories and zipped here."""

from __future__ import annotations

import datetime
import io
import json
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reader.formats.importers import (
    FORMATS,
    FeedRecord,
    ImportFileError,
    LinkRecord,
    Note,
    build_bookmarks_html,
    detect_format,
    normalize_url,
    parse_file,
)
from reader.formats.opml import build_opml

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "import"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def zipped(files: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def zipped_dir(name: str, prefix: str = "", compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    root = FIXTURES / name
    return zipped({prefix + p.relative_to(root).as_posix(): p.read_bytes()
                   for p in sorted(root.rglob("*")) if p.is_file()}, compression)


def utc(text: str) -> float:
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC).timestamp()


def by_url(parsed) -> dict[str, LinkRecord]:
    return {link.url: link for link in parsed.links}


def reasons(parsed) -> dict[str, tuple[str, bool]]:
    return {issue.where: (issue.reason, issue.kept) for issue in parsed.report.issues}


# -- Pocket -------------------------------------------------------------------------------


def test_pocket_csv_with_bom_crlf_quoted_fields_pipes_and_bad_rows():
    parsed = parse_file(fixture("pocket.csv"), "pocket.csv")
    assert parsed.format == "pocket-csv"
    links = by_url(parsed)
    assert list(links) == ["https://example.org/queues", "https://Example.ORG:443/two-passes?id=7",
                           "https://example.org/wal", "https://example.org/bad-date", "https://example.org/iso",
                           "http://example.org/untitled"]
    queues = links["https://example.org/queues"]
    # The quoted comma stays in the title; the duplicate row with utm_* and a fragment was
    # merged in: its tag joined, its earlier time kept.
    assert queues.title == "Queues, not rejections"
    assert queues.tags == {"engineering", "queues", "reading"}
    assert queues.added_at == 1600000000 and not queues.read and not queues.starred
    two = links["https://Example.ORG:443/two-passes?id=7"]
    assert two.title == "Two passes: how we clean"  # the quoted newline folded
    assert two.read and two.tags == set() and two.added_at == 1700000100
    assert links["https://example.org/wal"].tags == {"databases", "sqlite"}  # empty tags between pipes dropped
    assert links["https://example.org/iso"].added_at == utc("2024-03-01T12:00:00")
    assert links["https://example.org/bad-date"].added_at is None
    assert links["http://example.org/untitled"].title == ""  # a title that is only the URL is no title
    assert reasons(parsed) == {
        "row 5": ("not an http(s) URL: javascript:alert(1)", False),
        "row 6": ("no URL", False),
        "row 7": ("the time added is not a date we can read ('yesterday'): kept without it", True),
        "row 9": ("the same link as row 2: merged into it", True),
    }
    assert parsed.report.rows == 9 and parsed.report.merged == 1 and len(parsed.report.skipped) == 2


def test_pocket_zip_of_parts_with_annotations():
    parsed = parse_file(zipped_dir("pocket-zip"), "pocket.zip")
    assert parsed.format == "pocket-csv"
    links = by_url(parsed)
    assert set(links) == {"https://example.org/one", "https://example.org/shared", "https://example.org/two",
                          "https://example.org/gone"}
    shared = links["https://example.org/shared"]  # in both parts: merged
    assert shared.tags == {"x", "y"} and shared.read and shared.added_at == 1690000000
    assert links["https://example.org/two"].read and links["https://example.org/two"].tags == {"c"}
    assert links["https://example.org/one"].notes == [Note("the first highlight", None, 1700001000),
                                                       Note("the second one", None, 1700002000)]
    gone = links["https://example.org/gone"]  # highlighted but missing from the list: still comes in
    assert gone.title == "Only highlighted" and gone.notes[0].text == "a highlight on a link the list lost"
    assert reasons(parsed) == {"part_000001.csv row 3": ("the same link as part_000000.csv row 3: merged into it",
                                                         True)}


def test_pocket_zip_inside_a_folder_is_read_the_same():
    parsed = parse_file(zipped_dir("pocket-zip", prefix="pocket-export/"), "export.zip")
    assert len(parsed.links) == 4


def test_pocket_html_export_unread_and_read_archive():
    parsed = parse_file(fixture("ril_export.html"), "ril_export.html")
    assert parsed.format == "pocket-html"
    links = by_url(parsed)
    assert list(links) == ["https://example.org/offline-first", "https://example.org/typography",
                           "https://example.org/reading-log"]
    offline = links["https://example.org/offline-first"]
    assert offline.title == "Offline first & fast" and offline.tags == {"web", "offline"}
    assert not offline.read and offline.added_at == 1600000000
    assert links["https://example.org/reading-log"].read
    typography = links["https://example.org/typography"]  # unread, and again in the archive with a fragment
    assert typography.read and typography.tags == {"design"} and typography.added_at == 1500000100
    assert reasons(parsed)["link 3"] == ("not an http(s) URL: mailto:someone@example.org", False)


# -- Instapaper ---------------------------------------------------------------------------


def test_instapaper_csv_folders_selection_and_tags():
    parsed = parse_file(fixture("instapaper.csv"), "instapaper.csv")
    assert parsed.format == "instapaper-csv"
    links = by_url(parsed)
    assert len(links) == 5
    unread = links["https://example.com/unread"]
    assert not unread.read and not unread.starred and unread.tags == set() and unread.added_at == 1650000000
    archived = links["https://example.com/archived"]
    assert archived.title == "Read, and archived" and archived.read and archived.tags == {"history"}
    assert archived.notes == [Note("A sentence, worth keeping.\nAnd its second line.")]
    starred = links["https://example.com/starred"]
    assert starred.starred and not starred.read and starred.tags == set()
    assert links["https://example.com/cooking"].tags == {"Recipes", "food", "weekend"}  # own folder: a tag
    assert links["https://example.com/when"].added_at is None
    assert reasons(parsed) == {
        "row 6": ("the time added is not a date we can read ('not-a-time'): kept without it", True),
        "row 7": ("not an http(s) URL: ftp://example.com/file", False),
    }


def test_instapaper_csv_without_the_tags_column():
    data = b"URL,Title,Selection,Folder,Timestamp\nhttps://example.com/a,A,,Archive,1650000000\n"
    parsed = parse_file(data, "i.csv")
    assert parsed.format == "instapaper-csv" and parsed.links[0].read and parsed.links[0].tags == set()


# -- Omnivore -----------------------------------------------------------------------------


def test_omnivore_zip_with_content_and_highlights():
    parsed = parse_file(zipped_dir("omnivore"), "omnivore.zip")
    assert parsed.format == "omnivore"
    links = by_url(parsed)
    assert list(links) == ["https://example.net/why-sites-vanish", "https://example.net/newsletter/42",
                           "https://example.net/paper.pdf"]
    vanish = links["https://example.net/why-sites-vanish"]
    assert vanish.title == "Why sites vanish" and vanish.author == "A. Writer"
    assert vanish.tags == {"web", "archiving"} and vanish.read and not vanish.starred
    assert vanish.added_at == utc("2024-05-01T09:30:00") and vanish.published == utc("2024-04-30T00:00:00")
    assert vanish.summary == "Link rot, measured."
    # The saved content came through the one cleaner: no script, no handler, links absolute.
    assert "Half of the links" in vanish.content_html and "What is saved stays readable." in vanish.content_html
    assert "<script" not in vanish.content_html and "onclick" not in vanish.content_html
    assert 'href="https://example.net/study"' in vanish.content_html
    assert vanish.notes == [
        Note("Half of the links in a study of old articles no longer worked.",
             "Check the method: what counts as a dead link?", highlight=True),
        Note("What is saved\n\nstays readable.", highlight=True),
        Note("A highlight without a note", highlight=True),
    ]
    newsletter = links["https://example.net/newsletter/42"]
    assert not newsletter.read and newsletter.tags == set() and "three things" in newsletter.content_html
    paper = links["https://example.net/paper.pdf"]
    assert paper.content_html is None and paper.added_at is None and paper.tags == {"papers"}
    assert reasons(parsed) == {
        "metadata_0_to_3.json entry 3": ("the time added is not a date we can read ('not a date'):"
                                         " kept without it", True),
        "metadata_3_to_4.json entry 1": ("no URL", False),
    }


def test_omnivore_metadata_json_alone():
    parsed = parse_file(fixture("omnivore/metadata_0_to_3.json"), "metadata_0_to_3.json")
    assert parsed.format == "omnivore" and len(parsed.links) == 3
    assert all(link.content_html is None for link in parsed.links)


# -- wallabag -----------------------------------------------------------------------------


def test_wallabag_json_content_annotations_and_states():
    parsed = parse_file(fixture("wallabag.json"), "wallabag.json")
    assert parsed.format == "wallabag"
    links = by_url(parsed)
    assert list(links) == ["https://history.example/printing", "https://tools.example/hammer"]
    printing = links["https://history.example/printing"]
    assert printing.read and printing.starred
    assert printing.tags == {"history", "long reads"}
    assert printing.author == "Ann Author, Bob Author"
    assert printing.published == utc("2018-12-01T00:00:00")
    # Its duplicate (with a tracking parameter, saved earlier) was merged: earlier time kept,
    # the longer content kept.
    assert printing.added_at == utc("2019-01-01T08:00:00")
    assert "every copy was made by <em>hand</em>" in printing.content_html
    assert "onerror" not in printing.content_html and "iframe" not in printing.content_html
    assert 'src="https://history.example/press.jpg"' in printing.content_html
    assert printing.notes == [Note("every copy was made by hand", "Compare with the telegraph.",
                                   utc("2019-02-15T08:00:00"), highlight=True),
                              Note("The printing press", None, utc("2019-02-15T09:00:00"), highlight=True)]
    hammer = links["https://tools.example/hammer"]
    assert hammer.tags == {"tools"} and hammer.title == "" and not hammer.read and not hammer.starred
    assert hammer.content_html is None  # wallabag could not fetch it: its apology is not the article
    assert reasons(parsed) == {
        "entry 3": ("the same link as entry 1: merged into it", True),
        "entry 4": ("not an http(s) URL: file:///home/me/notes.html", False),
        "entry 5": ("not an entry (not a JSON object)", False),
    }


# -- bookmarks ----------------------------------------------------------------------------


def test_netscape_bookmarks_folders_become_tags():
    parsed = parse_file(fixture("bookmarks-firefox.html"), "bookmarks.html")
    assert parsed.format == "netscape"
    links = by_url(parsed)
    assert list(links) == ["https://www.python.org/", "https://example.org/essay", "https://example.org/deep",
                           "https://example.org/after-deep", "https://news.example/"]
    python = links["https://www.python.org/"]
    assert python.tags == {"python", "language"} and python.folder == () and python.added_at == 1500000000
    assert python.notes == [Note("The language's home, <with> an escaped description.")]
    deep = links["https://example.org/deep"]
    assert deep.folder == ("Reading", "Deep, very deep")
    assert deep.tags == {"Reading", "Deep, very deep", "later"}
    after = links["https://example.org/after-deep"]  # back out of the inner folder
    assert after.folder == ("Reading",) and after.added_at is None
    essay = links["https://example.org/essay"]  # again in the toolbar, with a fragment: merged
    assert essay.tags == {"Reading", "essays"} and essay.added_at == 1400000000 and essay.notes == []
    assert links["https://news.example/"].tags == set()  # the toolbar itself is no tag
    assert not any(link.read for link in parsed.links)  # a browser knows nothing of reading
    assert [r for r, kept in reasons(parsed).values() if not kept] == [
        "not an http(s) URL: place:parent=menu________&queryType=1",
        "not an http(s) URL: javascript:void(location.href='https://reader.example/save?url='+encodeURIComponent("
        "location.href))"]


def test_pinboard_bookmarks_toread_marks_the_others_read():
    links = by_url(parse_file(fixture("bookmarks-pinboard.html"), "pinboard.html"))
    assert not links["https://pin.example/unread"].read
    assert links["https://pin.example/unread"].tags == {"toread", "web"}
    assert links["https://pin.example/read"].read
    assert links["https://pin.example/read"].notes == [Note("My own description of it")]
    assert links["https://pin.example/old"].read


def test_bookmarks_round_trip_through_the_writer():
    links = [
        LinkRecord("https://a.example/1", "One, with <angle> & \"quotes\"", {"x", "y,z"}, 1600000000, read=True,
                   folder=("Work", "Deep")),
        LinkRecord("https://a.example/2", "Two", set(), 1600000100, notes=[Note("a note\nover two lines")],
                   folder=("Work",)),
        LinkRecord("https://a.example/3", "", {"solo"}, None),
    ]
    for link in links:
        link.tags |= set(link.folder)
    data = build_bookmarks_html(links)
    back = parse_file(data, "out.html")
    assert back.format == "netscape" and not back.report.issues
    got = by_url(back)
    one = got["https://a.example/1"]
    assert one.title == 'One, with <angle> & "quotes"' and one.folder == ("Work", "Deep")
    assert one.tags == {"x", "y z", "Work", "Deep"} and one.read and one.added_at == 1600000000
    two = got["https://a.example/2"]
    assert two.folder == ("Work",) and not two.read and two.notes == [Note("a note\nover two lines")]
    three = got["https://a.example/3"]
    assert three.title == "" and three.tags == {"solo"} and three.added_at is None and three.folder == ()
    # And the same again: writing what was read gives the same file.
    assert build_bookmarks_html(back.links) == data
    # A library of only read links stays read.
    all_read = parse_file(build_bookmarks_html([LinkRecord("https://a.example/r", "R", read=True)]), "r.html")
    assert all_read.links[0].read


# -- OPML ---------------------------------------------------------------------------------


def test_opml_nested_folders():
    parsed = parse_file(fixture("feeds.opml"), "feeds.opml")
    assert parsed.format == "opml" and parsed.links == []
    assert parsed.feeds == [
        FeedRecord("https://tech.example/feed.xml", "Example Tech", "https://tech.example/", ("Tech",)),
        FeedRecord("https://py.example/rss", "Python News", "https://py.example/", ("Tech", "Python")),
        FeedRecord("https://news.example/daily.xml", "Daily", None, ("News",)),
        FeedRecord("https://loose.example/atom", "", None, ()),
        FeedRecord("https://cat.example/feed", "Categorized the old way", None, ("Hobbies", "Birds")),
    ]
    assert parsed.feeds[1].folder_name == "Tech / Python" and parsed.feeds[3].folder_name is None
    assert reasons(parsed) == {
        "outline 3": ("not an http(s) feed URL: gopher://old.example/feed", False),
        "outline 5": ("the same feed as outline 1: kept once, in Tech", True),
    }


def test_opml_round_trip_through_the_writer():
    feeds = parse_file(fixture("feeds.opml"), "feeds.opml").feeds
    data = build_opml(feeds)
    back = parse_file(data, "out.opml")
    assert back.feeds == feeds and not back.report.issues
    assert data.count(b'text="Tech"') == 1  # one folder outline, both feeds inside it


def test_opml_with_a_doctype_or_entities_is_refused():
    laughs = (b'<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
              b'<opml version="2.0"><body><outline text="&b;" xmlUrl="https://x.example/f"/></body></opml>')
    with pytest.raises(ImportFileError, match="DOCTYPE or entities"):
        parse_file(laughs, "laughs.opml")
    external = (b'<?xml version="1.0"?><!DOCTYPE opml SYSTEM "file:///etc/passwd">'
                b'<opml version="2.0"><body/></opml>')
    with pytest.raises(ImportFileError, match="DOCTYPE"):
        parse_file(external, "external.opml")


def test_opml_declaring_an_unknown_encoding_is_refused():
    with pytest.raises(ImportFileError, match="unknown encoding"):
        parse_file(b'<?xml version="1.0" encoding="UZF-8"?><opml version="2.0"><body/></opml>', "odd.opml")


# -- reader's own export ------------------------------------------------------------------


def test_reader_export_is_handed_back_untouched():
    data = json.dumps({"format": "reader-export", "version": 1, "feeds": [], "articles": []}).encode()
    parsed = parse_file(data, "articles.json")
    assert parsed.format == "reader" and parsed.native == data and parsed.links == [] and parsed.feeds == []


# -- detection ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "kind"), [
    ("pocket.csv", "pocket-csv"), ("ril_export.html", "pocket-html"), ("instapaper.csv", "instapaper-csv"),
    ("wallabag.json", "wallabag"), ("bookmarks-firefox.html", "netscape"), ("bookmarks-pinboard.html", "netscape"),
    ("feeds.opml", "opml"), ("omnivore/metadata_0_to_3.json", "omnivore"),
])
def test_format_is_told_by_content_not_by_name(name, kind):
    assert detect_format(fixture(name), "export.txt") == kind
    assert parse_file(fixture(name), "renamed.bin").format == kind


@pytest.mark.parametrize("name", ["pocket.csv", "ril_export.html", "instapaper.csv", "wallabag.json",
                                  "bookmarks-firefox.html", "bookmarks-pinboard.html", "feeds.opml", "pocket-zip",
                                  "omnivore"])
def test_every_row_is_accounted_for(name):
    data = zipped_dir(name) if (FIXTURES / name).is_dir() else fixture(name)
    parsed = parse_file(data, name)
    report = parsed.report
    assert report.rows == len(parsed.links) + len(parsed.feeds) + report.merged + report.skipped_rows
    assert report.skipped_rows == len(report.skipped) and report.rows > 0


def test_unknown_formats_are_refused_with_the_list_of_formats():
    for data, what in [(b"just some words\n", "a file of another kind"),
                       (b"<html><body><p>a page</p></body></html>", "an HTML or XML file of another kind"),
                       (b'{"hello": "world"}', "a JSON file of another shape"),
                       (b"\x89PNG\r\n\x1a\n\x00\x00", "a file of another kind"),
                       (zipped({"photo.jpg": b"\xff\xd8"}), "a ZIP holding photo.jpg")]:
        with pytest.raises(ImportFileError) as caught:
            parse_file(data, "mystery")
        message = str(caught.value)
        assert message.startswith(f"mystery: {what}, not a format reader can import")
        for description in FORMATS.values():
            assert description in message


def test_empty_file_is_refused():
    with pytest.raises(ImportFileError, match="empty"):
        parse_file(b"  \n", "empty.csv")
    with pytest.raises(ImportFileError, match="an empty JSON list: nothing to import"):
        parse_file(b"[]", "wallabag.json")


# -- URLs and merging ---------------------------------------------------------------------


@pytest.mark.parametrize(("url", "normal"), [
    ("HTTPS://Example.COM:443/Path?b=2&a=1#frag", "https://example.com/Path?b=2&a=1"),
    ("http://example.com:80", "http://example.com/"),
    ("http://example.com:8080/x", "http://example.com:8080/x"),
    ("https://example.com/a?utm_source=x&id=3&UTM_Medium=y&fbclid=abc&gclid=1", "https://example.com/a?id=3"),
    ("https://example.com/a?utm_source=x", "https://example.com/a"),
    ("https://user:pw@Example.com/", "https://user:pw@example.com/"),
    ("http://[2001:DB8::1]:80/x", "http://[2001:db8::1]/x"),
    ("  https://example.com/with%20space  ", "https://example.com/with%20space"),
    # a trailing slash is no other link; the root keeps its one
    ("https://example.com/post/", "https://example.com/post"),
    ("https://example.com/post//?id=3#c", "https://example.com/post?id=3"),
    ("https://example.com/", "https://example.com/"),
    ("https://example.com//", "https://example.com/"),
    ("https://example.com/a/b/", "https://example.com/a/b"),
])
def test_normalize_url(url, normal):
    assert normalize_url(url) == normal


def test_merge_keeps_the_richer_record():
    first = LinkRecord("https://example.com/a", "", {"x"}, 200, content_html="<p>short</p>",
                       notes=[Note("n1")])
    second = LinkRecord("https://EXAMPLE.com/a#f", "Title", {"y"}, 100, read=True, starred=True, author="Au",
                        content_html="<p>the longer one</p>", notes=[Note("n1"), Note("n2", "c")])
    assert first.key == second.key
    first.merge(second)
    assert first.url == "https://example.com/a" and first.title == "Title" and first.tags == {"x", "y"}
    assert first.added_at == 100 and first.read and first.starred and first.author == "Au"
    assert first.content_html == "<p>the longer one</p>" and first.notes == [Note("n1"), Note("n2", "c")]


# -- hostile and broken files -------------------------------------------------------------


def test_truncated_zip_is_refused_clearly():
    data = zipped_dir("omnivore")
    for cut in (len(data) // 2, len(data) - 10, 30):
        with pytest.raises(ImportFileError, match="damaged or incomplete"):
            parse_file(data[:cut], "omnivore.zip")


def test_zip_with_a_corrupt_entry_is_refused_clearly():
    rows = b"title,url,time_added,tags,status\n" + b"x,https://e.x/,1,,unread\n" * 50
    data = bytearray(zipped({"part_000000.csv": rows}))
    data[60:70] = b"\x00" * 10  # inside the compressed stream of the only entry
    with pytest.raises(ImportFileError, match="damaged or incomplete"):
        parse_file(bytes(data), "pocket.zip")


def test_zip_bomb_is_stopped_by_the_byte_budget(monkeypatch):
    import reader.formats.importers.archives as archives

    monkeypatch.setattr(archives, "MAX_UNCOMPRESSED", 2_000_000)
    # Each part unpacks to 1.5 MB from a few KB; the second one crosses the budget.
    rows = b"title,url,time_added,tags,status\n" + b"t,https://e.example/x,1,,unread\n" * 48_000
    bomb = zipped({"part_000000.csv": rows, "part_000001.csv": rows})
    assert len(bomb) < 50_000
    with pytest.raises(ImportFileError, match="ZIP bomb"):
        parse_file(bomb, "bomb.zip")


def test_zip_bomb_is_stopped_by_its_ratio(monkeypatch):
    import reader.formats.importers.archives as archives

    monkeypatch.setattr(archives, "MIN_BUDGET", 10_000)
    rows = b"title,url,time_added,tags,status\n" + b"t,https://e.example/x,1,,unread\n" * 100_000  # 3.2 MB
    bomb = zipped({"part_000000.csv": rows})
    assert len(bomb) * archives.MAX_RATIO < len(rows)
    expected = f"unpacks to more than {len(bomb) * archives.MAX_RATIO} bytes, more than an export of its size"
    with pytest.raises(ImportFileError, match=expected):
        parse_file(bomb, "bomb.zip")
    # An honest export, compressed as such files are, comes in.
    honest = "title,url,time_added,tags,status\n" + "".join(
        f"Title {i},https://e{i}.example/{i * 7919},{1600000000 + i},t{i % 9},unread\n" for i in range(30_000))
    assert len(parse_file(zipped({"part_000000.csv": honest.encode()}), "honest.zip").links) == 30_000


def test_pocket_annotations_of_the_wrong_shape_are_passed_over():
    notes = json.dumps([{"url": "https://example.org/one", "highlights": True}, 7,
                        {"url": "https://example.org/one", "highlights": [{"quote": 5}, None, {"quote": "ok"}]}])
    data = zipped({"part_000000.csv": fixture("pocket-zip/part_000000.csv"),
                   "annotations/part_000000.json": notes.encode()})
    links = by_url(parse_file(data, "pocket.zip"))
    assert links["https://example.org/one"].notes == [Note("ok")]


def test_zip_with_too_many_entries_is_refused(monkeypatch):
    import reader.formats.importers.archives as archives

    monkeypatch.setattr(archives, "MAX_ENTRIES", 100)
    data = zipped({f"metadata_{i}.json": b"[]" for i in range(101)}, zipfile.ZIP_STORED)
    with pytest.raises(ImportFileError, match="holds 101 files"):
        parse_file(data, "many.zip")


def test_zip_entry_past_its_cap_is_left_out_with_a_reason(monkeypatch):
    import reader.formats.importers.archives as archives

    monkeypatch.setattr(archives, "MAX_ENTRY", 1000)
    rows = b"title,url,time_added,tags,status\n" + b"t,https://e.example/x,1,,unread\n" * 100
    data = zipped({"part_000000.csv": rows})
    parsed = parse_file(data, "big.zip")
    assert parsed.links == [] and reasons(parsed) == {"part_000000.csv": ("larger than 1000 bytes: left out", False)}


def test_csv_with_other_columns_is_refused_naming_what_was_expected():
    with pytest.raises(ImportFileError) as caught:
        parse_file(b"name,link,date\nA,https://a.example/,2020-01-01\n", "links.csv")
    message = str(caught.value)
    assert "name,link,date" in message
    assert "title,url,time_added,tags,status" in message and "URL,Title,Selection,Folder,Timestamp" in message


def test_pocket_csv_with_a_missing_column_and_an_extra_one():
    data = b"url,title,time_added,status,favorite\nhttps://a.example/,A,1600000000,archive,1\n"
    parsed = parse_file(data, "pocket.csv")
    assert parsed.format == "pocket-csv" and parsed.links[0].read and parsed.links[0].tags == set()
    assert parsed.report.notes == ["no tags column: read without it", "columns ignored: favorite"]


def test_short_rows_and_huge_fields():
    huge = "T" * 200_000
    data = ("title,url,time_added,tags,status\n"
            "Short row,https://a.example/short\n"
            f"{huge},https://a.example/huge,1600000000,,unread\n"
            f'"{"x" * 5000}",https://a.example/long-title,1600000000,{"t" * 500}|ok,unread\n').encode()
    parsed = parse_file(data, "pocket.csv")
    links = by_url(parsed)
    assert links["https://a.example/short"].added_at is None  # missing cells read as empty
    assert "https://a.example/huge" not in links  # past the CSV field limit: reported, the rest read
    assert reasons(parsed)["line 3"][0].startswith("not readable as CSV (field larger than field limit")
    long_title = links["https://a.example/long-title"]
    assert len(long_title.title) == 500 and all(len(t) <= 100 for t in long_title.tags) and "ok" in long_title.tags


def test_non_utf8_csv_is_read_as_windows_1252():
    data = "title,url,time_added,tags,status\nCaf\u00e9 \u201cquotes\u201d,https://a.example/,1,,unread\n"
    parsed = parse_file(data.encode("cp1252"), "pocket.csv")
    assert parsed.links[0].title == "Caf\u00e9 \u201cquotes\u201d"
    assert parsed.report.notes == ["not UTF-8: read as Windows-1252"]
    utf16 = parse_file(data.encode("utf-16"), "pocket.csv")
    assert utf16.links[0].title == "Caf\u00e9 \u201cquotes\u201d"


def test_dates_in_every_shape():
    rows = ["title,url,time_added,tags,status"]
    shapes = {"seconds": "1600000000", "milliseconds": "1600000000000", "microseconds": "1600000000000000",
              "iso": "2020-09-13T12:26:40Z", "iso-offset": "2020-09-13T14:26:40+0200",
              "space": "2020-09-13 12:26:40", "rfc2822": "Sun, 13 Sep 2020 12:26:40 GMT"}
    for i, value in enumerate(shapes.values()):
        rows.append(f't,https://a.example/{i},"{value}",,unread')
    for i, bad in enumerate(["-5", "99999999999999999999", "2020-13-45", "nan", "1e400"]):
        rows.append(f"t,https://b.example/{i},{bad},,unread")
    parsed = parse_file("\n".join(rows).encode(), "p.csv")
    assert [link.added_at for link in parsed.links[:len(shapes)]] == [1600000000.0] * len(shapes)
    assert [link.added_at for link in parsed.links[len(shapes):]] == [None] * 5
    assert sum(issue.kept for issue in parsed.report.issues) == 5


def test_deep_nesting_is_harmless():
    deep_json = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ImportFileError, match="nested too deeply|another shape"):
        parse_file(deep_json, "deep.json")
    deep_opml = (b'<?xml version="1.0"?><opml version="2.0"><body>' + b'<outline text="f">' * 5000
                 + b'<outline xmlUrl="https://deep.example/feed"/>' + b"</outline>" * 5000 + b"</body></opml>")
    feed = parse_file(deep_opml, "deep.opml").feeds[0]
    assert feed.url == "https://deep.example/feed" and len(feed.folder) == 32
    deep_html = (b"<!DOCTYPE NETSCAPE-Bookmark-file-1><DL><p>" + b"<DT><H3>f</H3><DL><p>" * 5000
                 + b'<DT><A HREF="https://deep.example/">deep</A>' + b"</DL><p>" * 5000 + b"</DL>")
    link = parse_file(deep_html, "deep.html").links[0]
    assert link.url == "https://deep.example/" and len(link.folder) == 32 and link.tags == {"f"}


def test_wallabag_with_wrong_types_everywhere():
    data = json.dumps([
        {"url": 5, "title": "x", "annotations": True},
        {"url": "https://a.example/", "title": ["not", "text"], "tags": "notalist", "is_archived": "1",
         "is_starred": None, "created_at": {"a": 1}, "annotations": [None, {"quote": 7}], "published_by": [1, "Au"],
         "content": 12},
        {"url": "https://b.example/", "tags": [None, 3, {"label": None}, {"label": "ok"}], "annotations": "x",
         "is_archived": 0, "is_starred": 0, "created_at": 10**400, "published_at": True},
    ]).encode()
    parsed = parse_file(data, "w.json")
    links = by_url(parsed)
    a = links["https://a.example/"]
    assert a.title == "" and a.tags == set() and a.read and not a.starred and a.added_at is None
    assert a.author == "Au" and a.notes == [] and a.content_html is None
    b = links["https://b.example/"]
    assert b.tags == {"ok"} and b.added_at is None and b.published is None
    assert reasons(parsed)["entry 1"] == ("no URL", False)


def test_html_cut_off_mid_link_keeps_what_is_there():
    data = fixture("bookmarks-firefox.html")
    cut = data[: data.index(b"Down here") + 4]
    links = by_url(parse_file(cut, "cut.html"))
    assert "https://example.org/deep" in links and links["https://example.org/deep"].title == "Down"


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SAMPLES = ["pocket.csv", "ril_export.html", "instapaper.csv", "wallabag.json", "bookmarks-firefox.html",
           "feeds.opml", "omnivore/metadata_0_to_3.json"]


def _check(data: bytes) -> None:
    try:
        parsed = parse_file(data, "fuzzed")
    except ImportFileError as exc:
        assert str(exc).startswith("fuzzed: ")
        return
    for link in parsed.links:
        assert link.url.lower().startswith(("http://", "https://")) and len(link.title) <= 500
    for feed in parsed.feeds:
        assert feed.url.lower().startswith(("http://", "https://"))


@FUZZ
@given(st.sampled_from(SAMPLES), st.data())
def test_mangled_samples_parse_or_fail_with_an_import_error(name, data):
    original = fixture(name)
    start = data.draw(st.integers(0, len(original)))
    end = data.draw(st.integers(start, min(len(original), start + 200)))
    filler = data.draw(st.binary(max_size=50))
    _check(original[:start] + filler + original[end:])


COMPRESSIONS = st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])


@FUZZ
@given(st.sampled_from(["omnivore", "pocket-zip"]), COMPRESSIONS, st.integers(0, 3000), st.binary(max_size=20))
def test_mangled_zips_parse_or_fail_with_an_import_error(name, compression, position, filler):
    original = zipped_dir(name, compression=compression)
    position = min(position, len(original))
    _check(original[:position] + filler + original[position + len(filler):])


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
    | st.sampled_from(["https://a.example/x", "2020-01-01", "1600000000", "Archived", "<p>x</p>"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12)
WALLABAG_KEYS = ["url", "title", "content", "is_archived", "is_starred", "tags", "created_at", "published_at",
                 "published_by", "annotations", "is_not_parsed", "given_url"]
OMNIVORE_KEYS = ["url", "title", "slug", "labels", "savedAt", "publishedAt", "state", "readingProgress", "author",
                 "description"]


@FUZZ
@given(st.sampled_from([WALLABAG_KEYS, OMNIVORE_KEYS]),
       st.lists(st.dictionaries(st.sampled_from(WALLABAG_KEYS + OMNIVORE_KEYS), JSON_VALUES, max_size=8),
                min_size=1, max_size=5))
def test_json_entries_of_any_types_parse_or_fail_with_an_import_error(keys, entries):
    marker = {key: None for key in keys[3:5]}  # makes the shape wallabag's or Omnivore's
    marker["url"] = "https://marker.example/"
    _check(json.dumps([marker, *entries], allow_nan=True).encode())
