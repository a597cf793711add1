"""The reading pass in a real Chromium: the reading list from its nav item, filters that
combine (with the search box too), reading through the list with ] and [, bulk read with
its undo, and done (one, in bulk with its undo, not done). Chromium is Debian's; without
/usr/bin/chromium these tests are skipped."""

from __future__ import annotations

import re

import httpx
import pytest

from .browsing import ARTICLES, TIMEOUT_MS, Watch
from ..helpers import published, rss, wait_for

pytestmark = pytest.mark.browser

TAPPED = ["queues", "sqlite-wal", "typography"]  # in this order: the reading list's


async def test_reading_list_read_through_combined_filters_and_bulk_read_with_undo(page, live_server, pages):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    items = [{"title": title, "link": pages.add_article(slug, title), "summary": summary, "date": published(i)}
             for i, (slug, title, summary) in enumerate(ARTICLES)]
    feed = pages.add("/feed.xml", rss(items, title="Notes on software"), headers={"Content-Type": "application/rss+xml"})
    titles = {slug: title for slug, title, _ in ARTICLES}
    watch = await Watch.start(page, live_server.url)

    async with httpx.AsyncClient(base_url=live_server.url, timeout=60) as api:
        assert (await api.post("/api/feeds", json={"url": feed})).status_code == 201
        ids = {a["title"]: a["id"] for a in (await api.get("/api/articles")).json()["items"]}
        for slug in TAPPED:
            assert (await api.post(f"/api/articles/{ids[titles[slug]]}/queue", json={})).status_code == 200

        async def all_ready() -> bool:
            items = (await api.get("/api/articles", params={"state": "ready"})).json()["items"]
            return len(items) == len(TAPPED)

        await wait_for(all_ready, 60.0, interval=0.05)

    # The nav item counts what is waiting; it opens the list in tap order.
    await page.goto(live_server.url + "/")
    nav = page.get_by_role("navigation", name="Main").get_by_role("link", name=re.compile("Ready to read"))
    await expect(nav).to_have_text(re.compile(r"Ready\s+to read\s+3"))
    await nav.click()
    await page.wait_for_url(re.compile(r"/\?state=ready&unread=1$"))
    rows = page.locator("article.card h2 a")
    await expect(rows).to_have_text([titles[s] for s in TAPPED])
    await watch.collect_csp()

    # Reading through: open the first, ] to the next and the next, then the end of the list.
    await rows.first.click()
    await expect(page.locator(".reading h1")).to_have_text(titles[TAPPED[0]])
    await expect(page.locator('a[rel="next"]')).to_contain_text(titles[TAPPED[1]])
    await page.keyboard.press("]")
    await expect(page.locator(".reading h1")).to_have_text(titles[TAPPED[1]])
    await page.keyboard.press("]")
    await expect(page.locator(".reading h1")).to_have_text(titles[TAPPED[2]])
    await expect(page.locator(".read-through")).to_contain_text("The end of ready to read.")
    await expect(page.locator('a[rel="next"]')).to_have_count(0)
    # the three are read now, and not done: still on the list, and the count says so
    await expect(page.get_by_role("navigation", name="Main").get_by_role("link", name=re.compile("Ready to read"))
                 ).to_have_text(re.compile(r"Ready\s+to read\s+3"))
    await watch.collect_csp()

    # In a list that keeps read articles (ready, without unread), [ goes back through it.
    await page.goto(live_server.url + "/?state=ready")
    await rows.last.click()
    await expect(page.locator(".reading h1")).to_have_text(titles[TAPPED[2]])
    await page.keyboard.press("[")
    await expect(page.locator(".reading h1")).to_have_text(titles[TAPPED[1]])
    await expect(page.locator('a[rel="prev"]')).to_contain_text(titles[TAPPED[0]])
    await watch.collect_csp()

    # Combined filters: unread, then ready keeps unread; the search box keeps both.
    await page.goto(live_server.url + "/")
    filters = page.get_by_role("navigation", name="Filters")
    await filters.get_by_role("link", name=re.compile(r"^unread")).click()
    await page.wait_for_url(re.compile(r"/\?unread=1$"))
    await expect(page.locator("article.card")).to_have_count(len(ARTICLES) - len(TAPPED))
    await filters.get_by_role("link", name="new", exact=True).click()
    await page.wait_for_url(re.compile(r"/\?state=new&unread=1$"))
    await expect(page.locator("article.card")).to_have_count(len(ARTICLES) - len(TAPPED))
    box = page.get_by_role("searchbox", name="Search articles")
    await box.fill("honest positions")  # in the summary of "Queues beat rejections", which is ready, not new
    await box.press("Enter")
    await page.wait_for_url(re.compile(r"/\?state=new&unread=1&q=honest"))
    await expect(page.locator("article.card")).to_have_count(0)
    await filters.get_by_role("link", name="all", exact=True).click()
    await page.wait_for_url(re.compile(r"/\?q=honest"))
    await expect(page.locator("article.card h2 a")).to_have_text([titles["queues"]])
    await watch.collect_csp()

    # Bulk: mark the unread cards on the page read, then undo exactly that.
    await page.goto(live_server.url + "/?unread=1")
    unread = await page.locator("article.card h2 a").all_inner_texts()
    assert len(unread) == len(ARTICLES) - len(TAPPED)
    await page.get_by_role("button", name="Mark these read").click()
    await expect(page.locator(".bulk-notice")).to_contain_text(f"Marked {len(unread)} articles read.")
    await expect(page.locator("article.card")).to_have_count(0)
    await page.get_by_role("button", name="Undo").click()
    await expect(page.locator(".bulk-notice")).to_contain_text(f"{len(unread)} articles are unread again.")
    await expect(page.locator("article.card h2 a")).to_have_text(unread)
    # the three read by reading through stay read (the undo restored only what it changed),
    # and on the reading list, as a bulk read never takes one off it
    await page.goto(live_server.url + "/?state=ready&unread=1")
    await expect(page.locator("article.card h2 a")).to_have_text([titles[s] for s in TAPPED])
    await expect(page.locator("article.card .unread-mark")).to_have_count(0)
    await watch.collect_csp()

    assert watch.problems == []
    assert set(watch.written()) == {"/articles/read", "/articles/read/undo"}


