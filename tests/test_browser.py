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
from .helpers import rss

pytestmark = pytest.mark.browser

# Test runs write here (gitignored); the README's images come from test_browser_reading.py,
# which shoots the sample site's real prose rather than this file's test pages.
SCREENSHOTS = Path(__file__).resolve().parent / "artifacts"


@pytest.fixture
def settings(settings):
    """The shared test settings with deadlines long enough to hold a fetch behind a gate
    while the test looks at the page (the shared 10 s would fail a gated article)."""
    return settings.replace(fetch_timeout=60.0, claim_ttl=30.0)


def shoot(page, name: str) -> None:
    """The viewport in light and dark, as tests/artifacts/<name>-light.png and -dark.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.screenshot(path=SCREENSHOTS / f"{name}-{scheme}.png")
    page.emulate_media(color_scheme="light")


def test_subscribe_queue_watch_ready_and_read(page, live_server, pages):
    from playwright.sync_api import expect

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
    watch = Watch(page, live_server.url)

    # 1. Subscribe through the feeds page form.
    page.goto(live_server.url + "/feeds")
    page.get_by_label("Feed URL").fill(feed)
    page.get_by_role("button", name="Subscribe").click()
    page.wait_for_url(live_server.url + "/feeds")
    # A plain same-origin form post must not be mistaken for a cross-site one (with
    # Referrer-Policy: no-referrer, Chromium sends it with `Origin: null`).
    expect(page.locator("body")).not_to_contain_text("cross-site request refused", timeout=5_000)
    expect(page.locator("ul.feeds")).to_contain_text("Notes on software")
    expect(page.locator("ul.feeds")).to_contain_text(f"{len(ARTICLES)} articles")
    watch.collect_csp()

    # 2. Browse: every headline is a card, each new one offering "queue".
    page.goto(live_server.url + "/")
    expect(page.locator("article.card")).to_have_count(len(ARTICLES))
    for _, title, _ in ARTICLES:
        expect(card(page, title)).to_be_visible()
        expect(card(page, title).get_by_role("button", name="queue", exact=True)).to_be_visible()
    page.evaluate("window.__sameDocument = 'still here'")
    loads = len(watch.loads)

    titles = {slug: title for slug, title, _ in ARTICLES}
    for slug in QUEUED:
        the_card = card(page, titles[slug])
        before = the_card.element_handle()
        the_card.get_by_role("button", name="queue", exact=True).click()
        # Swapped in place: a new element (outerHTML) with a queue status, no "queue" button.
        expect(the_card.locator(".status")).to_have_text(STATUS)
        expect(the_card.get_by_role("button", name="queue", exact=True)).to_have_count(0)
        assert not before.evaluate("e => e.isConnected"), "the card was not swapped"
    assert page.evaluate("window.__sameDocument") == "still here", "a tap reloaded the page"
    assert len(watch.loads) == loads and page.url == live_server.url + "/", watch.loads
    expect(page.locator("article.card")).to_have_count(len(ARTICLES))

    # While the pages are held back, the first tap is being cleaned and the others wait
    # in line: what a person sees right after tapping. The cards update by polling.
    first, second, third = (card(page, titles[s]) for s in QUEUED)
    expect(first.locator(".status")).to_have_text("cleaning…")
    expect(second.locator(".status")).to_have_text("#1 in line")
    expect(third.locator(".status")).to_have_text("#2 in line")
    expect(second.get_by_role("button", name="unqueue", exact=True)).to_be_visible()
    shoot(page, "browse")

    # 3. Let the pages answer: without a reload, every queued card reaches "ready".
    gate.set()
    for slug in QUEUED:
        expect(card(page, titles[slug]).locator(".status")).to_have_text("ready", timeout=60_000)
        expect(card(page, titles[slug]).get_by_role("link", name="read", exact=True)).to_be_visible()
    assert page.evaluate("window.__sameDocument") == "still here", "reaching ready reloaded the page"
    assert len(watch.loads) == loads and page.url == live_server.url + "/", watch.loads
    for slug, _, _ in ARTICLES:
        assert pages.hits[f"/{slug}.html"] == (1 if slug in QUEUED else 0), slug
    # Nothing pending any more: the page's one poller has gone quiet.
    assert page.locator("article.card .pending-id").count() == 0
    expect(page.locator("#live[hx-trigger]")).to_have_count(0)
    watch.collect_csp()

    # 4. Open one ready article: the cleaned text, without the site's boilerplate.
    slug = QUEUED[1]
    card(page, titles[slug]).get_by_role("link", name="read", exact=True).click()
    page.wait_for_url(re.compile(r"/articles/\d+(\?list=[^/]*)?$"))
    expect(page.locator("h1")).to_have_text(titles[slug])
    body = page.locator(".reading .body")
    expect(body).to_contain_text(f"marker-{slug}")
    expect(body).not_to_contain_text("Copyright footer text")
    expect(body).not_to_contain_text("Section 3")
    expect(body).not_to_contain_text("Related")
    expect(page.locator(".failure")).to_have_count(0)
    shoot(page, "article")
    watch.collect_csp()

    # 5. Nothing went wrong on the way, and every write the page made (the subscribe form,
    # the htmx taps) carried the CSRF token.
    assert watch.problems == []
    assert watch.written() == ["/feeds"] + ["/articles/{id}/queue"] * len(QUEUED)


def test_browse_without_feeds_points_to_the_feeds_page(page, live_server):
    from playwright.sync_api import expect

    watch = Watch(page, live_server.url)
    page.goto(live_server.url + "/")
    expect(page.locator(".empty")).to_contain_text("No headlines here yet")
    page.get_by_role("link", name="Subscribe to a feed").click()
    page.wait_for_url(live_server.url + "/feeds")
    expect(page.get_by_label("Feed URL")).to_be_visible()
    watch.collect_csp()
    assert watch.problems == []
