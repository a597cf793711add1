"""The pages as a person sees them, measured in a real Chromium at a laptop's size (1366×900)
and a phone's (390×844): how many headlines fit, that nothing scrolls sideways, that every
control a thumb uses is at least 44×44 px, that the list/cards switch and the dismissed
first-run sentence are remembered (with and without JavaScript), that `u` and Back return to
the selected card, and that axe-core finds nothing serious on any page, light or dark.

axe-core is vendored from the npm registry in tests/vendor/ (no network in tests). One
server for the whole module (and the test process's one browser) keep it quick; each test
gets its own context (cookies and storage), so the tests do not lean on each other's choices."""

from __future__ import annotations

import datetime
import email.utils
import re
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from reader.settings import Settings

from .browsing import TIMEOUT_MS, Watch
from ..helpers import LiveServer, rss
from ..loopback import LoopbackServer

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent.parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
TARGET = 44  # px, each way
# Sub-pixel layout can round a 44 px box to 43.99.
TARGET_SLACK = 0.5

TITLES = [
    "SQLite in WAL mode: one writer, many readers, no drama",
    "Keeping a reading log for a year",
    "Queues beat rejections",
    "Typography for long reads",
    "Offline first, still",
    "Read it twice: skim, then study",
    "What a slow network teaches about loading states",
    "The quiet joy of plain text files",
    "Small tools that do one job and do it well, a case study from a decade of maintenance",
    "Why your cache should forget",
    "Notes from a week without notifications",
    "Designing forms that forgive",
    "The long tail of time zones",
    "A short history of the hyperlink",
    "Backups you have restored are the only backups",
    "Reading on a phone without hating it",
    "Ten years of one command-line habit",
    "Indexes, explained with a library card catalogue",
    "How to say no to a feature",
    "The cost of a click",
]
CODE_PAGE = """<!doctype html><html><head><title>Code that scrolls</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Code that scrolls</h1>
<p>A code block with one very long line, wider than any phone, which the reader view keeps as
it is and lets scroll sideways inside its own box rather than wrapping it or clipping it.</p>
<pre><code>SELECT id, title, url, feed_id, published, state, position, lane FROM articles WHERE state = 'queued' ORDER BY due_at, tapped_at, id LIMIT 50 -- one long line</code></pre>
<p>After the code, more prose: the point of this paragraph is only to give the extractor enough
text to be sure this is the article and not the navigation around it. It goes on a little.</p>
<p>And a final paragraph, so that the page reads as an article with a beginning, a middle and
an end, the way the test pages elsewhere do, with plenty of words in each of them.</p>
</article><footer>Copyright footer text</footer></body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """One server for the module: twenty headlines an hour apart, two of them cleaned, plus an
    article with a code block wider than a phone."""
    pages = LoopbackServer().start()
    now = datetime.datetime.now(datetime.UTC)
    items = []
    for age, title in enumerate(TITLES):
        slug = f"a{age}"
        link = pages.add_article(slug, title)
        published = email.utils.format_datetime(now - datetime.timedelta(hours=age + 1), usegmt=True)
        items.append({"title": title, "link": link, "date": published,
                      "summary": f"What {title.lower()} is about, in a sentence or two from the feed."})
    code = pages.add("/code.html", CODE_PAGE)
    items.append({"title": "Code that scrolls", "link": code, "summary": "A code block.",
                  "date": email.utils.format_datetime(now - datetime.timedelta(days=3), usegmt=True)})
    feed = pages.add("/feed.xml", rss(items, title="Notes on software"), headers={"Content-Type": "application/rss+xml"})
    settings = Settings(db=tmp_path_factory.mktemp("layout") / "reader.db", allow_private_urls=True,
                        refresh_interval=0, serve_workers=0, worker_interval=0.5, fetch_timeout=20.0, claim_ttl=20.0, open_wait=30.0)
    with LiveServer(settings) as server:
        api = httpx.Client(base_url=server.url, timeout=60)
        assert api.post("/api/feeds", json={"url": feed}).status_code == 201
        ids = {i["title"]: i["id"] for i in api.get("/api/articles", params={"limit": 100}).json()["items"]}
        for title in (TITLES[1], "Code that scrolls"):  # cleaned now, through the direct lane
            assert api.get(f"/api/articles/{ids[title]}/content").status_code == 200
        api.post(f"/api/articles/{ids[TITLES[2]]}/queue", json={"lane": "next"})  # waits: no worker takes it
        api.post(f"/api/articles/{ids[TITLES[3]]}/star")
        # tags for the tags page, and on the reader view's article (at the foot of the list and of the page)
        for title, tags in (("Code that scrolls", ["code", "layout"]), (TITLES[-1], ["layout"])):
            assert api.post(f"/api/articles/{ids[title]}/tags", json={"tags": tags}).status_code == 200
        # a rule for the rules page to list, which hides none of the headlines
        assert api.post("/api/rules", json={"field": "title", "match": "regex", "pattern": "^never (seen|shown)$",
                                            "scope": "folder:Nowhere"}).status_code == 201
        server.ids = ids
        yield server
        api.close()
    pages.stop()


@pytest_asyncio.fixture(loop_scope="session")
async def context_for(chromium):
    """Makes the test's browser contexts (a phone's is a touch screen); closes them after it."""
    contexts = []

    async def make(viewport=DESKTOP, **kwargs):
        if viewport == PHONE:
            kwargs.setdefault("is_mobile", True)
            kwargs.setdefault("has_touch", True)
        context = await chromium.new_context(viewport=viewport, color_scheme="light", **kwargs)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        await context.close()


async def headlines_in_view(page) -> tuple[int, float]:
    """Headlines wholly inside the first screen, and where the first one starts."""
    return await page.evaluate("""() => {
        const rows = [...document.querySelectorAll('article.card')].map(c => c.getBoundingClientRect());
        const seen = rows.filter(r => r.top >= 0 && r.bottom <= window.innerHeight);
        return [seen.length, rows.length ? rows[0].top : -1];
    }""")


SIDEWAYS = "document.documentElement.scrollWidth - window.innerWidth"

# What a thumb uses: buttons (and summaries styled as buttons), the nav, the filter words, the
# reader view's "← headlines" and "original", form fields. Hidden ones (in closed <details>,
# JavaScript-only ones without JavaScript) are not there to tap.
SMALL_TARGETS = """(target) => {
    const sel = 'button, .button, summary, .top nav a, .filters a, a.tap, .foot-links a, '
              + 'input:not([type=hidden]):not([type=file]), select';
    return [...document.querySelectorAll(sel)].flatMap(el => {
        const r = el.getBoundingClientRect();
        if (!r.width || !r.height || getComputedStyle(el).visibility === 'hidden') return [];
        if (el.matches('.visually-hidden, .skip') || el.closest('.visually-hidden')) return [];
        return (r.width < target || r.height < target)
            ? [`${el.tagName.toLowerCase()} "${(el.textContent || el.value || '').trim().slice(0, 40)}" ${r.width.toFixed(0)}x${r.height.toFixed(0)}`]
            : [];
    });
}"""


def every_page(site) -> dict[str, str]:
    ids = site.ids
    return {
        "browse": "/",
        "ready": "/?state=ready&unread=1",
        "article": f"/articles/{ids['Code that scrolls']}",
        "queue": "/queue",
        "feeds": "/feeds",
        "stats": "/stats",
        "apps": "/apps",
        "save": "/save?url=https%3A%2F%2Fexample.org%2Fa-rather-long-address%2Fthat-goes-on%2Fand-on.html&title=Something",
        "login": "/login",
        "error": "/articles/987654",
        "search": "/?q=reading",
        "offline": "/offline?what=article",
        "tags": "/tags",
        # the reading list with its bulk done, and the notice after one with its undo
        "ready": "/?state=ready&unread=1",
        "ready-done": "/?state=ready&unread=1&done=2&undo=1700000000.5",
        "rules": "/rules",
        "hidden": "/rules/hidden",
    }


async def test_the_phone_nav_stays_on_one_line_on_every_page(site, context_for):
    """At 390 px every nav link (the reading list's count made three digits, the current page's
    link in bold) sits on the nav's one line, and each is still a 44 px target."""
    context = await context_for(PHONE)
    page = await context.new_page()
    for name, path in every_page(site).items():
        await page.goto(site.url + path)
        await page.evaluate("document.querySelectorAll('.nav-ready .count').forEach(c => c.textContent = '128')")
        boxes = await page.evaluate("""() => [...document.querySelectorAll('.top nav a')].map(a => {
            const r = a.getBoundingClientRect();
            return {text: a.textContent.trim().replace(/\\s+/g, ' '), top: r.top, width: r.width, height: r.height};
        })""")
        assert len(boxes) == 5, (name, boxes)
        assert len({round(b["top"]) for b in boxes}) == 1, (name, boxes)  # one line: nothing wrapped
        assert all(min(b["width"], b["height"]) >= TARGET - TARGET_SLACK for b in boxes), (name, boxes)


