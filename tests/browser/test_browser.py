"""The htmx page in a real Chromium, where a person uses it: subscribe through the form,
tap "queue" on three cards (each card swaps in place, no page load), watch them reach
"ready" by polling alone, open one and read the cleaned text. Along the way: no console
errors, no CSP violations, no failed requests. Screenshots go to tests/artifacts/
(gitignored); the README's come from test_browser_reading.py.

Chromium is Debian's (`apt-get install -y chromium chromium-driver`), never a browser
downloaded by `playwright install`. Without /usr/bin/chromium these tests are skipped.
"""

from __future__ import annotations

import datetime
import email.utils
import re
import threading
from pathlib import Path

import pytest

from .browsing import ARTICLES, QUEUED, STATUS, TIMEOUT_MS, Watch, card
from ..helpers import rss

pytestmark = pytest.mark.browser

# Test runs write here (gitignored); the README's images come from test_browser_reading.py,
# which shoots the sample site's real prose rather than this file's test pages.
SCREENSHOTS = Path(__file__).resolve().parent.parent / "artifacts"


@pytest.fixture
def settings(settings):
    """The shared test settings with deadlines long enough to hold a fetch behind a gate
    while the test looks at the page (the shared 10 s would fail a gated article)."""
    return settings.replace(fetch_timeout=60.0, claim_ttl=30.0)


async def shoot(page, name: str) -> None:
    """The viewport in light and dark, as tests/artifacts/<name>-light.png and -dark.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await page.screenshot(path=SCREENSHOTS / f"{name}-{scheme}.png")
    await page.emulate_media(color_scheme="light")


async def test_subscribe_queue_watch_ready_and_read(page, live_server, pages):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    gate = threading.Event()  # article pages answer only once the test lets them
    items = []
    newest = datetime.datetime(2025, 12, 9, 9, 30, tzinfo=datetime.UTC)
    for age, (slug, title, summary) in enumerate(ARTICLES):
        link = pages.add_article(slug, title, gate=gate)
        published = email.utils.format_datetime(newest - datetime.timedelta(days=age), usegmt=True)
        items.append({"title": title, "link": link, "summary": summary, "date": published})
    feed = pages.add("/feed.xml", rss(items, title="Notes on software"),
                     headers={"Content-Type": "application/rss+xml"})
    watch = await Watch.start(page, live_server.url)

    # 1. Subscribe through the feeds page form.
    await page.goto(live_server.url + "/feeds")
    await page.get_by_label("Feed URL").fill(feed)
    await page.get_by_role("button", name="Subscribe").click()
    await page.wait_for_url(live_server.url + "/feeds")
    # A plain same-origin form post must not be mistaken for a cross-site one (with
    # Referrer-Policy: no-referrer, Chromium sends it with `Origin: null`).
    await expect(page.locator("body")).not_to_contain_text("cross-site request refused", timeout=5_000)
    await expect(page.locator("ul.feeds")).to_contain_text("Notes on software")
    await expect(page.locator("ul.feeds")).to_contain_text(f"{len(ARTICLES)} articles")
    await watch.collect_csp()

    # 2. Browse: every headline is a card, each new one offering "queue".
    await page.goto(live_server.url + "/")
    await expect(page.locator("article.card")).to_have_count(len(ARTICLES))
    for _, title, _ in ARTICLES:
        await expect(card(page, title)).to_be_visible()
        await expect(card(page, title).get_by_role("button", name="queue", exact=True)).to_be_visible()
    await page.evaluate("window.__sameDocument = 'still here'")
    loads = len(watch.loads)

    titles = {slug: title for slug, title, _ in ARTICLES}
    for slug in QUEUED:
        the_card = card(page, titles[slug])
        before = await the_card.element_handle()
        await the_card.get_by_role("button", name="queue", exact=True).click()
        # Swapped in place: a new element (outerHTML) with a queue status, no "queue" button.
        await expect(the_card.locator(".status")).to_have_text(STATUS)
        await expect(the_card.get_by_role("button", name="queue", exact=True)).to_have_count(0)
        assert not await before.evaluate("e => e.isConnected"), "the card was not swapped"
    assert await page.evaluate("window.__sameDocument") == "still here", "a tap reloaded the page"
    assert len(watch.loads) == loads and page.url == live_server.url + "/", watch.loads
    await expect(page.locator("article.card")).to_have_count(len(ARTICLES))

    # While the pages are held back, the first tap is being cleaned and the others wait
    # in line: what a person sees right after tapping. The cards update by polling.
    first, second, third = (card(page, titles[s]) for s in QUEUED)
    await expect(first.locator(".status")).to_have_text("cleaning…")
    # (with its wait: the first guess before any history, one article of a site at a time)
    await expect(second.locator(".status")).to_have_text(re.compile(r"^#1 in line( · ready in about \d+ s)?$"))
    await expect(third.locator(".status")).to_have_text(re.compile(r"^#2 in line( · ready in about \d+ s)?$"))
    await expect(second.get_by_role("button", name="unqueue", exact=True)).to_be_visible()
    await shoot(page, "browse")

    # 3. Let the pages answer: without a reload, every queued card reaches "ready".
    gate.set()
    for slug in QUEUED:
        await expect(card(page, titles[slug]).locator(".status")).to_have_text("ready", timeout=60_000)
        await expect(card(page, titles[slug]).get_by_role("link", name="read", exact=True)).to_be_visible()
    assert await page.evaluate("window.__sameDocument") == "still here", "reaching ready reloaded the page"
    assert len(watch.loads) == loads and page.url == live_server.url + "/", watch.loads
    for slug, _, _ in ARTICLES:
        assert pages.hits[f"/{slug}.html"] == (1 if slug in QUEUED else 0), slug
    # Nothing pending any more: the page's one poller has gone quiet.
    assert await page.locator("article.card .pending-id").count() == 0
    await expect(page.locator("#live[hx-trigger]")).to_have_count(0)
    await watch.collect_csp()

    # 4. Open one ready article: the cleaned text, without the site's boilerplate.
    slug = QUEUED[1]
    await card(page, titles[slug]).get_by_role("link", name="read", exact=True).click()
    await page.wait_for_url(re.compile(r"/articles/\d+(\?list=[^/]*)?$"))
    await expect(page.locator("h1")).to_have_text(titles[slug])
    body = page.locator(".reading .body")
    await expect(body).to_contain_text(f"marker-{slug}")
    await expect(body).not_to_contain_text("Copyright footer text")
    await expect(body).not_to_contain_text("Section 3")
    await expect(body).not_to_contain_text("Related")
    await expect(page.locator(".failure")).to_have_count(0)
    await shoot(page, "article")
    await watch.collect_csp()

    # 5. Nothing went wrong on the way, and every write the page made (the subscribe form,
    # the htmx taps) carried the CSRF token.
    assert watch.problems == []
    assert watch.written() == ["/feeds"] + ["/articles/{id}/queue"] * len(QUEUED)


async def test_browse_without_feeds_points_to_the_feeds_page(page, live_server):
    from playwright.async_api import expect

    watch = await Watch.start(page, live_server.url)
    await page.goto(live_server.url + "/")
    await expect(page.locator(".empty")).to_contain_text("No headlines here yet")
    await page.get_by_role("link", name="Subscribe to a feed").click()
    await page.wait_for_url(live_server.url + "/feeds")
    await expect(page.get_by_label("Feed URL")).to_be_visible()
    await watch.collect_csp()
    assert watch.problems == []
