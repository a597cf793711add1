"""Editions through the app: GET /edition.epub (the reading list with the browse filters),
GET /articles/{id}.epub, the OPDS catalog at /opds, HTTP Basic on those paths when a
password is set (throttled like the login), the optional mark-read after a download, and
`reader edition --out`. Real SQLite, a real page server with real images, real cleaning."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

import feedparser
import httpx

from .. import commands
from ..helpers import app_client, rss, subscribe_url, wait_for
from ..loopback import article_html
from ..books import NS, check_book, png, read_with_ebooklib, text_of

RSS = {"Content-Type": "application/rss+xml"}
PNG = {"Content-Type": "image/png"}
PICTURE = png(3, 2)
EPUB = "application/epub+zip"


def illustrated(title: str, slug: str) -> str:
    """An article page whose text carries a picture, as the extractor keeps it."""
    picture = f'<figure><img src="/pictures/{slug}.png" alt="picture {slug}"><figcaption>Figure</figcaption></figure>'
    page = article_html(title, f"marker-{slug}")
    return page.replace("<p>Paragraph number 2", picture + "<p>Paragraph number 2", 1)


async def subscribe(client: httpx.AsyncClient, pages, slugs: list[str], *, title: str = "Edition feed",
                    path: str = "/feed.xml") -> tuple[int, list[int]]:
    items = [{"title": f"Title {s}", "link": pages.url(f"/{s}.html"),
              "date": f"Mon, 0{i + 1} Nov 2026 10:00:00 GMT"} for i, s in enumerate(slugs)]
    for s in slugs:
        pages.add(f"/{s}.html", illustrated(f"Title {s}", s))
        pages.add(f"/pictures/{s}.png", PICTURE, headers=PNG)
    return await subscribe_url(client, pages, pages.add(path, rss(items, title=title), headers=RSS), slugs)


async def make_ready(client: httpx.AsyncClient, *ids: int) -> None:
    """Tap each (the only way in) and wait for the worker to clean it; nothing is opened,
    so each stays unread."""
    for article_id in ids:
        assert (await client.post(f"/api/articles/{article_id}/queue")).status_code == 200

    async def all_ready() -> bool:
        states = [(await client.get(f"/api/articles/{i}")).json()["state"] for i in ids]
        assert "failed" not in states
        return all(state == "ready" for state in states)

    await wait_for(all_ready, timeout=60)


async def unread(client: httpx.AsyncClient, article_id: int) -> bool:
    return (await client.get(f"/api/articles/{article_id}")).json()["read"] is False


def chapter_titles(parts: dict) -> list[str]:
    return [parts["documents"][c].find(".//x:header/x:h1", NS).text for c in parts["chapters"][1:]]


async def test_the_edition_is_the_reading_list_with_its_pictures(settings, pages, tmp_path: Path) -> None:
    async with app_client(settings) as client:
        feed, [a, b, c, d] = await subscribe(client, pages, ["a", "b", "c", "d"])
        other, [e] = await subscribe(client, pages, ["e"], title="Other feed", path="/other.xml")
        await make_ready(client, a, b, c, e)
        assert (await client.post(f"/api/articles/{c}/done")).status_code == 200  # done: not on the list
        assert (await client.post(f"/api/articles/{e}/read")).status_code == 200  # read, not done: on it
        await client.post(f"/api/articles/{b}/star")

        response = await client.get("/edition.epub")
        assert response.status_code == 200
        assert response.headers["content-type"] == EPUB
        assert response.headers["content-disposition"].startswith("attachment; filename=")
        assert response.headers["cache-control"] == "no-store"
        parts = check_book(response.content)
        listing = [i["id"] for i in (await client.get("/api/articles", params={"state": "ready", "unread": 1})).json()["items"]]
        titles = {a: "Title a", b: "Title b", e: "Title e"}
        assert chapter_titles(parts) == [titles[i] for i in listing]  # the listing's order, d (never tapped) and c (done) out
        chapter = parts["documents"][parts["chapters"][1 + listing.index(a)]]
        header = text_of(chapter.find(".//x:header", NS))
        assert "Edition feed" in header and "Test Author" in header
        assert "marker-a" in text_of(chapter)
        [image] = chapter.findall(".//x:img", NS)
        assert image.get("alt") == "picture a"
        book = parts["zip"]
        assert book.read(f"{parts['base']}/{image.get('src')}") == PICTURE
        # the picture was stored with the article when it was cleaned: the book embeds
        # that copy and fetches nothing
        assert pages.hits["/pictures/a.png"] == 1
        read_with_ebooklib(response.content, tmp_path)

        by_feed = check_book((await client.get(f"/edition.epub?feed={other}")).content)
        assert chapter_titles(by_feed) == ["Title e"]
        starred = check_book((await client.get("/edition.epub?starred=1")).content)
        assert chapter_titles(starred) == ["Title b"]
        # Downloading marks nothing read unless the setting says so.
        assert await unread(client, a) and await unread(client, b)

        bad = await client.get("/edition.epub?feed=abc")
        assert bad.status_code == 422 and "feed" in bad.text and "Traceback" not in bad.text
        assert (await client.get("/edition.epub?feed=999999")).status_code == 404
        assert (await client.get("/edition.epub?starred=maybe")).status_code == 422


async def test_one_article_as_a_book_and_what_cannot_be_one(settings, pages) -> None:
    async with app_client(settings) as client:
        _, [a, b] = await subscribe(client, pages, ["a", "b"])
        await make_ready(client, a)
        response = await client.get(f"/articles/{a}.epub")
        assert response.status_code == 200 and response.headers["content-type"] == EPUB
        parts = check_book(response.content)
        assert chapter_titles(parts) == ["Title a"]
        assert len(parts["chapters"][1:]) == 1
        assert await unread(client, a)  # a download is not a reading

        not_ready = await client.get(f"/articles/{b}.epub")
        assert not_ready.status_code == 409 and "not cleaned yet" in not_ready.text
        assert (await client.get(f"/api/articles/{b}")).json()["state"] == "new"  # nothing was started
        assert (await client.get("/articles/999999.epub")).status_code == 404
        assert (await client.get("/articles/99999999999999999999999.epub")).status_code == 404


async def test_the_opds_catalog_lists_the_edition_and_each_ready_article(settings, pages) -> None:
    async with app_client(settings) as client:
        _, [a, b, c] = await subscribe(client, pages, ["a", "b", "c"])
        await make_ready(client, a, b)
        await client.post(f"/api/articles/{b}/done")  # done, but still ready: in the catalog, not in the edition
        response = await client.get("/opds")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/atom+xml;profile=opds-catalog;kind=acquisition")
        parsed = feedparser.parse(response.content)
        assert not parsed.bozo, parsed.get("bozo_exception")
        assert parsed.feed.id and parsed.feed.title and parsed.feed.updated
        edition, *articles = parsed.entries
        assert "(1 article)" in edition.title
        assert sorted(e.title for e in articles) == ["Title a", "Title b"]
        for entry in parsed.entries:
            [link] = [link for link in entry.links if link.rel == "http://opds-spec.org/acquisition"]
            assert link.type == EPUB
            assert link.href.startswith("http://reader.test/")
            book = await client.get(link.href)
            assert book.status_code == 200 and book.headers["content-type"] == EPUB
            check_book(book.content)
        edition_book = check_book((await client.get(edition.links[0].href)).content)
        assert chapter_titles(edition_book) == ["Title a"]


def basic(password: str, user: str = "koreader") -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


async def test_with_a_password_the_catalog_and_books_take_http_basic_and_wrong_ones_are_throttled(settings, pages) -> None:
    password = "a long enough password"
    async with app_client(settings.replace(password=password)) as client:
        asked = await client.get("/opds")
        assert asked.status_code == 401
        assert asked.headers["www-authenticate"].startswith('Basic realm="reader"')
        for path in ("/edition.epub", "/articles/1.epub"):
            assert (await client.get(path)).status_code == 401
        assert (await client.get("/opds", headers=basic(password))).status_code == 200
        assert (await client.get("/opds", headers={"Authorization": f"Bearer {password}"})).status_code == 200
        book = await client.get("/edition.epub", headers=basic(password, user=""))
        assert book.status_code == 200 and book.headers["content-type"] == EPUB
        # Basic opens only what an e-reader needs: the pages still want the login. A
        # browser that answered /opds's challenge sends Basic everywhere after: not counted.
        for _ in range(6):
            page = await client.get("/", headers=basic("not the password"))
            assert page.status_code == 303 and page.headers["location"].startswith("/login")
        page = await client.get("/", headers=basic(password))
        assert page.status_code == 303 and page.headers["location"].startswith("/login")
        assert (await client.get("/api/articles", headers=basic(password))).status_code == 401
        assert (await client.get("/opds", headers={"Authorization": "Basic !!!not base64"})).status_code == 401

        # Four more wrong tries make five failures with the malformed one: the login's limit.
        wrong = [await client.get("/opds", headers=basic("wrong password")) for _ in range(4)]
        assert [r.status_code for r in wrong] == [401] * 4
        throttled = await client.get("/opds", headers=basic(password))
        assert throttled.status_code == 429 and int(throttled.headers["retry-after"]) > 0
        login = await client.post("/login", data={"password": password})
        assert login.status_code == 429  # one throttle for every way in


async def test_marking_an_editions_articles_read_is_a_setting_and_only_what_is_in_the_book(settings, pages) -> None:
    async with app_client(settings.replace(edition_marks_read=True, edition_max_bytes=6_000)) as client:
        _, [a, b, c] = await subscribe(client, pages, ["a", "b", "c"])
        await make_ready(client, a, b, c)
        assert (await client.head("/edition.epub")).status_code == 200
        assert all([await unread(client, i) for i in (a, b, c)])  # a HEAD is no download
        response = await client.get("/edition.epub")
        parts = check_book(response.content)
        included = chapter_titles(parts)
        assert 1 <= len(included) < 3  # the cap stopped it
        first_page = text_of(parts["documents"][parts["chapters"][0]])
        assert f"{3 - len(included)} more article" in first_page and "did not fit" in first_page
        ids = {"Title a": a, "Title b": b, "Title c": c}
        in_book = {ids[t] for t in included}

        async def marked() -> bool:  # read, and done: off the reading list, not in the next edition
            listing = (await client.get("/api/articles", params={"state": "ready", "unread": 1})).json()["items"]
            return all([not await unread(client, i) for i in in_book]) and {
                item["id"] for item in listing} == set(ids.values()) - in_book

        await wait_for(marked)
        for left_out in set(ids.values()) - in_book:
            assert await unread(client, left_out)
        # One article's book is not an edition: it marks nothing. (The ASGI client returns
        # once the app is done, background work included.)
        rest = min(set(ids.values()) - in_book)
        assert (await client.get(f"/articles/{rest}.epub")).status_code == 200
        assert await unread(client, rest)


async def test_the_edition_command_writes_the_same_book(settings, pages, tmp_path: Path) -> None:
    async with app_client(settings) as client:
        feed, [a, b] = await subscribe(client, pages, ["a", "b"])
        await make_ready(client, a, b)
        await client.post(f"/api/articles/{b}/star")
    out = tmp_path / "out" / "edition.epub"
    env = {**os.environ, "READER_ALLOW_PRIVATE_URLS": "1", "READER_DB": str(settings.db)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = commands.run(["edition", *args], env=env)
        return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())

    done = run("--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "2 articles" in done.stderr and str(out) in done.stderr
    parts = check_book(out.read_bytes())
    assert sorted(chapter_titles(parts)) == ["Title a", "Title b"]
    assert any(parts["documents"][c].find(".//x:img", NS) is not None for c in parts["chapters"][1:])

    starred = run("--out", str(out), "--starred")
    assert starred.returncode == 0, starred.stderr
    assert chapter_titles(check_book(out.read_bytes())) == ["Title b"]
    by_feed = run("--out", str(tmp_path / "feed.epub"), "--feed", str(feed))
    assert by_feed.returncode == 0 and len(chapter_titles(check_book((tmp_path / "feed.epub").read_bytes()))) == 2

    missing = run("--out", str(tmp_path / "x.epub"), "--feed", "424242")
    assert missing.returncode == 2 and "no such feed" in missing.stderr and "Traceback" not in missing.stderr
    unwritable = run("--out", str(tmp_path))  # a directory
    assert unwritable.returncode == 2 and "cannot write" in unwritable.stderr and "Traceback" not in unwritable.stderr


async def test_another_sites_page_sending_the_person_to_the_edition_marks_nothing_read(settings, pages) -> None:
    """With READER_EDITION_MARKS_READ, a download marks its articles read. A top-level
    navigation is let through from anywhere (it may be the person following a link), so
    any site could send its visitor to /edition.epub and empty their reading list."""
    async with app_client(settings.replace(edition_marks_read=True)) as client:
        _, [a, b] = await subscribe(client, pages, ["a", "b"])
        await make_ready(client, a, b)
        navigation = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
        for headers in (navigation, {"Origin": "https://evil.example", "Referer": "https://evil.example/"}):
            response = await client.get("/edition.epub", headers=headers)
            assert response.status_code == 200 and len(chapter_titles(check_book(response.content))) == 2
            assert await unread(client, a) and await unread(client, b)  # the book, but nothing marked
        # the person's own download (same origin, or an e-reader app that sends neither header)
        own = await client.get("/edition.epub", headers={"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate"})
        assert own.status_code == 200
        await wait_for(lambda: _all_read(client, a, b))


async def _all_read(client: httpx.AsyncClient, *ids: int) -> bool:
    return not any([await unread(client, i) for i in ids])


async def test_an_article_book_marks_its_highlights_and_lists_them_at_its_end(settings, pages) -> None:
    async with app_client(settings) as client:
        _, [a] = await subscribe(client, pages, ["a"])
        await make_ready(client, a)
        made = await client.post(f"/api/articles/{a}/highlights", json={"quote": "marker-a", "note": "<i>why</i>"})
        assert made.status_code == 200, made.text
        parts = check_book((await client.get(f"/articles/{a}.epub")).content)  # valid XHTML, as before
        chapter = parts["documents"][parts["chapters"][1]]
        assert [m.text for m in chapter.iter(f"{{{NS['x']}}}mark")] == ["marker-a"]
        assert "Highlights" in text_of(chapter) and "<i>why</i>" in text_of(chapter)
