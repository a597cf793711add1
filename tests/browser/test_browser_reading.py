"""The reading side in a real Chromium: the keyboard, search, the reader view's live
"cleaning…" body, themes, and the phone layout, with no console errors and no CSP
violations. The README's screenshots (docs/screenshots/, with READER_README_SHOTS=1) are made here from the sample
site that ships in the package (real prose, served by reader's own fetcher, no network),
not from the test pages.

Same Chromium and launch flags as test_browser.py (tests/browser/browsing.py); skipped without /usr/bin/chromium."""

from __future__ import annotations

import datetime
import email.utils
import os
import re
import threading
from pathlib import Path

import httpx
import pytest

from reader.samples import SAMPLE_FEED_URL

from .browsing import ARTICLES, QUEUED, STATUS, TIMEOUT_MS, VIEWPORT, Watch, card, serving
from ..helpers import rss

pytestmark = pytest.mark.browser

# A test run never writes beside tracked files: the shots go to tests/artifacts/readme/ unless
# READER_README_SHOTS=1 asks for the README's own copies to be replaced (done by hand, then committed).
README_SHOTS = (Path(__file__).resolve().parent.parent.parent / "docs" / "screenshots"
                if os.environ.get("READER_README_SHOTS") == "1"
                else Path(__file__).resolve().parent.parent / "artifacts" / "readme")
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def settings(settings):
    """Long deadlines (a fetch is held behind a gate while the test looks), and the
    production's short wait when opening an article that is not ready."""
    return settings.replace(fetch_timeout=60.0, claim_ttl=30.0, open_wait=0.5)


async def no_horizontal_overflow(page) -> bool:
    return await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


