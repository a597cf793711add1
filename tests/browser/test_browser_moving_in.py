"""Moving in, in a real Chromium: a library file through the feeds page's import form to
its report, its tags on the cards, a card's tags changed from its ⋯ menu (htmx swaps the
card), and a selection tagged at once. Chromium is Debian's; without /usr/bin/chromium
these tests are skipped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .browsing import TIMEOUT_MS, Watch

pytestmark = pytest.mark.browser

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "import"


async def test_import_a_library_then_tag_a_card_and_a_selection(page, live_server, pages):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    watch = await Watch.start(page, live_server.url)
    await page.goto(live_server.url + "/feeds")
    await page.get_by_label(re.compile("library exported from Pocket")).set_input_files(str(SAMPLES / "pocket.csv"))
    await page.get_by_role("button", name="Import", exact=True).click()
    await page.wait_for_url(re.compile(r"/imports/\d+$"))
    await expect(page.locator(".import-report")).to_contain_text("Done (pocket-csv): 6 new links")
    await expect(page.locator(".import-skipped")).to_contain_text("not an http(s) URL")
    await watch.collect_csp()

    await page.goto(live_server.url + "/")
    row = page.locator("article.card", has=page.get_by_role("link", name="SQLite WAL mode", exact=True))
    await expect(row.locator("a.tag")).to_have_text(["#databases", "#sqlite"])
    await row.locator(".more-toggle").click()  # the page's one menu, filled for this card
    await row.get_by_text("tags…").click()
    box = row.get_by_role("textbox", name="Tags, separated by commas")
    await expect(box).to_have_value("databases, sqlite")
    await box.fill("databases, storage")
    await row.get_by_role("button", name="Save tags").click()
    await expect(row.locator("a.tag")).to_have_text(["#databases", "#storage"])  # the card swapped in place
    await row.locator("a.tag", has_text="#storage").click()
    await page.wait_for_url(re.compile(r"/\?tag=storage$"))
    await expect(page.locator("article.card h2 a")).to_have_text(["SQLite WAL mode"])
    await watch.collect_csp()

    # A selection at once: the unread list, narrowed by a search, from under the cards.
    await page.goto(live_server.url + "/?unread=1&q=queues")
    await expect(page.locator("article.card h2 a")).to_have_text(["Queues, not rejections"])
    await page.get_by_text("Tag these…").click()
    await page.get_by_label(re.compile("^Tags to add to all of")).fill("to-read, later")
    await page.get_by_role("button", name=re.compile("^Tag all of")).click()
    await expect(page.locator(".bulk-notice")).to_contain_text("Tagged 1 article.")
    await page.goto(live_server.url + "/?tag=to-read")
    await expect(page.locator("article.card h2 a")).to_have_text(["Queues, not rejections"])
    await expect(page.locator("article.card a.tag")).to_have_text(["#engineering", "#later", "#queues", "#reading", "#to-read"])
    await watch.collect_csp()
    assert watch.problems == []