async def test_density_at_both_sizes(site, context_for):
    """The compact list: at least 14 headlines on a laptop screen, at least 8 on a phone with
    the first one above the middle; each row has one quiet control (outlined, not filled), a
    relative time with the exact time on hover, and the other actions behind its ⋯."""
    from playwright.async_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    for viewport, least in ((DESKTOP, 14), (PHONE, 8)):
        context = await context_for(viewport)
        page = await context.new_page()
        await page.goto(site.url + "/")
        await expect(page.locator("article.card.row")).to_have_count(len(TITLES) + 1)
        seen, first_top = await headlines_in_view(page)
        await page.screenshot(path=ARTIFACTS / f"density-{viewport['width']}.png")
        assert seen >= least, (viewport, seen)
        assert 0 <= first_top < viewport["height"] / 2, (viewport, first_top)

        row = page.locator("article.card", has=page.get_by_role("link", name=TITLES[4], exact=True))
        when = row.locator("time")
        await expect(when).to_have_text("5 h ago")
        await expect(when).to_have_attribute("title", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$"))
        await expect(when).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\dZ$"))
        # One control in sight and the ⋯; the rest (queue first, star, mark read, original) behind it.
        shown = [await b.inner_text() for b in await row.locator("button:visible, a.button:visible").all()]
        assert shown == ["queue", "⋯"], shown
        fills = await page.evaluate("""() => [...document.querySelectorAll('article.card .actions button, article.card .actions .button')]
            .map(b => getComputedStyle(b).backgroundColor)""")
        assert set(fills) == {"rgba(0, 0, 0, 0)"}, set(fills)  # quiet: no row has a filled button
        more = row.get_by_role("button", name=f"More for {TITLES[4]}")
        await expect(more).to_have_attribute("aria-expanded", "false")
        await more.click()
        await expect(more).to_have_attribute("aria-expanded", "true")
        menu = row.locator(".more-menu")
        for name in ("queue first", "star", "mark read"):
            await expect(menu.get_by_role("button", name=name, exact=True)).to_be_visible()
        await expect(menu.get_by_role("link", name="original")).to_be_visible()
        assert await page.evaluate(SIDEWAYS) <= 0  # the open menu stays inside the screen
        # One menu open at a time; Esc closes it and gives focus back to its button.
        other_row = page.locator("article.card").nth(10)  # clear of the open menu
        other = other_row.locator(".more-toggle")
        await other.click()
        await expect(other_row.locator(".more-menu")).to_be_visible()
        await expect(menu).to_be_hidden()
        await page.keyboard.press("Escape")
        await expect(other_row.locator(".more-menu")).to_be_hidden()
        await expect(other).to_be_focused()
        # A cleaned one offers "read", a waiting one says where it stands and offers unqueue.
        ready = page.locator("article.card", has=page.get_by_role("link", name=TITLES[1], exact=True))
        await expect(ready.get_by_role("link", name="read", exact=True)).to_be_visible()
        waiting = page.locator("article.card", has=page.get_by_role("link", name=TITLES[2], exact=True))
        await expect(waiting.locator(".status")).to_contain_text("in line (queue first)")
        await expect(waiting.get_by_role("button", name="unqueue", exact=True)).to_be_visible()


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "nojs"])
async def test_list_or_cards_and_the_first_run_sentence_are_remembered(site, context_for, javascript):
    from playwright.async_api import expect

    context = await context_for(DESKTOP, java_script_enabled=javascript)
    page = await context.new_page()
    await page.goto(site.url + "/")
    intro = page.get_by_role("note", name="How reader works")
    await expect(intro).to_contain_text("Tap queue on what you want to read")
    await expect(page.locator("article.card.row").first).to_be_visible()
    await expect(page.get_by_role("button", name="List")).to_have_attribute("aria-pressed", "true")

    await page.get_by_role("button", name="Cards").click()
    await expect(page.locator("article.card.roomy")).to_have_count(len(TITLES) + 1)
    await expect(page.locator("article.card.roomy .summary").first).to_be_visible()
    await page.goto(site.url + "/queue")
    await expect(page.locator("article.card.roomy")).to_have_count(1)  # the same choice on every list
    await page.goto(site.url + "/")
    await expect(page.locator("article.card.roomy").first).to_be_visible()
    await expect(page.get_by_role("button", name="Cards")).to_have_attribute("aria-pressed", "true")

    await intro.get_by_role("button", name="Got it").click()
    await expect(page.locator("article.card").first).to_be_visible()
    await expect(intro).to_have_count(0)
    await page.reload()
    await expect(intro).to_have_count(0)

    await page.get_by_role("button", name="List").click()
    await expect(page.locator("article.card.row")).to_have_count(len(TITLES) + 1)
    await page.reload()
    await expect(page.locator("article.card.row")).to_have_count(len(TITLES) + 1)


