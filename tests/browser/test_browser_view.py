"""The reader view, the tags page and the keys in a real Chromium at a phone's size (390×844)
and a laptop's (1366×900): the text of a ready article with tags and a long title starts in
the first screen of a phone, Next and Previous keep to one line, the tags page's counts are
the lengths of the lists it links to, and every key does its act (and nothing while typing
in the search box), with the list of keys as a dialog that ? and Escape open and close.

One server for the module; each test gets its own browser context. The tests that change
articles (the keys) use articles the others do not look at."""

from __future__ import annotations

import datetime
import email.utils
import re

import httpx
import pytest
import pytest_asyncio

from reader.settings import Settings

from .browsing import TIMEOUT_MS, Watch
from ..helpers import LiveServer, rss
from ..loopback import LoopbackServer

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
FIRST_SCREEN = 320  # px from the top of a phone's screen: where the text must have started

# Ready, in this order (cleaning order is the ready list's order): read through in the tests
# of the reader view, never changed by them.
READY = [
    "Small tools that do one job and do it well, a case study from a decade of maintenance",
    "What a slow network teaches about loading states, retries and the patience of the people who wait",
    "Backups you have restored are the only backups, and other lessons learned the hard way at three",
]
LONG = READY[1]
TAGS = {READY[0]: ["tools", "Later"], READY[1]: ["networks", "later", "design"], READY[2]: ["design"]}
# New headlines, newest first in the list: the keys act on these.
FRESH = ["Keys one", "Keys two", "Keys three", "Keys four"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pages = LoopbackServer().start()
    now = datetime.datetime.now(datetime.UTC)
    items = []
    for age, title in enumerate(FRESH + READY):
        link = pages.add_article(f"v{age}", title)
        items.append({"title": title, "link": link, "summary": f"What {title.lower()} says, in brief.",
                      "date": email.utils.format_datetime(now - datetime.timedelta(hours=age + 1), usegmt=True)})
    feed = pages.add("/feed.xml", rss(items, title="Notes on software"), headers={"Content-Type": "application/rss+xml"})
    settings = Settings(db=tmp_path_factory.mktemp("view") / "reader.db", allow_private_urls=True,
                        refresh_interval=0, serve_workers=0, worker_interval=0.5, fetch_timeout=20.0, claim_ttl=20.0,
                        open_wait=30.0)
    with LiveServer(settings) as server:
        api = httpx.Client(base_url=server.url, timeout=60)
        assert api.post("/api/feeds", json={"url": feed}).status_code == 201
        ids = {i["title"]: i["id"] for i in api.get("/api/articles", params={"limit": 100}).json()["items"]}
        for title in READY:  # cleaned now, through the direct lane, one after the other
            assert api.get(f"/api/articles/{ids[title]}/content").status_code == 200
            assert api.post(f"/api/articles/{ids[title]}/tags", json={"tags": TAGS[title]}).status_code == 200
        server.ids = ids
        server.links = {title: pages.url(f"/v{age}.html") for age, title in enumerate(FRESH + READY)}
        yield server
        api.close()
    pages.stop()


@pytest_asyncio.fixture(loop_scope="session")
async def context_for(chromium):
    contexts = []

    async def make(viewport=DESKTOP):
        extra = {"is_mobile": True, "has_touch": True} if viewport == PHONE else {}
        context = await chromium.new_context(viewport=viewport, color_scheme="light", **extra)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        await context.close()


def read_through(site, title: str) -> str:
    """The article's page, opened from the list of every ready article (so it has both
    neighbours, read or not)."""
    return f"{site.url}/articles/{site.ids[title]}?list=state%3Dready"


async def test_the_text_starts_in_the_first_screen_of_a_phone(site, context_for):
    """A ready article with three tags and a title of three lines: on a 390×844 phone its
    first paragraph starts within the top 320 px (it started at 570 px: the nav, a search
    bar, the title, two rows of buttons and the tags came first). The back link, star, read
    and the text menu are one row; the tags come after the text; the top bar is the nav."""
    from playwright.async_api import expect

    for viewport in (PHONE, DESKTOP):
        context = await context_for(viewport)
        page = await context.new_page()
        watch = await Watch.start(page, site.url)
        await page.goto(read_through(site, LONG))
        await expect(page.locator(".reading h1")).to_have_text(LONG)
        await expect(page.locator(".reading .body")).to_contain_text("marker-v")
        where = await page.evaluate("""() => {
            const top = el => el.getBoundingClientRect().top;
            const h1 = document.querySelector('.reading h1');
            const bar = [...document.querySelectorAll('.reading-bar > *')].filter(el => el.getClientRects().length);
            const body = document.querySelector('.reading .body'), tags = document.querySelector('.article-tags');
            return {text: top(document.querySelector('.reading .body p')),
                    titleLines: Math.round(h1.getBoundingClientRect().height / parseFloat(getComputedStyle(h1).lineHeight)),
                    bar: bar.map(el => Math.round(el.getBoundingClientRect().top)), barItems: bar.length,
                    tagsAfterText: !!(body.compareDocumentPosition(tags) & Node.DOCUMENT_POSITION_FOLLOWING),
                    search: !!document.querySelector('.top .search').getClientRects().length,
                    sideways: document.documentElement.scrollWidth - innerWidth};
        }""")
        assert where["barItems"] == 3 and len(set(where["bar"])) == 1, where  # back, the tools, Aa: one row
        assert where["tagsAfterText"] and where["sideways"] <= 0, where
        tags = page.locator(".article-tags .tag")
        await expect(tags).to_have_text(["#design", "#Later", "#networks"])  # one tag in any case
        if viewport == PHONE:
            assert where["titleLines"] >= 3, where  # the long title is really long here
            assert where["text"] < FIRST_SCREEN, where
            assert not where["search"], where
        else:
            assert where["search"], where  # a laptop keeps its search box
            assert where["text"] < FIRST_SCREEN + 100, where
        # the text menu opens (a <details>), its buttons work, Esc closes it
        menu = page.locator("details.text-menu")
        await menu.locator("summary").click()
        await page.get_by_role("button", name="A+ larger text").click()
        await expect(page.locator("html")).to_have_attribute("data-size", "1")
        await page.keyboard.press("Escape")
        await expect(menu).not_to_have_attribute("open", "")
        await expect(menu.locator("summary")).to_be_focused()
        # a star swaps the tools, and the text menu beside them stays (it was inside them, and a swap hid it)
        await page.locator("#reading-tools").get_by_role("button", name="star", exact=True).click()
        await expect(page.locator("#reading-tools").get_by_role("button", name="unstar")).to_be_visible()
        await expect(menu).to_be_visible()
        await page.locator("#reading-tools").get_by_role("button", name="unstar").click()
        await expect(page.locator("#reading-tools").get_by_role("button", name="star", exact=True)).to_be_visible()
        await watch.collect_csp()
        assert watch.problems == []


ONE_LINE = """(el) => {
    // every piece of the link's text on one line, and its box no taller than a one-line button
    const range = document.createRange(); range.selectNodeContents(el);
    const tops = [...range.getClientRects()].filter(r => r.width > 0).map(r => r.top);
    const title = el.querySelector('.title');
    return {spread: Math.max(...tops) - Math.min(...tops), height: el.getBoundingClientRect().height,
            cut: title.scrollWidth > title.clientWidth, text: el.textContent};
}"""


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
async def test_next_and_previous_each_keep_to_one_line(site, context_for, viewport):
    """Next and Previous with long titles: each on one line, its box the height of a one-line
    button (44 px); on the phone the title is cut with an ellipsis, whole in the link's name."""
    from playwright.async_api import expect

    context = await context_for(viewport)
    page = await context.new_page()
    await page.goto(read_through(site, LONG))
    for rel, neighbour in (("next", READY[2]), ("prev", READY[0])):
        link = page.locator(f"a[rel='{rel}']")
        await expect(link).to_contain_text(neighbour)
        await expect(link).to_have_attribute("title", neighbour)
        seen = await link.evaluate(ONE_LINE)
        assert seen["spread"] < 4 and seen["height"] <= 44.5, (rel, seen)  # one line, one button high
        if viewport == PHONE:
            assert seen["cut"], (rel, seen)
    mark_next = page.get_by_role("button", name="Mark read and next")
    if await mark_next.count():
        assert (await mark_next.bounding_box())["height"] <= 44.5


async def test_the_tags_page_counts_are_the_lengths_of_their_lists(site, context_for):
    """Every tag once (Later and later are one tag), sorted by name; each count is how many
    headlines its link lists. The article's tags and the footer lead to the page."""
    from playwright.async_api import expect

    context = await context_for(DESKTOP)
    page = await context.new_page()
    watch = await Watch.start(page, site.url)
    await page.goto(read_through(site, LONG))
    await page.get_by_role("link", name="All tags").click()
    await page.wait_for_url(site.url + "/tags")
    rows = page.locator(".tag-list li")
    await expect(rows.locator("a")).to_have_text(["#design", "#Later", "#networks", "#tools"])
    await expect(rows.locator(".count")).to_have_text(["2 articles", "2 articles", "1 article", "1 article"])
    for i in range(await rows.count()):
        row = rows.nth(i)
        count = int((await row.locator(".count").inner_text()).split()[0])
        await row.locator("a").click()
        await page.wait_for_url(re.compile(r"/\?tag="))
        await expect(page.locator("article.card")).to_have_count(count)
        await page.go_back()
        await page.wait_for_url(site.url + "/tags")
    await page.get_by_role("navigation", name="More").get_by_role("link", name="Tags").click()
    await page.wait_for_url(site.url + "/tags")
    await watch.collect_csp()
    assert watch.problems == []


def card(page, title: str):
    return page.locator("article.card", has=page.get_by_role("link", name=title, exact=True))


async def press(page, *keys: str) -> None:
    for key in keys:
        await page.keyboard.press(key)


async def test_every_key_does_its_act_and_none_while_typing(site, context_for):
    from playwright.async_api import expect

    context = await context_for(DESKTOP)
    page = await context.new_page()
    watch = await Watch.start(page, site.url)
    await page.goto(site.url + "/")
    rows = page.locator("article.card")
    await expect(rows).to_have_count(len(FRESH) + len(READY))

    # In the search box every key is a letter: nothing is selected, starred, opened or shown.
    box = page.get_by_role("searchbox", name="Search articles")
    await press(page, "/")
    await expect(box).to_be_focused()
    await page.keyboard.type("jkosmqevAgu?")
    await expect(box).to_have_value("jkosmqevAgu?")
    assert page.url == site.url + "/" and len(context.pages) == 1
    await expect(page.locator("article.card.is-current")).to_have_count(0)
    await expect(page.locator(".star-mark")).to_have_count(0)
    await expect(page.get_by_role("dialog")).to_be_hidden()
    await box.fill("")
    await box.evaluate("el => el.blur()")

    # j / k move, s stars, m toggles read and unread, q queues, e clicks the row's Done
    first, second = card(page, FRESH[0]), card(page, FRESH[1])
    await press(page, "j", "j")
    await expect(second).to_be_focused()
    await press(page, "k")
    await expect(first).to_be_focused()
    await press(page, "s")
    await expect(first.locator(".star-mark")).to_be_visible()
    await expect(first).to_have_attribute("data-read", "no")
    await press(page, "m")
    await expect(first).to_have_attribute("data-read", "yes")
    await expect(first).to_be_focused()
    await press(page, "m")
    await expect(first).to_have_attribute("data-read", "no")
    await press(page, "q")
    await expect(first.locator(".status")).to_have_text(re.compile(r"#1 in line"))
    # e clicks the row's done button: a ready row has one (in its menu), this queued one is given one
    await first.evaluate("""c => { const b = document.createElement('button'); b.type = 'button';
        b.dataset.key = 'e'; b.textContent = 'done'; b.addEventListener('click', () => { window.__done = c.id; });
        c.querySelector('.actions').append(b); }""")
    await press(page, "e")
    assert await page.evaluate("window.__done") == await first.get_attribute("id")

    # v opens the original in a new tab; this page stays
    async with context.expect_page() as opened:
        await press(page, "v")
    original = await opened.value
    await original.wait_for_load_state()
    assert original.url == site.links[FRESH[0]]
    await original.close()
    assert page.url == site.url + "/"

    # ? shows the keys, focus on its title; ? again closes it; Esc closes it; focus comes back
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    await press(page, "?")
    await expect(dialog).to_be_visible()
    await expect(dialog.get_by_role("heading", name="Keyboard shortcuts")).to_be_focused()
    for said in ("open the original in a new tab", "mark read or unread", "go to starred", "mark the headlines on this page read"):
        await expect(dialog).to_contain_text(said)
    await press(page, "?")
    await expect(dialog).to_be_hidden()
    await expect(first).to_be_focused()
    await press(page, "?")
    await expect(dialog).to_be_visible()
    await press(page, "Escape")
    await expect(dialog).to_be_hidden()
    await expect(first).to_be_focused()
    opener = page.get_by_role("button", name="Keyboard shortcuts")
    await opener.click()
    await expect(dialog).to_be_visible()
    await press(page, "Escape")
    await expect(dialog).to_be_hidden()
    await expect(opener).to_be_focused()

    # o opens; in the reader view s, m, e, v act on the article, j / k read through, u goes back
    await press(page, "j")  # on from the row selected before the dialog
    await expect(second).to_be_focused()
    await press(page, "o")
    await page.wait_for_url(re.compile(rf"/articles/{site.ids[FRESH[1]]}\?list="))
    await expect(page.locator(".reading h1")).to_have_text(FRESH[1])
    tools = page.locator("#reading-tools")
    await expect(tools.get_by_role("button", name="mark unread")).to_be_visible()  # opening read it
    await press(page, "s")
    await expect(tools.get_by_role("button", name="unstar")).to_be_visible()
    await press(page, "m")
    await expect(tools.get_by_role("button", name="mark read", exact=True)).to_be_visible()
    await press(page, "m")
    await expect(tools.get_by_role("button", name="mark unread")).to_be_visible()
    await press(page, "e")  # done: the tools' own button (data-key="e")
    await expect(tools.get_by_role("button", name="not done", exact=True)).to_be_visible()
    await press(page, "e")
    await expect(tools.get_by_role("button", name="done", exact=True)).to_be_visible()
    async with context.expect_page() as opened:
        await press(page, "v")
    original = await opened.value
    await original.wait_for_load_state()
    assert original.url == site.links[FRESH[1]]
    await original.close()
    await press(page, "j")
    await expect(page.locator(".reading h1")).to_have_text(FRESH[2])
    await press(page, "k")
    await expect(page.locator(".reading h1")).to_have_text(FRESH[1])
    await press(page, "u")
    await page.wait_for_url(site.url + "/")
    await expect(second).to_be_focused()
    # Enter opens the selected row too
    await press(page, "Enter")
    await expect(page.locator(".reading h1")).to_have_text(FRESH[1])
    await page.go_back()
    await page.wait_for_url(site.url + "/")

    # A marks the page's headlines read (the page's own "Mark these read"), with its undo
    await expect(page.locator("article.card[data-read='no']")).not_to_have_count(0)
    await press(page, "A")
    notice = page.locator(".bulk-notice")
    await expect(notice).to_contain_text(re.compile(r"Marked \d+ articles? read\."))
    await expect(page.locator("article.card[data-read='no']")).to_have_count(0)
    await notice.get_by_role("button", name="Undo").click()
    await expect(page.locator(".bulk-notice")).to_contain_text("unread again")

    # g then u / r / s / f: unread, ready to read, starred, feeds; after g, u is not "back"
    # and s does not star the selected row
    for second_key, where in (("u", "/?unread=1"), ("r", "/?state=ready&unread=1"), ("s", "/?starred=1"),
                              ("f", "/feeds")):
        if second_key == "s":
            await press(page, "j")
            await expect(page.locator("article.card.is-current")).to_have_count(1)
        await press(page, "g", second_key)
        await page.wait_for_url(site.url + where)
    await page.goto(site.url + "/?starred=1")
    await expect(page.locator("article.card h2 a")).to_have_text([FRESH[0], FRESH[1]])  # s starred these two only
    await watch.collect_csp()
    assert watch.problems == []
