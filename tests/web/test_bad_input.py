"""Bad input from every side: malformed API calls, and pages that are not articles (a
PDF, an image, a 404, a dead host, a private address, a page too large). A bad page
fails its own article with a reason on its card, and breaks nothing else."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from reader.samples import SAMPLE_FEED_URL

from ..helpers import app_client, article_html, free_port, rss, wait_for

RSS = {"Content-Type": "application/rss+xml"}
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"


# -- helpers -------------------------------------------------------------------------------

async def subscribe(client, pages, links: dict[str, str]) -> dict[str, int]:
    """Subscribe a feed whose items (title -> link) point at the given pages; returns
    title -> article id."""
    items = [{"title": title, "link": link} for title, link in links.items()]
    url = pages.add(f"/feed-{len(pages.routes)}.xml", rss(items), headers=RSS)
    response = await client.post("/api/feeds", json={"url": url})
    assert response.status_code == 201 and response.json()["error"] is None, response.text
    found = (await client.get("/api/articles", params={"feed": response.json()["id"]})).json()["items"]
    return {a["title"]: a["id"] for a in found}


async def article(client, article_id: int) -> dict:
    response = await client.get(f"/api/articles/{article_id}")
    assert response.status_code == 200
    return response.json()


async def tap(client, article_id: int) -> dict:
    response = await client.post(f"/api/articles/{article_id}/queue")
    assert response.status_code == 200, response.text
    return response.json()


async def settled(client, article_id: int) -> dict:
    """Wait until the article is ready or failed, and return it."""
    async def done():
        a = await article(client, article_id)
        return a if a["state"] in ("ready", "failed") else None

    return await wait_for(done, timeout=30)


async def card(client, article_id: int) -> tuple[str, list[str]]:
    """The card on the browse page: its status line and its button labels."""
    response = await client.get("/")
    assert response.status_code == 200
    node = lxml_html.fromstring(response.text).get_element_by_id(f"card-{article_id}")
    status = " ".join(node.find_class("status")[0].text_content().split())
    return status, [" ".join(b.text_content().split()) for b in node.iter("button")]


def assert_error(response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"] and isinstance(body["error"], str) and body["error"]
    return body["error"]


# -- 1. malformed API calls ---------------------------------------------------------------------

async def test_unknown_ids_answer_404_with_a_json_error(client):
    assert_error(await client.get("/api/articles/999"), 404)
    assert_error(await client.post("/api/articles/999/queue"), 404)
    assert_error(await client.delete("/api/articles/999/queue"), 404)
    assert_error(await client.get("/api/articles/999/content"), 404)
    assert_error(await client.delete("/api/feeds/999"), 404)
    stats = (await client.get("/api/stats")).json()
    assert stats["started"] == 0 and stats["queued"] == 0


async def test_malformed_request_bodies_answer_400(client):
    for raw in (b"{not json", b"[1, 2", b"\xff\xfe"):
        assert_error(await client.post("/api/feeds", content=raw,
                                       headers={"Content-Type": "application/json"}), 400)
    assert_error(await client.post("/api/feeds", json=["http://example.org/feed.xml"]), 400)
    assert_error(await client.post("/api/articles/1/queue", content=b"{lane:",
                                   headers={"Content-Type": "application/json"}), 400)
    assert (await client.get("/api/feeds")).json()["feeds"] == []


@pytest.mark.parametrize("url", [
    None, "", "   ", 42, "example.org/feed.xml", "ftp://example.org/feed.xml", "javascript:alert(1)",
    "file:///etc/passwd", "http://", "data:text/xml,<rss/>",
])
async def test_a_bad_feed_url_answers_422_and_subscribes_nothing(client, url):
    assert_error(await client.post("/api/feeds", json={"url": url}), 422)
    assert (await client.get("/api/feeds")).json()["feeds"] == []


@pytest.mark.parametrize("query", [
    {"state": "bogus"}, {"state": "READY"}, {"limit": "0"}, {"limit": "-1"}, {"limit": "501"},
    {"limit": "ten"}, {"limit": "1.5"}, {"before": "x"}, {"feed": "0"},
])
async def test_bad_list_parameters_answer_422(client, query):
    assert_error(await client.get("/api/articles", params=query), 422)


async def test_a_bad_lane_answers_422_and_queues_nothing(client, pages):
    ids = await subscribe(client, pages, {"Lane test": pages.add_article("lane")})
    assert_error(await client.post(f"/api/articles/{ids['Lane test']}/queue", json={"lane": "vip"}), 422)
    assert (await article(client, ids["Lane test"]))["state"] == "new"
    assert (await client.get("/api/stats")).json()["queued"] == 0


# -- 2. pages that are not articles ---------------------------------------------------------------

def _dead_link(pages) -> str:
    return f"http://127.0.0.1:{free_port()}/gone.html"  # nothing listens there


BAD_PAGES = {
    # name: (make the link, check the error)
    "pdf": (lambda pages: pages.add("/paper.pdf", PDF, headers={"Content-Type": "application/pdf"}),
            lambda e: e == "not an HTML page (application/pdf)"),
    "png": (lambda pages: pages.add("/picture.png", PNG, headers={"Content-Type": "image/png"}),
            lambda e: e == "not an HTML page (image/png)"),
    "404": (lambda pages: pages.add("/missing.html", "<h1>Not here</h1>", status=404),
            lambda e: "HTTP 404" in e),
    "dead-host": (_dead_link, lambda e: e.startswith("could not connect")),
    "private-address": (lambda pages: pages.add_article("private"), lambda e: e.startswith("blocked:")),
}


@pytest.mark.parametrize("kind", list(BAD_PAGES))
async def test_a_bad_page_fails_its_article_with_a_reason_and_breaks_nothing_else(settings, pages, kind):
    make_link, error_ok = BAD_PAGES[kind]
    private = kind == "private-address"
    # Headlines first, from the local page server (allowed while subscribing).
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        ids = await subscribe(client, pages, {"Bad one": make_link(pages), "Good one": pages.add_article("good")})
        # With private addresses refused the page server is out of bounds for the good
        # article too: it comes from the offline sample site instead.
        sample = (await client.post("/api/feeds", json={"url": SAMPLE_FEED_URL})).json()
        good_id = (ids["Good one"] if not private else
                   (await client.get("/api/articles", params={"feed": sample["id"], "limit": 1})).json()["items"][0]["id"])
    bad_id = ids["Bad one"]

    async with app_client(settings.replace(allow_private_urls=not private)) as client:
        assert (await tap(client, bad_id))["state"] in ("queued", "cleaning", "failed")
        failed = await settled(client, bad_id)
        assert failed["state"] == "failed"
        assert error_ok(failed["error"]), failed["error"]

        status, buttons = await card(client, bad_id)
        assert status == f"failed: {failed['error']}"
        assert buttons == ["retry", "⋯"]  # queue first, star, mark read and tags: the page's one menu, behind ⋯

        # The direct lane tries again and answers 502 with the same reason.
        assert assert_error(await client.get(f"/api/articles/{bad_id}/content"), 502) == failed["error"]

        # Nothing else broke: the next tap is cleaned.
        await tap(client, good_id)
        good = await settled(client, good_id)
        assert good["state"] == "ready" and good["error"] is None
        content = (await client.get(f"/api/articles/{good_id}/content")).json()
        assert content["words"] > 50
        assert (await card(client, good_id))[1] == ["⋯"]  # ready: a read link, no queue button
        stats = (await client.get("/api/stats")).json()
        assert (stats["started"], stats["failed"], stats["cached"], stats["queued"]) == (3, 2, 1, 0)


async def test_a_page_too_large_fails_with_larger_than(settings, pages):
    big = article_html("Huge", "marker-huge", paragraphs=360).encode()
    assert 50_000 < len(big) < 60_000
    assert len(article_html("Article small", "marker-small")) < 10_000
    async with app_client(settings.replace(max_page_bytes=10_000)) as client:
        ids = await subscribe(client, pages, {"Huge": pages.add("/huge.html", big),
                                              "Small": pages.add_article("small")})
        await tap(client, ids["Huge"])
        failed = await settled(client, ids["Huge"])
        assert failed["state"] == "failed"
        assert "larger than" in failed["error"] and "10 KB" in failed["error"]
        assert (await card(client, ids["Huge"]))[0] == f"failed: {failed['error']}"

        await tap(client, ids["Small"])
        assert (await settled(client, ids["Small"]))["state"] == "ready"


# -- 4. retry, and good content is never lost ----------------------------------------------------

async def test_a_failed_article_is_retried_by_tapping_again_and_succeeds_once_the_page_is_fixed(client, pages):
    link = pages.add("/flaky.html", "down for maintenance", status=503, headers={"Content-Type": "text/plain"})
    ids = await subscribe(client, pages, {"Flaky": link})
    article_id = ids["Flaky"]

    await tap(client, article_id)
    first = await settled(client, article_id)
    assert first["state"] == "failed" and "HTTP 503" in first["error"]

    pages.add_article("flaky", title="Flaky story")  # the same path, now a real page
    assert (await tap(client, article_id))["state"] in ("queued", "cleaning", "ready")
    second = await settled(client, article_id)
    assert second["state"] == "ready" and second["error"] is None
    content = (await client.get(f"/api/articles/{article_id}/content")).json()
    assert "marker-flaky" in content["text"]
    assert await card(client, article_id) == ("ready", ["⋯"])  # nothing to queue; the marks stay, behind ⋯
    # the 503 was tried 1 + fetch_retries times (transient), the fixed page once
    assert pages.hits["/flaky.html"] == 1 + client.app.state.reader.settings.fetch_retries + 1
    assert [r["outcome"] for r in await client.app.state.reader._store.runs(article_id)] == ["failed", "cached"]


async def test_a_ready_article_keeps_its_content_when_its_page_later_breaks(client, pages):
    ids = await subscribe(client, pages, {"Solid": pages.add_article("solid", title="Solid story")})
    article_id = ids["Solid"]
    await tap(client, article_id)
    assert (await settled(client, article_id))["state"] == "ready"
    content = (await client.get(f"/api/articles/{article_id}/content")).json()
    assert "marker-solid" in content["text"]
    stats = (await client.get("/api/stats")).json()

    pages.add("/solid.html", PDF, headers={"Content-Type": "application/pdf"})  # the page breaks
    tapped = await tap(client, article_id)  # tapping a ready article is a no-op
    assert tapped["state"] == "ready" and tapped["position"] is None
    assert (await client.get("/api/queue")).json()["items"] == []
    again = await client.get(f"/api/articles/{article_id}/content")
    assert again.status_code == 200 and again.json() == content

    assert (await article(client, article_id))["state"] == "ready"
    assert (await client.get("/api/stats")).json() == stats
    assert pages.hits["/solid.html"] == 1  # the broken page was never fetched