async def test_nothing_scrolls_sideways_and_every_thumb_control_is_44_px(site, context_for):
    from playwright.async_api import expect

    problems = []
    for viewport in (PHONE, DESKTOP):
        context = await context_for(viewport)
        page = await context.new_page()
        watch = await Watch.start(page, site.url)
        for name, path in {**every_page(site), "browse-cards": "/"}.items():
            if name == "browse-cards":
                await context.add_cookies([{"name": "reader_view", "value": "cards", "url": site.url}])
            await page.goto(site.url + path)
            await expect(page.locator("main")).to_be_visible()
            if name == "feeds":
                await page.locator("details.feed-edit summary").first.click()  # the rename box is a thumb control too
            if name == "browse":
                await page.locator("article.card .more-toggle").first.click()
            over = await page.evaluate(SIDEWAYS)
            if over > 0:
                problems.append(f"{viewport['width']} {name}: {over} px sideways")
            small = await page.evaluate(SMALL_TARGETS, TARGET - TARGET_SLACK)
            problems += [f"{viewport['width']} {name}: {s}" for s in small]
            await watch.collect_csp()
        # The 404 is the point of the error page; nothing else may fail.
        assert [p for p in watch.problems if "987654" not in p] == []
    assert problems == []


async def test_the_library_page_has_compact_rows_on_a_phone(site, context_for):
    from playwright.async_api import expect

    context = await context_for(PHONE)
    page = await context.new_page()
    await page.goto(site.url + "/feeds")
    row = page.locator("ul.feeds > li").first
    await expect(row).to_contain_text("Notes on software")
    rename = page.get_by_role("textbox", name="Name")
    await expect(rename).to_be_hidden()  # behind Edit
    line = await page.evaluate("parseFloat(getComputedStyle(document.body).lineHeight)")
    assert (await row.bounding_box())["height"] <= 2 * TARGET + 16  # one row, not three rows of controls
    bookmarklet = page.get_by_role("link", name="Save to reader")
    assert (await bookmarklet.bounding_box())["height"] < TARGET + line  # on one line
    await row.get_by_text("Edit").click()
    await expect(rename).to_be_visible()
    await expect(rename).to_have_value("Notes on software")
    buttons = [row.get_by_role("button", name=n, exact=True) for n in ("Rename", "Refresh", "Unsubscribe")]
    for button in buttons:
        await expect(button).to_be_visible()
        box = await button.bounding_box()
        assert box["height"] < TARGET + line, "a button's label wrapped"
    await page.screenshot(path=ARTIFACTS / "feeds-phone.png")


