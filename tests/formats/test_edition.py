"""Editions: EPUB 3 books and the OPDS catalog, checked the way an e-reader would meet
them: opened with a real EPUB library (EbookLib), taken apart with zipfile, every document
parsed as XML, every internal link followed, and epubcheck when it is installed; the
catalog read by feedparser and by lxml."""

from __future__ import annotations

import io
import posixpath
import shutil
import subprocess
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import feedparser
import pytest
from lxml import etree

from reader.formats.opds import CatalogEntry, build_opds
from reader.formats.epub import EditionArticle, EditionImage, assemble_epub, build_epub
from reader.clean.sanitize import clean_html
from ..books import NS, check_book, png, read_with_ebooklib, text_of

SAMPLES = Path(__file__).resolve().parent.parent.parent / "reader" / "samples" / "site" / "articles"
WHEN = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone.utc)



GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


def sample_articles() -> list[EditionArticle]:
    """The sample site's pages through the real sanitizer, as the extractor would hand them over."""
    articles = []
    for number, page in enumerate(sorted(SAMPLES.glob("*.html")), start=1):
        url = f"https://samples.reader.invalid/articles/{page.name}"
        articles.append(EditionArticle(
            id=number, title=page.stem.replace("-", " ").capitalize(),
            html=clean_html(page.read_text(encoding="utf-8"), base_url=url),
            url=url, site="samples.reader.invalid", author="Sample Author", published=WHEN,
        ))
    return articles


def rich_article() -> EditionArticle:
    html = clean_html(
        '<h2>Pictures & links</h2><p>A <a href="#notes">jump to notes</a>, an '
        '<a href="https://example.org/more?a=1&b=2">outside link</a> and <a href="mailto:x@example.org">mail</a>, '
        '<a href="mailto:?subject=Two words&body=https://example.org/é">share</a>.</p>'
        '<figure><img src="/img/photo.png" alt="a photo" width="2" height="abc"><figcaption>Photo</figcaption></figure>'
        '<p><img src="https://cdn.example.org/anim.gif" alt="a gif"> <img src="https://cdn.example.org/missing.jpg" alt="not fetched">'
        '<img src="https://cdn.example.org/evil.svg" alt="svg dropped"></p>'
        '<table><tr><th scope="col">k</th><td colspan="2">v</td></tr></table>'
        '<pre>code\x0b with a vertical tab</pre><ol start="3"><li>three</li></ol>',
        base_url="https://example.org/post",
    )
    return EditionArticle(
        id=42, title="Ampersands & <angles> ]]> in a title\x01", html=html,
        url="https://example.org/post", site="example.org", author="A. Writer", published=WHEN,
        images=[
            # Claimed media types are wrong on purpose: the bytes decide.
            EditionImage("https://example.org/img/photo.png", png(), "image/jpeg"),
            EditionImage("https://cdn.example.org/anim.gif", GIF, None),
            EditionImage("https://cdn.example.org/evil.svg", SVG, "image/svg+xml"),
        ],
    )




def test_an_edition_of_the_sample_articles_is_a_valid_book(tmp_path: Path) -> None:
    import ebooklib

    articles = sample_articles()
    data = build_epub(articles, title="Reading list", modified=WHEN)
    parts = check_book(data)
    # The first page, then every article in the order given, each with its heading block.
    assert len(parts["chapters"]) == len(articles) + 1
    for chapter, article in zip(parts["chapters"][1:], articles):
        document = parts["documents"][chapter]
        header = document.find(".//x:header", NS)
        assert header.find("x:h1", NS).text == article.title
        assert "samples.reader.invalid" in text_of(header)
        assert "By Sample Author" in text_of(header)
        assert header.find(".//x:time", NS).get("datetime") == "2026-03-04"
        assert "4 March 2026" in text_of(header)
        assert len(text_of(document.find(".//x:div[@class='content']", NS))) > 300
    toc_titles = [a.text for a in parts["toc"].iterfind(".//x:a", NS)]
    assert toc_titles == ["Reading list"] + [a.title for a in articles]

    book = read_with_ebooklib(data, tmp_path)
    assert book.get_metadata("DC", "title")[0][0] == "Reading list"
    assert book.get_metadata("DC", "identifier")[0][0] == parts["identifier"]
    assert book.get_metadata("DC", "language")[0][0] == "en"
    spine_documents = [book.get_item_with_id(idref) for idref, _ in book.spine]
    assert all(item.get_type() == ebooklib.ITEM_DOCUMENT for item in spine_documents)
    assert [link.title for link in book.toc] == toc_titles


