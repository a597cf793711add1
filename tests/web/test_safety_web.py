"""The web side of issue 26's second pass: no GET another site's link sends the person to
starts work (the API's direct lane, the editions' image fetches); reading goes on when the
disk cannot take a write; images are private responses. Real SQLite files, a real loopback
page server counting what is fetched, the real app."""

from __future__ import annotations

import base64
import contextlib
import sqlite3
import time

from reader.settings import Settings

from ..books import png
from ..helpers import LoopbackServer, app_client, state_of, subscribe_slugs
from ..test_bad_disk import Disk, disk, made, on_disk  # noqa: F401 (the tiny tmpfs and its settings)

# A followed link on another site's page, as Chromium sends it: no Origin on a navigation.
FOLLOWED_FROM_ELSEWHERE = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}


# -- no GET from another site starts work --------------------------------------------------------------------------

async def test_another_sites_link_to_the_apis_content_cleans_nothing(quiet, pages):
    """The API's direct lane cleans an article when its text is asked for. A top-level
    navigation carries the session cookie (SameSite=Lax), so any page could make reader
    fetch and clean the person's articles by linking here: it gets 403 and a reason, with
    nothing fetched, until the text is there."""
    _, [a] = await subscribe_slugs(quiet, pages, ["a"])
    fetched = pages.hits.copy()
    refused = await quiet.get(f"/api/articles/{a}/content", headers=FOLLOWED_FROM_ELSEWHERE)
    assert refused.status_code == 403
    assert "another site" in refused.json()["error"]
    assert pages.hits == fetched and await state_of(quiet, a) == "new"

    # the person's own request (a script, the CLI: no Sec-Fetch-Site) cleans it, as always
    own = await quiet.get(f"/api/articles/{a}/content")
    assert own.status_code == 200 and "marker-a" in own.json()["text"]
    # once the text is there, another site's link reads it (it cannot read the answer anyway)
    again = await quiet.get(f"/api/articles/{a}/content", headers=FOLLOWED_FROM_ELSEWHERE)
    assert again.status_code == 200 and again.json()["text"] == own.json()["text"]


def _cleaned_before_images_were_kept(db, article_id: int, picture: str) -> None:
    """The text as reader stored it before images were kept with an article: the picture
    still named by its address on the article's site."""
    html = f'<p>Old text marker-old</p><figure><img src="{picture}" alt="an old picture"></figure>'
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("INSERT INTO contents (article_id, title, html, text, words, cleaned_at) "
                     "VALUES (?, 'Old', ?, 'Old text marker-old', 3, ?)", (article_id, html, time.time()))


async def test_another_sites_link_to_an_edition_fetches_no_image(settings, pages):
    """An article cleaned before images were kept names them by their URLs, and a book of it
    fetches them. A navigation to /edition.epub or /articles/{id}.epub from another site
    gets the book of what is stored, with no fetch; an e-reader app (no Sec-Fetch-Site:
    HTTP Basic, or none) still gets the pictures."""
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        _, [a] = await subscribe_slugs(client, pages, ["old"])
        picture = pages.add("/pictures/old.png", png(3, 2), "image/png")
        _cleaned_before_images_were_kept(settings.db, a, picture)
        assert await state_of(client, a) == "ready"
        for path in ("/edition.epub", f"/articles/{a}.epub"):
            book = await client.get(path, headers=FOLLOWED_FROM_ELSEWHERE)
            assert book.status_code == 200 and book.headers["content-type"] == "application/epub+zip", path
        assert pages.hits["/pictures/old.png"] == 0

        for path in ("/edition.epub", f"/articles/{a}.epub"):
            assert (await client.get(path)).status_code == 200
        assert pages.hits["/pictures/old.png"] == 2


async def test_an_e_reader_app_with_http_basic_still_gets_the_pictures(settings, pages):
    """E-reader apps send HTTP Basic and no Sec-Fetch-Site: they are the person."""
    password = "a long enough password"
    basic = {"Authorization": "Basic " + base64.b64encode(f"reader:{password}".encode()).decode()}
    async with app_client(settings.replace(serve_workers=0, extract_processes=0, password=password)) as client:
        client.headers["Authorization"] = f"Bearer {password}"  # the API, as a script uses it
        _, [a] = await subscribe_slugs(client, pages, ["old"])
        picture = pages.add("/pictures/old.png", png(3, 2), "image/png")
        _cleaned_before_images_were_kept(settings.db, a, picture)
        for path in ("/edition.epub", f"/articles/{a}.epub"):
            book = await client.get(path, headers=basic)
            assert book.status_code == 200 and book.headers["content-type"] == "application/epub+zip", path
        assert pages.hits["/pictures/old.png"] == 2