async def test_u_and_back_return_to_the_selected_card(site, context_for):
    from playwright.async_api import expect

    context = await context_for(DESKTOP)
    page = await context.new_page()
    await page.goto(site.url + "/")
    rows = page.locator("article.card")
    await expect(rows).to_have_count(len(TITLES) + 1)
    for _ in range(14):
        await page.keyboard.press("j")
    fourteenth = rows.nth(13)
    await expect(fourteenth).to_be_focused()
    title = await fourteenth.locator("h2 a").inner_text()

    await page.keyboard.press("o")
    await page.wait_for_url(re.compile(r"/articles/\d+(\?list=[^/]*)?$"))
    await expect(page.locator(".reading h1")).to_have_text(title)
    await page.keyboard.press("u")
    await page.wait_for_url(site.url + "/")
    again = page.locator("article.card", has=page.get_by_role("link", name=title, exact=True))
    await expect(again).to_be_focused()
    await expect(again).to_have_class(re.compile(r"\bis-current\b"))
    await expect(again).to_be_in_viewport()
    await page.keyboard.press("j")  # and j goes on from there, not from the top
    await expect(rows.nth(14)).to_be_focused()

    # A tap on another card's title, then the browser's Back: that card, selected.
    other = rows.nth(17)
    other_title = await other.locator("h2 a").inner_text()
    await other.locator("h2 a").click()
    await page.wait_for_url(re.compile(r"/articles/\d+(\?list=[^/]*)?$"))
    await page.go_back()
    await page.wait_for_url(site.url + "/")
    back = page.locator("article.card", has=page.get_by_role("link", name=other_title, exact=True))
    await expect(back).to_have_class(re.compile(r"\bis-current\b"))
    await expect(back).to_be_focused()
    await expect(back).to_be_in_viewport()