async def test_queue_watch_ready_keyboard_open_read_back_and_search(page, live_server, pages):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    gate = threading.Event()  # the queued pages answer once the test has seen them wait
    late = threading.Event()  # the page opened directly answers once the test has seen "cleaning…"
    items = []
    newest = datetime.datetime(2025, 12, 9, 9, 30, tzinfo=datetime.UTC)
    for age, (slug, title, summary) in enumerate(ARTICLES):
        link = pages.add_article(slug, title, gate=late if slug == "offline-first" else gate)
        published = email.utils.format_datetime(newest - datetime.timedelta(days=age), usegmt=True)
        items.append({"title": title, "link": link, "summary": summary, "date": published})
    feed = pages.add("/feed.xml", rss(items, title="Notes on software"), headers={"Content-Type": "application/rss+xml"})
    titles = {slug: title for slug, title, _ in ARTICLES}
    watch = await Watch.start(page, live_server.url)

    # Subscribe through the form.
    await page.goto(live_server.url + "/feeds")
    await page.get_by_label("Feed URL").fill(feed)
    await page.get_by_role("button", name="Subscribe").click()
    await page.wait_for_url(live_server.url + "/feeds")
    await watch.collect_csp()

    # Browse; tap queue on three cards; they wait in line, then reach ready without a reload.
    await page.goto(live_server.url + "/")
    await expect(page.locator("article.card")).to_have_count(len(ARTICLES))
    await page.evaluate("window.__sameDocument = 'still here'")
    for slug in QUEUED:
        the_card = card(page, titles[slug])
        await the_card.get_by_role("button", name="queue", exact=True).click()
        await expect(the_card.locator(".status")).to_have_text(STATUS)
    await expect(card(page, titles[QUEUED[2]]).locator(".status")).to_have_text(re.compile(r"#\d+ in line"))
    gate.set()
    for slug in QUEUED:
        await expect(card(page, titles[slug]).locator(".status")).to_have_text("ready", timeout=60_000)
    assert await page.evaluate("window.__sameDocument") == "still here"

    # The keyboard: j moves to the first card (visible focus), j/k move on and back.
    first = card(page, titles[ARTICLES[0][0]])
    second = card(page, titles[ARTICLES[1][0]])
    await page.keyboard.press("j")
    await expect(first).to_be_focused()
    await expect(first).to_have_class(re.compile(r"\bis-current\b"))
    await page.keyboard.press("j")
    await expect(second).to_be_focused()
    await page.keyboard.press("k")
    await expect(first).to_be_focused()
    # s stars the focused card through its menu's form (filled for it; htmx swaps the card,
    # focus stays)
    await page.keyboard.press("s")
    await expect(first.locator(".star-mark")).to_be_visible()
    await expect(first).to_have_attribute("data-starred", "")
    await expect(first).to_be_focused()
    await first.locator(".more-toggle").click()
    await expect(first.locator('button[data-key="s"]')).to_have_text("unstar")  # behind ⋯
    await page.keyboard.press("Escape")
    await expect(first.locator(".more-menu")).to_be_hidden()
    # ? shows the keys in a dialog; Esc closes it
    await page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    await expect(dialog).to_be_visible()
    await expect(dialog).to_contain_text("queue it first")
    await page.keyboard.press("Escape")
    await expect(dialog).to_be_hidden()
    await watch.collect_csp()

    # o opens the focused card: the cleaned text.
    await page.keyboard.press("o")
    await page.wait_for_url(re.compile(r"/articles/\d+(\?list=[^/]*)?$"))
    slug = ARTICLES[0][0]
    await expect(page.locator("h1")).to_have_text(titles[slug])
    body = page.locator(".reading .body")
    await expect(body).to_contain_text(f"marker-{slug}")
    await expect(body).not_to_contain_text("Copyright footer text")
    await expect(page.locator(".reading")).to_contain_text("min read")
    await expect(page.get_by_role("link", name="original")).to_have_attribute("href", pages.url(f"/{slug}.html"))
    await expect(page.get_by_role("button", name="mark unread")).to_be_visible()  # opening marked it read
    await watch.collect_csp()

    # u goes back to the list, where the article now shows as read.
    await page.keyboard.press("u")
    await page.wait_for_url(live_server.url + "/")
    await expect(card(page, titles[slug])).to_have_attribute("data-read", "yes")

    # / focuses the search box; typing there fires no shortcut (the query has u, s, q and j in it).
    await page.keyboard.press("/")
    box = page.get_by_role("searchbox", name="Search articles")
    await expect(box).to_be_focused()
    phrase = "marker-queues"  # in the cleaned page body only: the feed's summary never says it
    await page.keyboard.type(phrase + " jqsu")
    await expect(box).to_have_value(phrase + " jqsu")
    assert page.url == live_server.url + "/"
    await box.fill(phrase)
    await box.press("Enter")
    await page.wait_for_url(re.compile(r"/\?q=marker-queues$"))
    results = page.locator("article.card")
    await expect(results).to_have_count(1)
    await expect(results.first.get_by_role("link", name=titles["queues"], exact=True)).to_be_visible()
    await expect(results.first.locator(".snippet mark").first).to_have_text(re.compile("marker", re.I))
    await watch.collect_csp()

    # An article opened before it is cleaned: the feed's summary and "cleaning…", then the
    # full text swaps in by itself (no reload) and the poll stops.
    await page.goto(live_server.url + "/")
    await card(page, titles["offline-first"]).get_by_role("link", name=titles["offline-first"]).click()
    await page.wait_for_url(re.compile(r"/articles/\d+(\?list=[^/]*)?$"))
    await expect(page.locator("#reading-body")).to_contain_text("cleaning…")
    await expect(page.locator("#reading-body")).to_contain_text("the case for apps that work without a network")
    await page.evaluate("window.__sameDocument = 'reading'")
    late.set()
    await expect(page.locator("#reading-body .body")).to_contain_text("marker-offline-first", timeout=60_000)
    await expect(page.locator("#reading-body")).not_to_contain_text("cleaning…")
    await expect(page.locator("#reading-body[hx-trigger]")).to_have_count(0)
    await expect(page.locator("#reading-time")).to_contain_text("min read")
    assert await page.evaluate("window.__sameDocument") == "reading"
    # s stars in the reader view too
    await page.keyboard.press("s")
    await expect(page.locator("#reading-tools").get_by_role("button", name="unstar")).to_be_visible()
    await watch.collect_csp()

    assert watch.problems == []
    # Every write the page made carried the CSRF token, and the writes were really seen:
    # the subscribe form, the three taps, and the two stars (list and reader view).
    assert watch.written() == ["/feeds"] + ["/articles/{id}/queue"] * len(QUEUED) + ["/articles/{id}/star"] * 2


