"""A reopened ready article is answered from the page rendered before, for as long as the
library's version (schema v12, kept by triggers) says nothing the page shows has changed.
Each test here keeps a page (opens it twice), changes one thing the page shows, in this
process or in another one (the CLI, a worker, a plain SQLite connection), and reopens:
the page must show the change. Without the trigger that counts that change, the kept
page would be answered and the test fails."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import httpx

from reader.web.csrf import CSRF_COOKIE

from ..helpers import RSS, app_client, assert_strict_csp, rss, run_cli, wait_for, worker_process


async def _saved_ready(client: httpx.AsyncClient, pages, slug: str, *, opened: bool = True) -> int:
    """A saved link, cleaned (ready) and, if `opened`, opened once (which marks it read)."""
    url = pages.add_article(slug, title=f"Title {slug}")
    article_id = (await client.post("/api/articles", json={"url": url})).json()["id"]
    assert (await client.get(f"/api/articles/{article_id}/content")).status_code == 200
    if opened:
        first = await client.get(f"/articles/{article_id}")
        assert first.status_code == 200 and f"marker-{slug}" in first.text
    return article_id


async def _kept(client: httpx.AsyncClient, path: str, **params: str) -> str:
    """Open `path` twice (the second answer is the page kept from the first) and return it."""
    first = await client.get(path, params=params)
    again = await client.get(path, params=params)
    assert first.status_code == again.status_code == 200
    assert again.headers["etag"] == first.headers["etag"] and again.text == first.text
    return again.text


def _wallabag(tmp_path: Path, url: str, **entry: object) -> Path:
    """A wallabag export of one entry for `url`: it merges into the saved link there."""
    path = tmp_path / "wallabag.json"
    path.write_text(json.dumps([{"url": url, "is_archived": 0, "is_starred": 0, **entry}]))
    return path


def _next_link(page: str) -> str | None:
    found = re.search(r'rel="next"[^>]*href="/articles/(\d+)', page)
    return found.group(1) if found else None


def _prev_link(page: str) -> str | None:
    found = re.search(r'rel="prev"[^>]*href="/articles/(\d+)', page)
    return found.group(1) if found else None


def _count(page: str) -> int:
    return int(re.search(r'class="count">(\d+)<', page).group(1))


async def test_a_note_imported_by_another_process_shows(settings, pages, tmp_path):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _saved_ready(client, pages, "noted")
        assert "Your highlights and notes" not in await _kept(client, f"/articles/{article_id}")
        export = _wallabag(tmp_path, pages.url("/noted.html"),
                           annotations=[{"quote": "a line worth keeping", "text": "mine"}])
        code, out, err = await run_cli(settings.db, "import", str(export))
        assert code == 0, err
        page = (await client.get(f"/articles/{article_id}")).text
        # a quote becomes a highlight; this one is not in the page's text, so it is listed detached
        assert "a line worth keeping" in page and "Not found in the current text" in page


async def test_a_tag_imported_by_another_process_shows(settings, pages, tmp_path):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _saved_ready(client, pages, "tagged")
        assert "Tags (none)" in await _kept(client, f"/articles/{article_id}")
        code, out, err = await run_cli(settings.db, "import", str(_wallabag(tmp_path, pages.url("/tagged.html"),
                                                                          tags=["faraway"])))
        assert code == 0, err
        page = (await client.get(f"/articles/{article_id}")).text
        assert "#faraway" in page and "Tags (none)" not in page


async def test_tags_set_and_cleared_here_show(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _saved_ready(client, pages, "retagged")
        other = await _saved_ready(client, pages, "also-tagged", opened=False)
        await _kept(client, f"/articles/{article_id}")
        for tagged in (other, article_id):
            assert (await client.post(f"/api/articles/{tagged}/tags", json={"tags": ["one"]})).status_code == 200
        assert "#one" in await _kept(client, f"/articles/{article_id}")
        # the tag stays in use (by the other article): only this article's link to it goes
        assert (await client.post(f"/api/articles/{article_id}/tags", json={"tags": []})).status_code == 200
        page = (await client.get(f"/articles/{article_id}")).text
        assert "#one" not in page and "Tags (none)" in page


async def test_text_rewritten_by_another_process_shows(settings, pages):
    """Only the contents row changes (not its cleaning time, so no trigger of the
    reading list's order touches the article's row)."""
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _saved_ready(client, pages, "rewritten")
        assert "marker-rewritten" in await _kept(client, f"/articles/{article_id}")
        with sqlite3.connect(settings.db) as other:
            other.execute("UPDATE contents SET html = '<p>marker-second-edition</p>' WHERE article_id = ?",
                          (article_id,))
        page = (await client.get(f"/articles/{article_id}")).text
        assert "marker-second-edition" in page and "marker-rewritten" not in page


async def test_a_reading_position_shows(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _saved_ready(client, pages, "placed")
        assert "data-position=" not in await _kept(client, f"/articles/{article_id}")
        put = await client.put(f"/api/articles/{article_id}/position", json={"position": 0.4})
        assert put.status_code == 200, put.text
        assert 'data-position="0.4"' in (await client.get(f"/articles/{article_id}")).text


async def test_a_feed_renamed_by_another_process_shows(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        pages.add_article("fed", title="From a feed")
        feed = pages.add("/feed.xml", rss([{"title": "From a feed", "link": pages.url("/fed.html")}],
                                          title="Old name"), headers=RSS)
        assert (await client.post("/api/feeds", json={"url": feed})).status_code in (200, 201)
        [item] = (await client.get("/api/articles")).json()["items"]
        assert (await client.get(f"/articles/{item['id']}")).status_code == 200
        assert "Old name" in await _kept(client, f"/articles/{item['id']}")
        with sqlite3.connect(settings.db) as other:
            other.execute("UPDATE feeds SET title = 'New name'")
        page = (await client.get(f"/articles/{item['id']}")).text
        assert "New name" in page and "Old name" not in page


async def test_the_next_article_cleaned_by_a_worker_process_shows(settings, pages):
    """Reading through the reading list: an article a `reader worker` process cleans
    after the page was kept becomes its next, and the nav counts it."""
    async with app_client(settings.replace(serve_workers=0)) as client:
        first = await _saved_ready(client, pages, "first")
        assert (await client.post(f"/api/articles/{first}/done")).status_code == 200  # off the list
        url = pages.add_article("later", title="Cleaned later")
        later = (await client.post("/api/articles", json={"url": url})).json()["id"]
        kept = await _kept(client, f"/articles/{first}")
        assert _next_link(kept) is None and _count(kept) == 0
        assert (await client.post(f"/api/articles/{later}/queue")).status_code == 200
        with worker_process(settings):
            async def ready() -> bool:
                return (await client.get(f"/api/articles/{later}")).json()["state"] == "ready"
            await wait_for(ready)
        page = (await client.get(f"/articles/{first}")).text
        assert _next_link(page) == str(later) and _count(page) == 1


async def test_a_new_headline_from_another_process_becomes_the_previous(settings, pages):
    """Opened from the headlines (newest first): a refresh in another process adds a newer
    article, which is then the one before it."""
    async with app_client(settings.replace(serve_workers=0)) as client:
        pages.add_article("old", title="Older headline")
        items = [{"title": "Older headline", "link": pages.url("/old.html"), "date": "Mon, 02 Nov 2026 10:00:00 GMT"}]
        feed = pages.add("/feed.xml", rss(items), headers=RSS)
        assert (await client.post("/api/feeds", json={"url": feed})).status_code in (200, 201)
        [item] = (await client.get("/api/articles")).json()["items"]
        assert (await client.get(f"/articles/{item['id']}")).status_code == 200
        assert _prev_link(await _kept(client, f"/articles/{item['id']}", list="")) is None
        items.insert(0, {"title": "Newer headline", "link": pages.url("/new.html"),
                         "date": "Tue, 03 Nov 2026 10:00:00 GMT"})
        pages.add("/feed.xml", rss(items), headers=RSS)
        code, out, err = await run_cli(settings.db, "refresh")
        assert code == 0, err
        newer = next(a["id"] for a in (await client.get("/api/articles")).json()["items"] if a["id"] != item["id"])
        page = (await client.get(f"/articles/{item['id']}", params={"list": ""})).text
        assert _prev_link(page) == str(newer) and "Newer headline" in page


async def test_the_next_article_done_elsewhere_leaves_the_reading_list(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        first = await _saved_ready(client, pages, "one")
        second = await _saved_ready(client, pages, "two", opened=False)
        assert (await client.post(f"/api/articles/{first}/done")).status_code == 200
        kept = await _kept(client, f"/articles/{first}")
        assert _next_link(kept) == str(second) and _count(kept) == 1
        with sqlite3.connect(settings.db) as other:  # another device's done, applied by another process
            other.execute("UPDATE articles SET done_at = 1 WHERE id = ?", (second,))
        page = (await client.get(f"/articles/{first}")).text
        assert _next_link(page) is None and _count(page) == 0


async def test_a_feed_moved_into_the_folder_brings_its_articles_into_the_list(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        ids = {}
        for name, date in (("a", "Mon, 02 Nov 2026 10:00:00 GMT"), ("b", "Tue, 03 Nov 2026 10:00:00 GMT")):
            pages.add_article(name, title=f"Headline {name}")
            feed = pages.add(f"/{name}.xml", rss([{"title": f"Headline {name}", "link": pages.url(f"/{name}.html"),
                                                   "date": date}], title=f"Feed {name}"), headers=RSS)
            ids[name] = (await client.post("/api/feeds", json={"url": feed})).json()["id"]
        assert (await client.patch(f"/api/feeds/{ids['a']}", json={"folder": "Reading"})).status_code == 200
        older = next(a["id"] for a in (await client.get("/api/articles")).json()["items"]
                     if a["title"] == "Headline a")
        assert (await client.get(f"/articles/{older}")).status_code == 200
        listed = {"list": "folder=Reading"}
        assert _prev_link(await _kept(client, f"/articles/{older}", **listed)) is None
        with sqlite3.connect(settings.db) as other:
            other.execute("UPDATE feeds SET folder = 'Reading' WHERE id = ?", (ids["b"],))
        page = (await client.get(f"/articles/{older}", params=listed)).text
        assert _prev_link(page) is not None and "Headline b" in page


async def test_a_page_kept_for_the_offline_copy_does_not_skip_marking_the_open(settings, pages):
    """The service worker saves an unread article without marking it read; the page it
    got is kept, but the person's open still marks the article read."""
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _saved_ready(client, pages, "saved-offline", opened=False)
        for _ in range(2):
            saved = await client.get(f"/articles/{article_id}", headers={"X-Reader-Offline": "save"})
            assert saved.status_code == 200 and "data-unread" in saved.text
        assert (await client.get(f"/api/articles/{article_id}")).json()["read"] is False
        opened = await client.get(f"/articles/{article_id}", headers={"If-None-Match": saved.headers["etag"]})
        assert opened.status_code == 200 and "data-unread" not in opened.text
        assert (await client.get(f"/api/articles/{article_id}")).json()["read"] is True