async def with_axe(context) -> None:
    """axe in every page the context loads, before the page's own scripts. As an init script
    (sent over CDP, like the CSP listener) rather than a <script> tag added after each load,
    which cost ~0.5 s a page to build and parse."""
    await context.add_init_script(path=str(AXE))


async def axe_findings(page, only: list[str] | None = None) -> list[str]:
    """axe's violations as "impact rule [nodes]", every rule or only the ones named."""
    assert await page.evaluate("typeof axe !== 'undefined'"), "axe is not in the page: add it with with_axe(context)"
    # label-content-name-mismatch is off by default in axe (experimental): the A−/A+ and font
    # buttons are what it checks, so it is switched on.
    options = {"runOnly": {"type": "rule", "values": only}} if only else \
        {"rules": {"label-content-name-mismatch": {"enabled": True}}}
    # resultTypes: only violations are read, so passes and the rest keep one node each
    # (axe's own advice for speed); which violations are found does not change.
    options = {**options, "resultTypes": ["violations"]}
    result = await page.evaluate("""async (options) => {
        const r = await axe.run(document, options);
        return r.violations.map(v => ({id: v.id, impact: v.impact,
            nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
    }""", options)
    return [f"{v['impact']} {v['id']} {v['nodes']}" for v in result]


# One test per size: each is a few dozen axe runs, and two tests can run side by side.
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_axe_finds_nothing_serious_on_any_page_light_or_dark(site, context_for, viewport):
    """Every page type, desktop and phone, light and dark: no serious or critical violation.
    The reader view, with a code block wider than the screen, has no findings at all except
    heading order inside cleaned text (the cleaner's to fix)."""
    from playwright.async_api import expect

    pages = {**every_page(site), "browse-menu": "/", "browse-cards": "/"}
    findings = []
    # axe arrives as an init script, which the pages' CSP does not apply to: the pages are
    # checked under their own CSP.
    context = await context_for(viewport)
    await with_axe(context)
    page = await context.new_page()
    for name, path in pages.items():
        if name == "browse-cards":
            await context.add_cookies([{"name": "reader_view", "value": "cards", "url": site.url}])
        await page.goto(site.url + path)
        await expect(page.locator("main")).to_be_visible()
        if name == "browse-menu":  # a row's ⋯ open, its tags box too
            row = page.locator("article.card").first
            await row.locator(".more-toggle").click()
            await row.get_by_text("tags…").click()
            await expect(row.get_by_role("textbox", name="Tags, separated by commas")).to_be_visible()
        if name == "article":
            await expect(page.locator(".reading .body pre").first).to_be_visible()
            await expect(page.locator(".reading .body pre:not([tabindex='0'])")).to_have_count(0)
            await page.locator("details.text-menu > summary").click()  # the text menu open: its buttons checked too
            await expect(page.locator(".reading-prefs")).to_be_visible()
            await expect(page.locator(".article-tags .tag")).to_have_count(2)
        if name == "tags":
            await expect(page.locator(".tag-list li")).to_have_count(2)
        findings += await _sweep(page, f"{viewport['width']} {{scheme}} {name}", strict=name == "article")
        if name == "browse":  # the list of keys, open over the headlines
            await page.keyboard.press("?")
            await expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
            findings += await _sweep(page, f"{viewport['width']} {{scheme}} keys")
            await page.keyboard.press("Escape")
    await context.clear_cookies()
    assert findings == []


async def _sweep(page, where: str, strict: bool = False) -> list[str]:
    """axe in light, then dark: the serious and critical findings (every finding, but heading
    order inside cleaned text, when strict), each named by `where` with its scheme."""
    findings = []
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        # Dark changes colours only: the structure was checked in light.
        every = await axe_findings(page, only=["color-contrast", "link-in-text-block"] if scheme == "dark" else None)
        findings += [f"{where.format(scheme=scheme)}: {f}" for f in every
                     if f.split()[0] in ("serious", "critical") or (strict and "heading-order" not in f)]
    await page.emulate_media(color_scheme="light")
    return findings


