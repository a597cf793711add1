"""The lists in a real Chromium: the cards' one menu (filled for the row it opens on) by
pointer and by keyboard, the phone's filter strip showing that it scrolls, a feed chosen
applying at once (and Show without JavaScript), and what a reading-list row says. One
server for the module; each test its own browser context."""

from __future__ import annotations

import datetime
import email.utils
import re
import struct
import zlib

import httpx
import pytest
import pytest_asyncio

from reader.settings import Settings

from .browsing import TIMEOUT_MS, Watch, card
from ..helpers import LiveServer, rss
from ..loopback import LoopbackServer

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
TITLES = [f"Headline number {n}: a line long enough to read like a real one" for n in range(12)]
READ_PART_WAY = TITLES[1]
READY = TITLES[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Two feeds (12 headlines and 2), two articles cleaned, one of them opened and left at 40%."""
    pages = LoopbackServer().start()
    now = datetime.datetime.now(datetime.UTC)

    def items(titles, first):
        return [{"title": t, "link": pages.add_article(f"l{first + n}", t), "summary": f"About {t.lower()}.",
                 "date": email.utils.format_datetime(now - datetime.timedelta(hours=first + n + 1), usegmt=True)}
                for n, t in enumerate(titles)]

    feeds = [pages.add("/one.xml", rss(items(TITLES, 0), title="Notes on software"),
                       headers={"Content-Type": "application/rss+xml"}),
             pages.add("/two.xml", rss(items(["Other feed's first", "Other feed's second"], 50), title="Second feed"),
                       headers={"Content-Type": "application/rss+xml"})]
    settings = Settings(db=tmp_path_factory.mktemp("lists") / "reader.db", allow_private_urls=True,
                        refresh_interval=0, serve_workers=0, fetch_timeout=20.0, open_wait=30.0)
    with LiveServer(settings) as server:
        api = httpx.Client(base_url=server.url, timeout=60)
        server.feeds = [api.post("/api/feeds", json={"url": url}).json()["id"] for url in feeds]
        server.ids = {i["title"]: i["id"] for i in api.get("/api/articles", params={"limit": 100}).json()["items"]}
        for title in (READ_PART_WAY, READY):
            assert api.get(f"/api/articles/{server.ids[title]}/content").status_code == 200
        assert api.post(f"/api/articles/{server.ids[READ_PART_WAY]}/opened").status_code in (200, 204)
        assert api.put(f"/api/articles/{server.ids[READ_PART_WAY]}/position", json={"position": 0.4}).status_code == 200
        yield server
        api.close()
    pages.stop()


@pytest_asyncio.fixture(loop_scope="session")
async def context_for(chromium):
    contexts = []

    async def make(viewport=DESKTOP, **kwargs):
        if viewport == PHONE:
            kwargs.setdefault("is_mobile", True)
            kwargs.setdefault("has_touch", True)
        kwargs.setdefault("color_scheme", "light")
        context = await chromium.new_context(viewport=viewport, **kwargs)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        await context.close()


def _api(site) -> httpx.Client:
    return httpx.Client(base_url=site.url, timeout=60)


async def test_the_menu_marks_read_stars_queues_first_and_tags_the_row_it_opens_on(site, context_for):
    from playwright.async_api import expect

    context = await context_for(DESKTOP)
    page = await context.new_page()
    watch = await Watch.start(page, site.url)
    await page.goto(site.url + "/")
    targets = [TITLES[6], TITLES[7], TITLES[8], TITLES[9]]
    assert await page.locator(".more-menu").count() == 0  # one template for the page, no menu in a row yet

    async def choose(title: str, name: str):
        row = card(page, title)
        await row.get_by_role("button", name=f"More for {title}").click()
        await row.locator(".more-menu").get_by_role("button", name=name, exact=True).click()
        return card(page, title)

    row = await choose(targets[0], "mark read")
    await expect(row).to_have_attribute("data-read", "yes")  # htmx swapped the row, now read
    row = await choose(targets[1], "star")
    await expect(row.locator(".star-mark")).to_be_visible()
    row = await choose(targets[2], "queue first")
    await expect(row.locator(".status")).to_contain_text("in line (queue first)")
    await expect(row.get_by_role("button", name="unqueue")).to_be_visible()
    # and the menu of a queued row offers what fits it now: back in line, unstar on a starred one
    await card(page, targets[2]).get_by_role("button", name=f"More for {targets[2]}").click()
    await expect(card(page, targets[2]).get_by_role("button", name="back in line")).to_be_visible()
    await card(page, targets[1]).get_by_role("button", name=f"More for {targets[1]}").click()
    await expect(card(page, targets[1]).get_by_role("button", name="unstar")).to_be_visible()
    await expect(card(page, targets[2]).locator(".more-menu")).to_be_hidden()  # one open at a time
    original = card(page, targets[1]).get_by_role("link", name="original")
    await expect(original).to_have_attribute("href", re.compile(r"/l7\.html$"))
    await page.keyboard.press("Escape")  # closed, or it covers the rows under it

    # tags: the box filled with the row's tags, saved, the row swapped with its new tags
    row = card(page, targets[3])
    await row.get_by_role("button", name=f"More for {targets[3]}").click()
    await row.get_by_text("tags…").click()
    box = row.get_by_role("textbox", name="Tags, separated by commas")
    await expect(box).to_have_value("")
    await box.fill("later, software")
    await row.get_by_role("button", name="Save tags").click()
    await expect(card(page, targets[3]).locator("a.tag")).to_have_text(["#later", "#software"])
    row = card(page, targets[3])
    await row.get_by_role("button", name=f"More for {targets[3]}").click()
    await row.get_by_text("tags…").click()
    await expect(row.get_by_role("textbox", name="Tags, separated by commas")).to_have_value("later, software")

    with _api(site) as api:
        states = {t: api.get(f"/api/articles/{site.ids[t]}").json() for t in targets}
    assert states[targets[0]]["read"] and states[targets[1]]["starred"]
    assert states[targets[2]]["state"] == "queued" and states[targets[2]]["lane"] == "next"
    assert states[targets[3]]["tags"] == ["later", "software"]
    assert sorted(set(watch.written())) == ["/articles/{id}/queue", "/articles/{id}/read", "/articles/{id}/star",
                                            "/articles/{id}/tags"]
    await watch.collect_csp()
    assert watch.problems == []


async def test_the_menu_by_keyboard_and_its_keys(site, context_for):
    from playwright.async_api import expect

    context = await context_for(DESKTOP)
    page = await context.new_page()
    await page.goto(site.url + "/")
    title = TITLES[10]
    row = card(page, title)
    # Tab reaches the ⋯ (named after its row); Enter opens it with the focus on its first item
    more = row.get_by_role("button", name=f"More for {title}")
    await more.focus()
    await page.keyboard.press("Enter")
    await expect(more).to_have_attribute("aria-expanded", "true")
    await expect(row.locator(".more-menu").get_by_role("button", name="queue first")).to_be_focused()
    await page.keyboard.press("Tab")
    await expect(row.locator(".more-menu").get_by_role("button", name="star")).to_be_focused()
    await page.keyboard.press("Escape")
    await expect(row.locator(".more-menu")).to_be_hidden()
    await expect(more).to_be_focused()
    await expect(more).to_have_attribute("aria-expanded", "false")
    await page.keyboard.press("Enter")
    await page.keyboard.press("Tab")
    await page.keyboard.press("Enter")  # star
    await expect(card(page, title).locator(".star-mark")).to_be_visible()

    # s and n on the row j/k selected: its menu's buttons, though its menu was never opened
    other = TITLES[11]
    await page.locator("body").click(position={"x": 5, "y": 5})
    while not await card(page, other).evaluate("c => c.classList.contains('is-current')"):
        await page.keyboard.press("j")
    await page.keyboard.press("s")
    await expect(card(page, other).locator(".star-mark")).to_be_visible()
    await expect(card(page, other)).to_be_focused()
    await page.keyboard.press("n")
    await expect(card(page, other).locator(".status")).to_contain_text("in line (queue first)")
    await expect(card(page, other)).to_have_class(re.compile(r"\bis-current\b"))
    await page.keyboard.press("q")  # a queued row has nothing for q: unqueue is not a key
    await expect(card(page, other).locator(".status")).to_contain_text("in line (queue first)")


def _pixels(png: bytes) -> list[list[tuple[int, int, int]]]:
    """Rows of RGB pixels of a PNG as Chromium writes a screenshot (8-bit RGB or RGBA, not
    interlaced), decoded by hand: no image library in the test dependencies."""
    width, height, depth, kind = struct.unpack(">IIBB", png[16:26])
    assert depth == 8 and kind in (2, 6)
    data, at = b"", 8
    while at < len(png):
        length, name = struct.unpack(">I4s", png[at:at + 8])
        if name == b"IDAT":
            data += png[at + 8:at + 8 + length]
        at += 12 + length
    raw, size = zlib.decompress(data), 3 if kind == 2 else 4
    stride, rows, previous = width * size, [], bytearray(width * size)
    for y in range(height):
        kind_of_filter, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind_of_filter == 1:
                line[i] = (line[i] + left) & 255
            elif kind_of_filter == 2:
                line[i] = (line[i] + up) & 255
            elif kind_of_filter == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind_of_filter == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append([tuple(line[x * size:x * size + 3]) for x in range(width)])
        previous = line
    return rows


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_the_phone_filter_strip_shows_that_it_scrolls(site, context_for, scheme):
    """At 390 px the filter words do not fit their strip: its far edge is shaded while more
    is hidden there (the words were cut off without a hint, "all · unread · s..."), and
    plain once it is scrolled to the end."""
    context = await context_for(PHONE, color_scheme=scheme)
    page = await context.new_page()
    await page.goto(site.url + "/")
    strip = page.locator("nav.filters")
    sizes = await strip.evaluate("s => [s.scrollWidth, s.clientWidth]")
    assert sizes[0] > sizes[1] + 40, sizes  # it does scroll
    box = await strip.bounding_box()
    # the strip's last pixels, above its words (44 px links, the words in their middle): only
    # the strip's own background there
    edge = {"x": box["x"] + box["width"] - 4, "y": box["y"] + 2, "width": 3, "height": 6}

    async def darkness() -> float:
        """How far the edge's pixels are from the page's background, at most."""
        background = await page.evaluate("getComputedStyle(document.body).backgroundColor")
        bg = [int(v) for v in re.findall(r"\d+", background)[:3]]
        shot = _pixels(await page.screenshot(clip=edge))
        return max(sum(abs(c - b) for c, b in zip(pixel, bg)) for row in shot for pixel in row)

    hinted = await darkness()
    await strip.evaluate("s => { s.scrollLeft = s.scrollWidth; }")
    await page.wait_for_timeout(100)
    at_end = await darkness()
    assert hinted > 20 and hinted > at_end + 15, (hinted, at_end)


async def test_choosing_a_feed_applies_at_once_and_show_is_only_for_no_javascript(site, context_for):
    from playwright.async_api import expect

    context = await context_for(DESKTOP)
    page = await context.new_page()
    await page.goto(site.url + "/?unread=1")
    show = page.locator(".feed-filter").get_by_role("button", name="Show")
    await expect(show).to_be_hidden()  # with JavaScript the choice itself applies
    await page.get_by_label("Feed", exact=True).select_option(label="Second feed")
    await page.wait_for_url(re.compile(rf"/\?unread=1&feed={site.feeds[1]}$"))
    await expect(page.locator("article.card h2 a")).to_have_text(["Other feed's first", "Other feed's second"])
    await expect(page.get_by_label("Feed", exact=True)).to_have_value(str(site.feeds[1]))
    # arrow keys on the closed select wait for Enter: each step is not a page load
    await page.get_by_label("Feed", exact=True).focus()
    await page.keyboard.press("ArrowUp")
    await page.wait_for_timeout(300)
    assert page.url.endswith(f"feed={site.feeds[1]}")
    await page.keyboard.press("Enter")
    await page.wait_for_url(re.compile(rf"/\?unread=1&feed={site.feeds[0]}$"))

    plain = await (await context_for(DESKTOP, java_script_enabled=False)).new_page()
    await plain.goto(site.url + "/")
    await plain.get_by_label("Feed", exact=True).select_option(label="Second feed")
    await plain.wait_for_timeout(300)
    assert plain.url == site.url + "/"  # nothing happens by itself without a script
    await plain.locator(".feed-filter").get_by_role("button", name="Show").click()
    await plain.wait_for_url(re.compile(rf"/\?feed={site.feeds[1]}$"))
    await expect(plain.locator("article.card")).to_have_count(2)
    await expect(plain.locator(".more-toggle").first).to_be_hidden()  # the menu needs the script


async def test_reading_list_rows_say_the_site_the_reading_time_and_how_far(site, context_for):
    from playwright.async_api import expect

    context = await context_for(PHONE)
    page = await context.new_page()
    await page.goto(site.url + "/?state=ready&unread=1")
    rows = page.locator("article.card")
    await expect(rows).to_have_count(2)
    await expect(card(page, READ_PART_WAY).locator(".meta")).to_have_text(
        re.compile(r"^127\.0\.0\.1 · \d+ min · 40% read$"))
    await expect(card(page, READY).locator(".meta")).to_have_text(re.compile(r"^unread ·127\.0\.0\.1 · \d+ min$"))
    await expect(card(page, READY).locator(".unread-mark")).to_be_visible()
    box = await card(page, READ_PART_WAY).locator(".meta").bounding_box()
    assert box["height"] < 24  # one line on a phone