def test_images_are_embedded_with_the_type_their_bytes_say_and_links_never_break(tmp_path: Path) -> None:
    import ebooklib

    data = build_epub([rich_article()], title="One article", modified=WHEN)
    parts = check_book(data)
    chapter = parts["documents"][parts["chapters"][1]]
    images = chapter.findall(".//x:img", NS)
    assert [image.get("alt") for image in images] == ["a photo", "a gif"]
    assert images[0].get("width") == "2" and images[0].get("height") is None  # not a number: dropped
    media = {item.get("href"): item.get("media-type") for item in parts["opf"].iterfind(".//opf:item", NS)
             if item.get("media-type").startswith("image/")}
    assert sorted(media.values()) == ["image/gif", "image/png"]  # the SVG is not in the book
    body = text_of(chapter)
    assert "not fetched" in body and "svg dropped" in body  # the alt text stands in
    links = {a.text: a.get("href") for a in chapter.iterfind(".//x:a", NS)}
    assert links["jump to notes"].startswith("https://example.org/post#")  # made absolute by the sanitizer
    assert links["outside link"] == "https://example.org/more?a=1&b=2"
    assert links["mail"] == "mailto:x@example.org"
    assert links["share"] == "mailto:?subject=Two%20words&body=https://example.org/%C3%A9"  # a valid URI
    assert chapter.find(".//x:header/x:h1", NS).text == "Ampersands & <angles> ]]> in a title"
    assert "code with a vertical tab" in body

    book = read_with_ebooklib(data, tmp_path)
    in_book = {item.get_name(): item.media_type for item in book.get_items_of_type(ebooklib.ITEM_IMAGE)}
    assert sorted(in_book.values()) == ["image/gif", "image/png"]
    assert zipfile.ZipFile(io.BytesIO(data)).read(posixpath.join(parts["base"], next(
        href for href, kind in media.items() if kind == "image/png"))) == png()


def test_links_the_book_could_not_follow_lose_their_href() -> None:
    # Unsanitized-looking input (no base URL): a fragment and a relative link would point
    # at pages the book does not hold; the words stay, the link goes.
    article = EditionArticle(1, "Links", '<p><a href="#top">top</a> <a href="other.html">other</a> '
                             '<a href="https://example.org/">fine</a></p>')
    parts = check_book(build_epub([article], title="Links"))
    chapter = parts["documents"][parts["chapters"][1]]
    hrefs = {a.text: a.get("href") for a in chapter.iterfind(".//x:div[@class='content']//x:a", NS)}
    assert hrefs == {"top": None, "other": None, "fine": "https://example.org/"}


def test_the_size_cap_stops_adding_articles_and_the_first_page_says_so() -> None:
    articles = [EditionArticle(i, f"Article {i}", "<p>" + "words " * 2000 + "</p>") for i in range(1, 7)]
    whole = assemble_epub(articles, title="All")
    assert whole.included == [1, 2, 3, 4, 5, 6] and whole.left_out == 0
    capped = assemble_epub(articles, title="Capped", max_bytes=30_000)
    assert capped.included == [1, 2] and capped.left_out == 4
    parts = check_book(capped.data)
    first_page = text_of(parts["documents"][parts["chapters"][0]])
    assert "4 more articles did not fit" in first_page and "0.03 MB" in first_page
    assert len(parts["chapters"]) == 3
    assert len(capped.data) < 30_000
    assert "did not fit" not in text_of(check_book(whole.data)["documents"][check_book(whole.data)["chapters"][0]])


def test_an_empty_reading_list_still_makes_a_valid_book(tmp_path: Path) -> None:
    edition = assemble_epub([], title="Nothing to read")
    parts = check_book(edition.data)
    assert edition.included == [] and len(parts["chapters"]) == 1
    assert "0 articles" in text_of(parts["documents"][parts["chapters"][0]])
    read_with_ebooklib(edition.data, tmp_path)