# The space between the parts of a label, on screen: for each pair of consecutive text
# nodes inside the element, the distance from the last glyph of one to the first glyph
# of the next (pairs on different lines, and parts not shown, are left out).
SPACES_BETWEEN_PARTS = """(selector) => [...document.querySelectorAll(selector)].flatMap(el => {
    const glyph = (node, at) => { const r = document.createRange(); r.setStart(node, at); r.setEnd(node, at + 1);
                                  return r.getClientRects()[0]; };
    const parts = [];
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        const text = n.textContent, first = text.search(/\\S/);
        if (first < 0) continue;
        const last = text.length - 1 - [...text].reverse().join('').search(/\\S/);
        const a = glyph(n, first), b = glyph(n, last);
        if (a && b) parts.push({text: text.trim(), left: a.left, right: b.right, top: a.top});
    }
    return parts.slice(1).flatMap((p, i) => Math.abs(p.top - parts[i].top) > 4 ? []
        : [[`${parts[i].text} | ${p.text}`, p.left - parts[i].right]]);
})"""


async def test_the_parts_of_a_label_stand_a_space_apart_on_screen(site, context_for):
    """A link laid out as a flex box drops the space at the edge of each of its parts: the
    nav read "Readyto read" and the reader view "Next:Meal Prep". On screen, every part of
    the nav's links and of Next and Previous stands a space apart from the one before, and
    the back link is named after the list it goes back to."""
    from playwright.async_api import expect

    context = await context_for(DESKTOP)
    page = await context.new_page()
    await page.goto(site.url + f"/articles/{site.ids[TITLES[1]]}?list=state%3Dready%26unread%3D1")
    await expect(page.locator("a[data-key='u']")).to_have_text("← Ready to read")
    # every ready article, read or not (the other tests of this module open some): both
    # ready articles are in it, so this one has a neighbour
    await page.goto(site.url + f"/articles/{site.ids[TITLES[1]]}?list=state%3Dready")
    await expect(page.locator("a[data-key='u']")).to_have_text("← Ready")
    gaps = await page.evaluate(SPACES_BETWEEN_PARTS, ".top nav a, a[rel='next'], a[rel='prev'], #keys-open")
    assert any(pair.startswith("Ready |") for pair, _ in gaps), gaps
    assert any(pair.startswith(("Next: |", "← Previous: |")) for pair, _ in gaps), gaps
    # a key drawn as a box: the space is between the words and the box's edge
    key_gap = await page.evaluate("""() => { const b = document.querySelector('#keys-open');
        const text = b.firstChild, last = text.textContent.trimEnd().length - 1;
        const r = document.createRange(); r.setStart(text, last); r.setEnd(text, last + 1);
        const words = r.getClientRects()[0];
        return b.querySelector('kbd').getBoundingClientRect().left - words.right; }""")
    assert key_gap >= 2, key_gap
    assert [(pair, round(gap, 1)) for pair, gap in gaps if gap < 2] == []
    await page.goto(site.url + f"/articles/{site.ids[TITLES[1]]}")
    await expect(page.locator("a[data-key='u']")).to_have_text("← headlines")


async def test_no_word_of_the_stats_tables_breaks_across_lines_at_any_width(site, context_for):
    """At 1366 px the runs table broke "queue" into "que|ue"; a one-word cell of the stats
    tables keeps its word on one line at every width (the table scrolls instead)."""
    from playwright.async_api import expect

    for viewport in (DESKTOP, PHONE, {"width": 1024, "height": 768}):
        context = await context_for(viewport)
        page = await context.new_page()
        await page.goto(site.url + "/stats")
        await page.locator("details.ledger > summary").click()
        await expect(page.locator("table.runs").first).to_be_visible()
        broken = await page.evaluate("""() => [...document.querySelectorAll('table.runs th, table.runs td')]
            .filter(c => c.textContent.trim() && !/\\s/.test(c.textContent.trim()))
            .filter(c => { const r = document.createRange(); r.selectNodeContents(c);
                           return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1; })
            .map(c => c.textContent.trim())""")
        assert broken == [], (viewport, broken)
        await context.close()
