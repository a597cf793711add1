"""Queueing an import's unread links in a real Chromium: a small Pocket CSV through the
feeds page's import form, "Queue the N unread links" on its report, and the cards of what
is in line saying so, with the notice's undo; axe finds nothing serious on the report or
the notice, light or dark. No worker runs, so what is queued stays in line."""

from __future__ import annotations

import re

import pytest

from .browsing import TIMEOUT_MS, Watch, serving
from .test_browser_layout import axe_findings, with_axe

pytestmark = pytest.mark.browser

CSV = """title,url,time_added,tags,status
First unread,https://example.org/first,1700000000,,unread
Read already,https://example.org/read,1700000100,,archive
Second unread,https://example.org/second,1700000200,,unread
"""


async def serious(page) -> list[str]:
    found = []
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        found += [f"{scheme}: {f}" for f in await axe_findings(page) if f.split()[0] in ("serious", "critical")]
    await page.emulate_media(color_scheme="light")
    return found


async def test_queue_an_imports_unread_links_and_see_them_in_line(chromium, settings, tmp_path):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    upload = tmp_path / "pocket.csv"
    upload.write_text(CSV, encoding="utf-8")
    async with serving(settings.replace(serve_workers=0)) as site:
        context = await chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
        context.set_default_timeout(TIMEOUT_MS)
        await with_axe(context)
        page = await context.new_page()
        watch = await Watch.start(page, site.url)

        await page.goto(site.url + "/feeds")
        await page.get_by_label(re.compile("library exported from Pocket")).set_input_files(str(upload))
        await page.get_by_role("button", name="Import", exact=True).click()
        await page.wait_for_url(re.compile(r"/imports/\d+$"))
        await expect(page.locator(".import-report")).to_contain_text("Done (pocket-csv): 3 new links")
        button = page.get_by_role("button", name="Queue the 2 unread links")
        await expect(button).to_be_visible()
        problems = await serious(page)

        await button.click()
        await page.wait_for_url(re.compile(r"/\?state=queued&queued=2"))
        await expect(page.locator(".bulk-notice")).to_contain_text("Queued 2 · no worker is running")
        first = page.locator("article.card", has=page.get_by_role("link", name="First unread", exact=True))
        second = page.locator("article.card", has=page.get_by_role("link", name="Second unread", exact=True))
        await expect(first.locator(".status")).to_contain_text("#1 in line")  # the oldest first
        await expect(second.locator(".status")).to_contain_text("#2 in line")
        await expect(page.get_by_role("link", name="Read already", exact=True)).to_have_count(0)
        problems += await serious(page)

        await page.locator(".bulk-notice").get_by_role("button", name="Undo").click()
        await expect(page.locator(".bulk-notice")).to_contain_text("Took 2 articles back out of the line.")
        await expect(page.locator("article.card")).to_have_count(0)  # the queued list is empty again
        await watch.collect_csp()
        await context.close()
    assert problems == []
    assert watch.problems == []