# -- reading goes on when writing cannot -----------------------------------------------------------------------------

async def _unread(client, article_id: int) -> bool:
    return (await client.get(f"/api/articles/{article_id}")).json()["read"] is False


async def test_with_the_disk_full_an_unread_article_opens_and_says_the_mark_was_not_saved(
        on_disk: Settings, disk: Disk, pages: LoopbackServer) -> None:
    """Opening marks an article read; with the disk full that write fails, and it took the
    page down (503) for every unread article while read ones opened fine."""
    async with app_client(on_disk) as client:
        _, [a] = await subscribe_slugs(client, pages, ["a"])
        assert (await client.get(f"/api/articles/{a}/content")).status_code == 200  # ready, still unread
        disk.fill()
        for _ in range(2):  # and again: a page saying so is never kept
            page = await client.get(f"/articles/{a}")
            assert page.status_code == 200 and "marker-a" in page.text
            assert "Not marked read" in page.text and "the disk is full" in page.text
            assert page.headers["cache-control"] == "no-store"
        assert await _unread(client, a)

        disk.free()
        page = await client.get(f"/articles/{a}")
        assert page.status_code == 200 and "Not marked read" not in page.text
        assert not await _unread(client, a)


async def test_on_a_read_only_database_an_unread_article_opens_and_says_the_mark_was_not_saved(
        on_disk: Settings, disk: Disk, pages: LoopbackServer) -> None:
    [a] = await made(on_disk, pages, ["a"])
    async with app_client(on_disk) as client:
        assert (await client.get(f"/api/articles/{a}/content")).status_code == 200
    disk.remount("ro")
    async with app_client(on_disk) as client:
        page = await client.get(f"/articles/{a}")
        assert page.status_code == 200 and "marker-a" in page.text
        assert "Not marked read" in page.text and "the database is read-only" in page.text
        assert await _unread(client, a)


# -- images are private ------------------------------------------------------------------------------------------

async def test_an_articles_images_are_private_responses(quiet, pages):
    """With a password an image is a private answer: `public` would let a shared cache (a
    proxy, a CDN) hand it to anyone who asks for its address."""
    pages.add("/pictures/p.png", png(4, 4), "image/png")
    page = pages.add("/p.html", '<html><body><article><h1>P</h1>' + "<p>Enough words to be prose. " * 40 +
                     f'</p><img src="{pages.url("/pictures/p.png")}" alt="p"><p>' + "More prose here. " * 40 +
                     "</p></article></body></html>")
    saved = (await quiet.post("/api/articles", json={"url": page})).json()["id"]
    html = (await quiet.get(f"/api/articles/{saved}/content")).json()["html"]
    [src] = [part.split('"')[0] for part in html.split('src="')[1:]]
    image = await quiet.get(src)
    assert image.status_code == 200
    assert image.headers["cache-control"] == "private, max-age=31536000, immutable"


async def test_no_answer_of_the_persons_is_left_to_a_shared_caches_guess(quiet):
    """An answer with no Cache-Control may be stored by a shared cache with a heuristic
    lifetime. The exports and the JSON gave none; the static files (the same for everyone,
    open without a login) are left to the browser's cache."""
    for path in ("/library.html", "/feeds.opml", "/api/articles", "/api/feeds", "/api/stats", "/api/queue"):
        response = await quiet.get(path)
        assert response.status_code == 200, path
        assert response.headers["cache-control"] == "no-store", path
    assert "cache-control" not in (await quiet.get("/static/style.css")).headers


# -- logging out clears the device ------------------------------------------------------------------------------------

async def test_logging_out_tells_the_browser_to_clear_what_it_saved(settings):
    """The browser side (the worker's caches, the outbox) is tests/browser/test_browser_logout.py;
    this is the header that asks for it, and the button that sends the logout."""
    password = "a long enough password"
    async with app_client(settings.replace(serve_workers=0, password=password)) as client:
        assert (await client.post("/login", data={"password": password, "next": "/"})).status_code == 303
        page = await client.get("/")
        assert 'action="/logout"' in page.text
        out = await client.post("/logout")
        assert out.status_code == 303 and out.headers["clear-site-data"] == '"cache", "storage"'
    async with app_client(settings.replace(serve_workers=0)) as client:  # no password: no logout to offer
        assert 'action="/logout"' not in (await client.get("/")).text