async def test_an_article_opened_and_left_is_still_ready_to_read_until_done(page, live_server, pages):
    """Open a tapped article and go back: it is still on Ready to read. Done takes it off,
    and not done (or the bulk done's undo) puts it back, in its place."""
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    items = [{"title": title, "link": pages.add_article(slug, title), "summary": summary, "date": published(i)}
             for i, (slug, title, summary) in enumerate(ARTICLES)]
    feed = pages.add("/feed.xml", rss(items, title="Notes on software"), headers={"Content-Type": "application/rss+xml"})
    first, second = ({slug: title for slug, title, _ in ARTICLES}[s] for s in TAPPED[:2])
    watch = await Watch.start(page, live_server.url)
    async with httpx.AsyncClient(base_url=live_server.url, timeout=60) as api:
        assert (await api.post("/api/feeds", json={"url": feed})).status_code == 201
        ids = {a["title"]: a["id"] for a in (await api.get("/api/articles")).json()["items"]}
        for title in (first, second):
            assert (await api.post(f"/api/articles/{ids[title]}/queue", json={})).status_code == 200

        async def both_ready() -> bool:
            return len((await api.get("/api/articles", params={"state": "ready"})).json()["items"]) == 2

        await wait_for(both_ready, 60.0, interval=0.05)
    rows = page.locator("article.card h2 a")
    nav = page.get_by_role("navigation", name="Main").get_by_role("link", name=re.compile("Ready to read"))

    # opened, and back: still ready to read, now read
    await page.goto(live_server.url + "/?state=ready&unread=1")
    await expect(rows).to_have_text([first, second])
    await rows.first.click()
    await expect(page.locator(".reading h1")).to_have_text(first)
    await page.go_back()
    await page.wait_for_url(re.compile(r"/\?state=ready&unread=1$"))
    await expect(rows).to_have_text([first, second])
    await expect(nav).to_have_text(re.compile(r"Ready\s+to read\s+2"))
    await watch.collect_csp()

    # done, in the reader view: it leaves the list
    await rows.first.click()
    tools = page.locator("#reading-tools")
    await tools.get_by_role("button", name="done", exact=True).click()
    await expect(tools.get_by_role("button", name="not done", exact=True)).to_be_visible()
    await nav.click()
    await expect(rows).to_have_text([second])
    await expect(nav).to_have_text(re.compile(r"Ready\s+to read\s+1"))
    await watch.collect_csp()

    # in bulk: every one on the page done, and the notice's undo brings exactly that back
    await page.get_by_role("button", name="Mark these done").click()
    await expect(page.locator(".bulk-notice")).to_contain_text("Marked 1 article done.")
    await expect(page.locator("article.card")).to_have_count(0)
    await page.get_by_role("button", name="Undo").click()
    await expect(page.locator(".bulk-notice")).to_contain_text("1 article is back on the reading list.")
    await expect(rows).to_have_text([second])
    await watch.collect_csp()

    # not done, from the headlines: back on the list in its place, ahead of the other
    await page.goto(live_server.url + "/")
    await page.get_by_role("link", name=first, exact=True).click()
    await tools.get_by_role("button", name="not done", exact=True).click()
    await expect(tools.get_by_role("button", name="done", exact=True)).to_be_visible()
    await nav.click()
    await expect(rows).to_have_text([first, second])
    await expect(nav).to_have_text(re.compile(r"Ready\s+to read\s+2"))
    await watch.collect_csp()

    assert watch.problems == []
    assert set(watch.written()) == {"/articles/{id}/done", "/articles/done", "/articles/done/undo"}