async def test_theme_and_text_choices_are_remembered_and_the_phone_layout_fits(chromium, live_server, pages):
    from playwright.async_api import expect

    link = pages.add_article("one", "One article")
    feed = pages.add("/feed.xml", rss([{"title": "One article", "link": link, "summary": "s"}]),
                     headers={"Content-Type": "application/rss+xml"})
    async with httpx.AsyncClient() as api:
        assert (await api.post(live_server.url + "/api/feeds", json={"url": feed})).status_code == 201
    context = await chromium.new_context(viewport=PHONE, color_scheme="light", is_mobile=True, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    watch = await Watch.start(page, live_server.url)
    try:
        await page.goto(live_server.url + "/")
        root = page.locator("html")
        toggle = page.get_by_role("button", name=re.compile("^Theme"))
        await expect(toggle).to_have_text("Theme: system")
        await expect(root).not_to_have_attribute("data-theme", re.compile("."))
        bg_light = await page.evaluate("getComputedStyle(document.body).backgroundColor")
        await toggle.click()
        await expect(toggle).to_have_text("Theme: light")
        await toggle.click()
        await expect(toggle).to_have_text("Theme: dark")
        await expect(root).to_have_attribute("data-theme", "dark")
        bg_dark = await page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg_dark != bg_light
        assert await no_horizontal_overflow(page)
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=ARTIFACTS / "phone-browse-dark.png")
        await page.reload()
        await expect(root).to_have_attribute("data-theme", "dark")  # remembered across a reload
        await expect(page.get_by_role("button", name=re.compile("^Theme"))).to_have_text("Theme: dark")

        await page.get_by_role("link", name="One article", exact=True).click()
        await page.wait_for_url(re.compile(r"/articles/\d+(\?list=[^/]*)?$"))
        await expect(page.locator(".reading .body")).to_contain_text("marker-one")

        async def size() -> float:
            return await page.evaluate("parseFloat(getComputedStyle(document.querySelector('.reading .body')).fontSize)")

        async def font() -> str:
            return await page.evaluate("getComputedStyle(document.querySelector('.reading .body')).fontFamily")

        before_size, before_font = await size(), await font()
        await page.locator("details.text-menu > summary").click()  # the font and size are in the text menu (Aa)
        await page.get_by_role("button", name="Larger text").click()
        await page.get_by_role("button", name="Use a sans-serif font").click()
        assert await size() > before_size and await font() != before_font
        assert await no_horizontal_overflow(page)
        await page.screenshot(path=ARTIFACTS / "phone-article-dark.png")
        await page.reload()
        assert await size() > before_size and await font() != before_font  # remembered
        await expect(root).to_have_attribute("data-theme", "dark")
        await watch.collect_csp()
        assert watch.problems == []
    finally:
        await context.close()


async def test_readme_screenshots_from_the_sample_site(chromium, settings):
    """docs/screenshots/ for the README: the shipped sample magazine (real prose), browsed,
    some articles cleaned, one starred, one read; then the reader view and a search."""
    from playwright.async_api import expect

    async with serving(settings.replace(allow_private_urls=False)) as server:
        api = httpx.AsyncClient(base_url=server.url, timeout=60)
        assert (await api.post("/api/feeds", json={"url": SAMPLE_FEED_URL})).status_code == 201
        items = (await api.get("/api/articles")).json()["items"]
        by_title = {i["title"]: i["id"] for i in items}
        typography = by_title["On typography for long reads"]
        for title in ("On typography for long reads", "Notes on SQLite WAL mode", "Keeping a reading log"):
            assert (await api.post(f"/api/articles/{by_title[title]}/queue")).status_code == 200
        context = await chromium.new_context(viewport=VIEWPORT, color_scheme="light")
        context.set_default_timeout(TIMEOUT_MS)
        page = await context.new_page()
        watch = await Watch.start(page, server.url)
        try:
            README_SHOTS.mkdir(parents=True, exist_ok=True)
            await page.goto(server.url + "/")
            await expect(page.locator("article.card")).to_have_count(len(items))
            cleaned = ("On typography for long reads", "Notes on SQLite WAL mode", "Keeping a reading log")
            for title in cleaned:  # the page's own poll brings them to ready
                await expect(card(page, title).locator(".status")).to_have_text("ready", timeout=60_000)
            await api.post(f"/api/articles/{by_title['Notes on SQLite WAL mode']}/star")
            await api.post(f"/api/articles/{by_title['Keeping a reading log']}/read")
            await page.reload()
            await expect(card(page, "Notes on SQLite WAL mode").locator(".star-mark")).to_be_visible()
            for scheme in ("light", "dark"):
                await page.emulate_media(color_scheme=scheme)
                await page.screenshot(path=README_SHOTS / f"browse-{scheme}.png")
            await page.emulate_media(color_scheme="light")
            await watch.collect_csp()
            phone = await chromium.new_context(viewport=PHONE, color_scheme="light", is_mobile=True, has_touch=True)
            try:
                small = await phone.new_page()
                await small.goto(server.url + "/")
                await expect(card(small, "Notes on SQLite WAL mode").locator(".star-mark")).to_be_visible()
                await small.screenshot(path=README_SHOTS / "browse-phone.png")
                await small.goto(f"{server.url}/articles/{typography}")
                await expect(small.locator(".reading .body")).to_be_visible()
                await small.screenshot(path=README_SHOTS / "article-phone.png")
            finally:
                await phone.close()

            await page.goto(f"{server.url}/articles/{typography}")
            await expect(page.locator(".reading .body")).to_be_visible()
            for scheme in ("light", "dark"):
                await page.emulate_media(color_scheme=scheme)
                await page.screenshot(path=README_SHOTS / f"article-{scheme}.png")
            await page.emulate_media(color_scheme="light")
            await watch.collect_csp()

            await page.goto(server.url + "/?q=measure")
            await expect(page.locator("article.card .snippet mark").first).to_be_visible()
            await page.screenshot(path=README_SHOTS / "search-light.png")
            await watch.collect_csp()
            assert watch.problems == []
        finally:
            await context.close()
            await api.aclose()