def test_the_same_articles_make_the_same_book_identifier() -> None:
    one = assemble_epub(sample_articles(), title="Reading list", modified=WHEN)
    again = assemble_epub(sample_articles(), title="Reading list", modified=WHEN)
    other = assemble_epub(sample_articles()[1:], title="Reading list", modified=WHEN)
    assert one.identifier == again.identifier != other.identifier
    assert one.data == again.data


EPUBCHECK_JAR = next((p for p in (Path("/usr/share/java/epubcheck.jar"),) if p.exists()), None)


@pytest.mark.skipif(EPUBCHECK_JAR is None or shutil.which("java") is None, reason="epubcheck (Debian package) not installed")
def test_epubcheck_finds_no_errors_or_warnings(tmp_path: Path) -> None:
    articles = [rich_article(), *sample_articles()]
    edition = assemble_epub(articles, title="Checked edition", max_bytes=60_000, modified=WHEN)
    assert edition.left_out > 0  # the book with the size-cap note is the one checked
    path = tmp_path / "edition.epub"
    path.write_bytes(edition.data)
    # epubcheck is one short run: the JVM's first compiler tier and its simplest collector
    # halve the CPU it takes (about 13 s to 6.5 s here) and check the book the same way.
    result = subprocess.run(["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", str(EPUBCHECK_JAR),
                             str(path)], capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "0 fatals / 0 errors / 0 warnings" in output, output


def catalog() -> bytes:
    edition = CatalogEntry(
        id="urn:reader:edition:reading-list", title="Reading list (3 articles)", updated=WHEN,
        href="/edition.epub", author="reader", summary="Ready and unread, in line order.",
    )
    articles = [
        CatalogEntry(id=f"urn:reader:article:{i}", title=f"Article & <{i}>", updated=WHEN,
                     href=f"/articles/{i}.epub", author="A. Writer" if i % 2 else None,
                     summary="A summary", published=WHEN, language="en")
        for i in range(1, 4)
    ]
    return build_opds(articles, edition=edition, feed_id="urn:reader:opds", title="reader",
                      updated=WHEN, self_href="/opds")


def test_the_catalog_is_an_opds_acquisition_feed_to_feedparser() -> None:
    parsed = feedparser.parse(catalog())
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    assert parsed.feed.id == "urn:reader:opds" and parsed.feed.title == "reader"
    assert parsed.feed.updated_parsed[:6] == (2026, 3, 4, 5, 6, 7)
    assert parsed.feed.author == "reader"
    assert [e.title for e in parsed.entries] == ["Reading list (3 articles)", "Article & <1>", "Article & <2>", "Article & <3>"]
    assert [e.id for e in parsed.entries][1:] == [f"urn:reader:article:{i}" for i in range(1, 4)]
    for entry in parsed.entries:
        acquisitions = [link for link in entry.links if link.rel == "http://opds-spec.org/acquisition"]
        assert [(link.type, link.href) for link in acquisitions] == [
            ("application/epub+zip", "/edition.epub" if "Reading" in entry.title else f"/articles/{entry.id.rsplit(':', 1)[1]}.epub")
        ]
        assert entry.updated_parsed


def test_the_catalog_has_what_opds_requires_to_lxml() -> None:
    root = etree.fromstring(catalog())
    assert root.tag == "{http://www.w3.org/2005/Atom}feed"
    for required in ("atom:id", "atom:title", "atom:updated", "atom:author/atom:name"):
        assert root.find(required, NS) is not None and root.find(required, NS).text, required
    self_link = root.find("atom:link[@rel='self']", NS)
    assert self_link.get("type") == "application/atom+xml;profile=opds-catalog;kind=acquisition"
    assert root.find("atom:link[@rel='start']", NS) is not None
    entries = root.findall("atom:entry", NS)
    assert len(entries) == 4
    ids = [entry.find("atom:id", NS).text for entry in entries]
    assert len(set(ids)) == len(ids)
    for entry in entries:
        for required in ("atom:id", "atom:title", "atom:updated"):
            assert entry.find(required, NS).text, required
        datetime.strptime(entry.find("atom:updated", NS).text, "%Y-%m-%dT%H:%M:%SZ")
        link = entry.find("atom:link[@rel='http://opds-spec.org/acquisition']", NS)
        assert link.get("type") == "application/epub+zip"