async def test_a_kept_page_of_an_article_since_deleted_is_not_found(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _saved_ready(client, pages, "removed")
        page = await client.get(f"/articles/{article_id}")
        with sqlite3.connect(settings.db) as other:
            other.execute("PRAGMA foreign_keys = ON")
            other.execute("DELETE FROM articles WHERE id = ?", (article_id,))
        gone = await client.get(f"/articles/{article_id}", headers={"If-None-Match": page.headers["etag"]})
        assert gone.status_code == 404 and "no such article" in gone.text


async def test_a_kept_page_passes_every_access_check_first(settings, pages):
    """Kept pages are answered inside the access layer: a browser without the session
    (even one with the same CSRF cookie, so the same kept page's key) is sent to log in,
    with or without the page's ETag; another host name and another site's embedding are
    refused; the kept page carries the security headers."""
    async with app_client(settings.replace(serve_workers=0, password="correct horse")) as client:
        assert (await client.post("/login", data={"password": "correct horse", "next": "/"})).status_code == 303
        article_id = await _saved_ready(client, pages, "guarded")
        path = f"/articles/{article_id}"
        await _kept(client, path)
        kept = await client.get(path)
        assert_strict_csp(kept)
        transport = httpx.ASGITransport(app=client.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://reader.test") as stranger:
            stranger.cookies.set(CSRF_COOKIE, client.cookies[CSRF_COOKIE])
            for headers in ({}, {"If-None-Match": kept.headers["etag"]}):
                answer = await stranger.get(path, headers=headers)
                assert answer.status_code == 303 and answer.headers["location"].startswith("/login")
                assert "marker-guarded" not in answer.text
        assert (await client.get(path, headers={"Host": "rebound.example"})).status_code == 421
        embedded = await client.get(path, headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors",
                                                   "Sec-Fetch-Dest": "image"})
        assert embedded.status_code == 403 and "marker-guarded" not in embedded.text


async def test_a_page_opened_from_a_list_a_claim_decides_is_kept_by_what_it_shows(settings, pages):
    """Opened from the queued list, whose members change as claims expire (no write, so
    no new version): the page is kept by a hash of what was read for it, and still shows
    a change at once."""
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _saved_ready(client, pages, "from-the-line")
        listed = {"list": "state=queued"}
        first = await client.get(f"/articles/{article_id}", params=listed)
        again = await client.get(f"/articles/{article_id}", params=listed, headers={"If-None-Match": first.headers["etag"]})
        assert again.status_code == 304
        assert (await client.post(f"/api/articles/{article_id}/star")).status_code == 200
        page = await client.get(f"/articles/{article_id}", params=listed, headers={"If-None-Match": first.headers["etag"]})
        assert page.status_code == 200 and ">unstar<" in page.text
