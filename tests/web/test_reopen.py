"""Reopening a ready article: the page is kept rendered by its version (the row, the
cleaned content, the CSRF token its forms carry), so a reopen must still show the
article as it is now and carry the token of the browser asking."""

from __future__ import annotations

import re

import httpx

from reader.web.csrf import CSRF_COOKIE

from ..helpers import RSS, app_client, rss



async def _ready_article(client, pages) -> int:
    pages.add_article("kept", title="Kept article")
    feed = pages.add("/feed.xml", rss([{"title": "Kept article", "link": pages.url("/kept.html"),
                                        "date": "Mon, 02 Nov 2026 10:00:00 GMT"}]), headers=RSS)
    response = await client.post("/api/feeds", json={"url": feed})
    assert response.status_code in (200, 201), response.text
    [item] = (await client.get("/api/articles")).json()["items"]
    first = await client.get(f"/articles/{item['id']}")  # cleaned right then, and marked read
    assert first.status_code == 200 and "marker-kept" in first.text
    return item["id"]


def _tools(page: str) -> list[str]:
    """The labels of the reader view's star, read and done buttons."""
    tools = page.split('id="reading-tools"', 1)[1].split('class="reading-prefs"', 1)[0]
    return re.findall(r'<button type="submit" class="secondary"[^>]*>([^<]+)</button>', tools)


async def test_a_reopened_article_shows_its_state_now(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _ready_article(client, pages)
        for _ in range(3):  # rendered once, then answered from what was rendered
            page = await client.get(f"/articles/{article_id}")
            assert page.status_code == 200 and "marker-kept" in page.text
            assert _tools(page.text) == ["star", "mark unread", "done"]
        assert (await client.post(f"/api/articles/{article_id}/star")).json()["starred"] is True
        assert _tools((await client.get(f"/articles/{article_id}")).text) == ["unstar", "mark unread", "done"]
        assert (await client.delete(f"/api/articles/{article_id}/star")).json()["starred"] is False
        assert _tools((await client.get(f"/articles/{article_id}")).text) == ["star", "mark unread", "done"]
        # marked unread elsewhere: the next open marks it read again, and says so
        assert (await client.delete(f"/api/articles/{article_id}/read")).json()["read"] is False
        assert _tools((await client.get(f"/articles/{article_id}")).text) == ["star", "mark unread", "done"]
        assert (await client.get(f"/api/articles/{article_id}")).json()["read"] is True
        # done elsewhere: the page says "not done"
        assert (await client.post(f"/api/articles/{article_id}/done")).json()["done"] is True
        assert _tools((await client.get(f"/articles/{article_id}")).text) == ["star", "mark unread", "not done"]
        [feed] = (await client.get("/api/feeds")).json()["feeds"]
        feed_id = feed["id"]
        renamed = await client.post(f"/feeds/{feed_id}/rename", data={"title": "Renamed feed"})
        assert renamed.status_code == 303
        assert "Renamed feed" in (await client.get(f"/articles/{article_id}")).text


async def test_every_browser_gets_a_reopened_page_with_its_own_token(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _ready_article(client, pages)
        mine = client.cookies.get(CSRF_COOKIE)
        assert f'name="csrf" value="{mine}"' in (await client.get(f"/articles/{article_id}")).text
        transport = httpx.ASGITransport(app=client.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://reader.test") as other:
            page = await other.get(f"/articles/{article_id}")
            theirs = other.cookies.get(CSRF_COOKIE)
            assert theirs and theirs != mine
            assert f'name="csrf" value="{theirs}"' in page.text and mine not in page.text
            again = await other.get(f"/articles/{article_id}")
            assert f'name="csrf" value="{theirs}"' in again.text and mine not in again.text


async def test_a_reopened_unchanged_article_is_a_304_and_a_changed_one_is_not(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _ready_article(client, pages)
        page = await client.get(f"/articles/{article_id}")
        etag = page.headers["etag"]
        assert page.headers["cache-control"] == "no-cache"  # kept, but asked about every time
        again = await client.get(f"/articles/{article_id}", headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
        weak = await client.get(f"/articles/{article_id}", headers={"If-None-Match": f'"other", W/{etag}'})
        assert weak.status_code == 304
        assert (await client.post(f"/api/articles/{article_id}/star")).json()["starred"] is True
        changed = await client.get(f"/articles/{article_id}", headers={"If-None-Match": etag})
        assert changed.status_code == 200 and changed.headers["etag"] != etag
        assert _tools(changed.text) == ["unstar", "mark unread", "done"]
        # another browser's token is in its page: the first browser's tag is not its tag
        transport = httpx.ASGITransport(app=client.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://reader.test") as other:
            theirs = await other.get(f"/articles/{article_id}", headers={"If-None-Match": changed.headers["etag"]})
            assert theirs.status_code == 200 and "marker-kept" in theirs.text


async def test_a_page_still_being_cleaned_has_no_etag(settings, pages):
    async with app_client(settings.replace(serve_workers=0, open_wait=0.0)) as client:
        pages.add("/gone.html", "gone", status=410)
        feed = pages.add("/feed.xml", rss([{"title": "Gone", "link": pages.url("/gone.html")}]), headers=RSS)
        assert (await client.post("/api/feeds", json={"url": feed})).status_code in (200, 201)
        [item] = (await client.get("/api/articles")).json()["items"]
        page = await client.get(f"/articles/{item['id']}")
        assert page.status_code == 200 and "etag" not in page.headers
        assert page.headers["cache-control"] == "no-store"


async def test_a_reopened_article_shows_its_neighbours_titles_now(settings, pages):
    """The page names the next article by its title: when that title changes (a saved
    link takes its page's title once cleaned), the kept page is not the page any more."""
    async with app_client(settings.replace(serve_workers=0)) as client:
        article_id = await _ready_article(client, pages)
        link = pages.add_article("saved", title="The saved page's own title")
        saved = (await client.post("/api/articles", json={"url": link})).json()["id"]
        # read already, so that its cleaning changes nothing else on the page (the nav's count)
        assert (await client.post(f"/api/articles/{saved}/read")).status_code == 200
        listed = {"list": ""}  # the headlines, newest first: the saved link comes before it
        page = await client.get(f"/articles/{article_id}", params=listed)
        assert page.status_code == 200 and f'href="/articles/{saved}?list=' in page.text
        assert "The saved page&#39;s own title" not in page.text  # known by its address so far
        assert (await client.get(f"/api/articles/{saved}/content")).status_code == 200  # cleaned: titled
        again = await client.get(f"/articles/{article_id}", params=listed,
                                 headers={"If-None-Match": page.headers["etag"]})
        assert again.status_code == 200 and "The saved page&#39;s own title" in again.text
