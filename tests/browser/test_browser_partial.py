"""A text that may be only the start, in a real Chromium: the reader view's notice above
the text with its two links, the card's status, and axe finding nothing on either, light
or dark."""

from __future__ import annotations

import httpx
import pytest

from .browsing import TIMEOUT_MS, serving
from .test_browser_layout import axe_findings, with_axe

pytestmark = pytest.mark.browser

TEASER = ("<p>The minister said on Tuesday that the plan would go ahead whatever the cost, and that the"
          " committee had been told so in a letter sent the week before.</p>"
          "<p>Critics of the plan were quick to answer, saying that the letter had not been shared with"
          " them and that the costs named in it were a guess at best.</p>")
PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><title>The plan</title></head><body>
<main><article><h1>The plan</h1>{TEASER}</article>
<div class="offer"><p>Subscribe to continue reading.</p><a href="/plans">See the plans</a></div></main></body></html>"""


async def test_the_notice_and_the_card_say_it_may_be_only_the_start(chromium, settings, pages):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    link = pages.add("/plan.html", PAGE)
    async with serving(settings.replace(serve_workers=0)) as site:
        with httpx.Client(base_url=site.url) as api:
            article_id = api.post("/api/articles", json={"url": link}).json()["id"]
            assert api.get(f"/api/articles/{article_id}/content").json()["partial"]
        context = await chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
        context.set_default_timeout(TIMEOUT_MS)
        await with_axe(context)
        page = await context.new_page()
        findings = []
        await page.goto(f"{site.url}/articles/{article_id}")
        notice = page.locator(".notice.partial")
        await expect(notice).to_have_text("This may be only the start: the page says “Subscribe to continue"
                                          " reading”. Open the original · Save it from your browser")
        await expect(notice.get_by_role("link", name="Open the original")).to_have_attribute("href", link)
        await expect(notice.get_by_role("link", name="Save it from your browser")).to_have_attribute(
            "href", "/feeds#saving")
        for name, path in (("article", f"/articles/{article_id}"), ("headlines", "/?state=ready")):
            await page.goto(site.url + path)
            if name == "headlines":
                await expect(page.locator(f"#card-{article_id} .status")).to_have_text("ready · may be only the start")
            for scheme in ("light", "dark"):
                await page.emulate_media(color_scheme=scheme)
                findings += [f"{scheme} {name}: {f}" for f in await axe_findings(page)]
            await page.emulate_media(color_scheme="light")
        await context.close()
    assert findings == []
