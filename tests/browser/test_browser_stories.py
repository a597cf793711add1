"""One card per story in the browser: a story two real feeds carry shows once in each feed's
list, its row's source line saying "also in" the other, in the compact row and the roomier
card, and axe finds nothing serious in it, light or dark. Real Chromium, real uvicorn, real
feeds on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from reader.core import running

from ..helpers import RSS, published, rss

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent.parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"


async def serious_findings(page) -> list[str]:
    """axe's serious and critical violations, light then dark (colours only in dark)."""
    found = []
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        only = {"runOnly": {"type": "rule", "values": ["color-contrast"]}} if scheme == "dark" else {}
        violations = await page.evaluate("""async (options) => (await axe.run(document,
            {...options, resultTypes: ['violations']})).violations.map(v => v.impact + ' ' + v.id)""", only)
        found += [f"{scheme}: {v}" for v in violations if v.split()[0] in ("serious", "critical")]
    await page.emulate_media(color_scheme="light")
    return found


async def test_a_story_two_feeds_carry_is_one_row_in_each_saying_also_in(page, live_server, pages, settings):
    from playwright.async_api import expect

    story = pages.add_article("story", title="The story")
    feeds = []
    for n, name in enumerate(("Morning Paper", "Evening Paper")):
        own = pages.add_article(f"own-{n}")
        items = [{"title": f"Only in the {name}", "link": own, "date": published(n)},
                 {"title": "The story", "link": story + ("?utm_source=evening" if n else ""), "date": published(5)}]
        feeds.append(pages.add(f"/{n}.xml", rss(items, title=name), headers=RSS))
    async with running(settings, worker=False, refresher=False) as reader:
        morning, evening = [(await reader.subscribe(url)).feed_id for url in feeds]

    await page.context.add_init_script(path=str(AXE))
    for feed in (morning, evening):  # the row names the feed that brought it first, then the other
        for view in ("rows", "cards"):
            if view == "cards":
                await page.context.add_cookies([{"name": "reader_view", "value": "cards", "url": live_server.url}])
            await page.goto(f"{live_server.url}/?feed={feed}")
            row = page.locator("article.card", has_text="The story")
            await expect(row).to_have_count(1)
            await expect(row.locator(".meta")).to_contain_text("Morning Paper · also in Evening Paper")
            await expect(row.locator(".also-in")).to_have_text("· also in Evening Paper")
            await expect(page.locator("article.card")).to_have_count(2)
            assert await serious_findings(page) == [], (feed, view)
        await page.context.clear_cookies()
