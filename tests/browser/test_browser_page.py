"""The second chance: an article the server could not clean is finished from the page
the person's browser sent (the bookmarklet's POST /save/page), through the same claim,
exactly once; guarded like every other write."""

from __future__ import annotations

import asyncio

from ..helpers import app_client, article_html
from ..pictures import image_srcs, png

WALL = "<!doctype html><html><body><p>Checking your browser…</p></body></html>"


async def _failed_article(client, pages, slug: str = "walled") -> tuple[int, str]:
    """An article behind a bot wall: the server's fetch gets 403 and the article fails."""
    link = pages.add(f"/{slug}.html", WALL, status=403)
    article_id = int((await client.post("/api/articles", json={"url": link})).json()["id"])
    assert (await client.get(f"/api/articles/{article_id}/content")).status_code == 502
    assert (await client.get(f"/api/articles/{article_id}")).json()["state"] == "failed"
    return article_id, link


def rendered(marker: str) -> bytes:
    """What the browser shows once the wall let it through: the article, an image in it."""
    page = article_html("Behind the wall", marker)
    return page.replace("<h1>", '<figure><img src="/img/seen.png" alt="Seen"></figure><h1>').encode()


async def test_a_failed_article_is_finished_from_the_posted_page_exactly_once(settings, pages):
    pages.add("/img/seen.png", png(5), headers={"Content-Type": "image/png"}, delay=0.3)
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id, link = await _failed_article(client, pages)
        card = await client.get("/", params={"state": "failed"})
        assert "this site needs your browser; open it and press <em>Save to reader</em>" in card.text
        body = rendered("marker-from-the-browser")
        posts = [client.post("/save/page", params={"url": link, "title": "Behind"}, content=body,
                             headers={"Content-Type": "text/html; charset=utf-8"}) for _ in range(2)]
        answers = await asyncio.gather(*posts)
        assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
        assert {a.json()["article"] for a in answers} == {article_id}
        assert answers[0].json()["location"] == f"/articles/{article_id}"
        article = (await client.get(f"/api/articles/{article_id}")).json()
        content = (await client.get(f"/api/articles/{article_id}/content")).json()
        runs = (await client.get("/api/stats")).json()
        stats_page = (await client.get("/stats")).text
    assert '<tr><th scope="row">browser</th><td>1</td><td>1</td><td>0</td>' in stats_page
    assert article["state"] == "ready" and article["error"] is None
    assert "marker-from-the-browser" in content["text"]
    assert image_srcs(content["html"]) and image_srcs(content["html"])[0].startswith(f"/articles/{article_id}/")
    assert runs["kinds"]["browser"] == {"started": 1, "cached": 1, "failed": 0, "abandoned": 0, "running": 0,
                                        "bytes": len(body) + len(png(5))}
    assert runs["kinds"]["fetch"]["failed"] == 1 and runs["kinds"]["fetch"]["started"] == 1
    assert pages.hits["/walled.html"] == 1  # the server never fetched it again
    assert pages.hits["/img/seen.png"] == 1


async def test_a_posted_page_for_an_article_already_ready_changes_nothing(settings, pages):
    link = pages.add_article("ready")
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id = int((await client.post("/api/articles", json={"url": link})).json()["id"])
        before = (await client.get(f"/api/articles/{article_id}/content")).json()
        answer = await client.post("/save/page", params={"url": link}, content=rendered("marker-late"))
        after = (await client.get(f"/api/articles/{article_id}/content")).json()
        stats = (await client.get("/api/stats")).json()
    assert answer.status_code == 200 and answer.json()["article"] == article_id
    assert after == before and stats["kinds"]["browser"]["started"] == 0


async def test_a_posted_page_with_no_article_in_it_fails_with_a_reason_and_stays_failed(settings, pages):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id, link = await _failed_article(client, pages)
        empty = b"<!doctype html><html><head><title>x</title></head><body><div></div></body></html>"
        answer = await client.post("/save/page", params={"url": link}, content=empty)
        article = (await client.get(f"/api/articles/{article_id}")).json()
    assert answer.status_code == 502 and "no readable text" in answer.json()["error"]
    assert article["state"] == "failed"


async def test_a_cross_site_or_tokenless_post_of_a_page_is_refused(settings, pages):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        article_id, link = await _failed_article(client, pages)
        body = rendered("marker-forged")
        cross = await client.post("/save/page", params={"url": link}, content=body,
                                  headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"})
        foreign = await client.post("/save/page", params={"url": link}, content=body,
                                    headers={"Origin": "http://evil.example"})
        state = (await client.get(f"/api/articles/{article_id}")).json()["state"]
    async with app_client(settings.replace(serve_workers=0, extract_processes=0), csrf=False) as bare:
        tokenless = await bare.post("/save/page", params={"url": link}, content=body)
        stats = (await bare.get("/api/stats")).json()
    assert (cross.status_code, foreign.status_code, tokenless.status_code) == (403, 403, 403)
    assert state == "failed" and stats["kinds"]["browser"]["started"] == 0


async def test_an_oversized_page_is_413_and_starts_nothing(settings, pages):
    small = settings.replace(serve_workers=0, extract_processes=0, max_page_bytes=40_000)
    async with app_client(small) as client:
        article_id, link = await _failed_article(client, pages)
        answer = await client.post("/save/page", params={"url": link}, content=b"<p>" + b"x" * 50_000)
        stats = (await client.get("/api/stats")).json()
        state = (await client.get(f"/api/articles/{article_id}")).json()["state"]
    assert answer.status_code == 413
    assert stats["kinds"]["browser"]["started"] == 0 and state == "failed"


async def test_the_save_page_opened_by_the_bookmarklet_asks_for_the_page(settings, pages):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        plain = await client.get("/save", params={"url": "https://example.com/a"})
        asking = await client.get("/save", params={"url": "https://example.com/a", "page": "1"})
        feeds = await client.get("/feeds")
    assert "save-page.js" not in plain.text
    assert "save-page.js" in asking.text and 'data-page-max="' in asking.text
    assert "window.open(" in feeds.text and "postMessage" in feeds.text
