"""The second chance in a real Chromium: a site that refuses reader's fetch (a bot wall) and
builds its article with JavaScript fails on the server; the person opens it in the
browser, runs the bookmarklet from the feeds page, and presses Save on the tab it opens.
The rendered page reaches reader by postMessage and a same-origin POST, and the article
is cleaned from it, once."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from .browsing import TIMEOUT_MS
from ..helpers import article_html
from ..loopback import HTML as HTML_TYPE
from ..pictures import png

pytestmark = pytest.mark.browser

WALL = "<!doctype html><html><body><p>Checking your browser…</p></body></html>"


def scripted(marker: str) -> str:
    """A page whose article exists only once its script has run."""
    article = article_html("Built by script", marker).replace(
        "<h1>", '<figure><img src="/img/seen.png" alt="Seen"><figcaption>A picture</figcaption></figure><h1>')
    inner = article.split("<body>", 1)[1].split("</body>", 1)[0]
    return ("<!doctype html><html><head><meta charset='utf-8'><title>Built by script</title></head><body>"
            "<div id='app'></div><template id='later'>" + inner + "</template>"
            "<script>var t=document.getElementById('later');"
            "document.getElementById('app').appendChild(t.content.cloneNode(true));t.remove();</script>"
            "</body></html>")


async def test_the_bookmarklet_finishes_a_failed_article_from_the_rendered_page(page, live_server, pages):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    body = scripted("marker-rendered-by-the-browser")

    def answer(headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        agent = next((v for k, v in headers.items() if k.lower() == "user-agent"), "")
        if agent.startswith("reader/"):
            return 403, HTML_TYPE, WALL.encode()
        return 200, HTML_TYPE, body.encode()

    link = pages.add("/walled.html", answer)
    pages.add("/img/seen.png", png(70), headers={"Content-Type": "image/png"})
    async with httpx.AsyncClient(base_url=live_server.url, timeout=60) as api:
        article_id = (await api.post("/api/articles", json={"url": link})).json()["id"]
        assert (await api.get(f"/api/articles/{article_id}/content")).status_code == 502
        [href] = re.findall(r'href="(javascript:[^"]*)"', (await api.get("/feeds")).text)
    bookmarklet = html.unescape(href).removeprefix("javascript:")

    await page.goto(link)
    await expect(page.locator("#app")).to_contain_text("marker-rendered-by-the-browser")
    async with page.expect_popup() as opened:
        await page.evaluate(bookmarklet)
    confirm = await opened.value
    await expect(confirm.locator(".page-status")).to_contain_text("Your browser's copy of this page")
    await confirm.get_by_role("button", name="Save and clean from this page").click()
    await confirm.wait_for_url(f"{live_server.url}/articles/{article_id}")
    await expect(confirm.locator("#reading-body")).to_contain_text("marker-rendered-by-the-browser")
    # the picture shows, from reader's own copy, under a CSP that allows no other image source
    picture = confirm.locator("#reading-body img")
    assert (await picture.get_attribute("src")).startswith(f"/articles/{article_id}/images/")
    await picture.scroll_into_view_if_needed()
    await confirm.wait_for_function("i => i.complete && i.naturalWidth === 1", arg=await picture.element_handle())
    seen = pages.hits["/img/seen.png"]
    assert seen == 2  # the browser's own view of the site, then reader's one fetch; none from the article page

    async with httpx.AsyncClient(base_url=live_server.url, timeout=60) as api:
        article = (await api.get(f"/api/articles/{article_id}")).json()
        stats = (await api.get("/api/stats")).json()
    assert article["state"] == "ready"
    assert stats["kinds"]["browser"]["started"] == 1 and stats["kinds"]["browser"]["cached"] == 1
    server_fetches = [h for p, h in pages.requests if p == "/walled.html"
                      and any(k.lower() == "user-agent" and v.startswith("reader/") for k, v in h.items())]
    assert len(server_fetches) == 1  # the failed fetch, and nothing since
