"""The whole reading journey without JavaScript: only what a browser with scripts off
does. Every page is parsed; every write is a form from that page, posted with exactly its
own fields (the CSRF token included, no header), and every answer is followed as a browser
follows a 303. Subscribe, browse, queue three, see them ready (by reloading), open one,
mark it unread, star it, search for a phrase only its cleaned text contains."""

from __future__ import annotations

from urllib.parse import urljoin

import lxml.html
import pytest

from ..helpers import app_client, rss, wait_for

RSS = {"Content-Type": "application/rss+xml"}
SLUGS = ["alpha", "beta", "gamma", "delta"]


def parse(response):
    assert response.status_code == 200, (response.status_code, response.text[:500])
    return lxml.html.document_fromstring(response.text)


def form_fields(form) -> dict[str, str]:
    """What a browser sends for a form: its inputs' names and values (no submit buttons here)."""
    return {i.get("name"): i.get("value") or "" for i in form.iter("input") if i.get("name")}


class Browser:
    """A no-JavaScript browser: cookies, forms, links and 303s."""

    def __init__(self, client):
        self.client = client
        self.url = "/"

    async def get(self, url: str):
        self.url = url
        response = await self.client.get(url)
        return response, parse(response)

    async def press(self, button, **fill):
        """A submit button pressed: its form (its own, or the one its form attribute names),
        sent to its formaction if it has one, with its name and value."""
        owner = button.get("form")
        form = button.getroottree().getroot().get_element_by_id(owner) if owner else next(button.iterancestors("form"))
        pressed = {button.get("name"): button.get("value") or ""} if button.get("name") else {}
        return await self.submit(form, action=button.get("formaction"), **pressed, **fill)

    async def submit(self, form, action=None, **fill):
        method = (form.get("method") or "get").lower()
        action = urljoin(self.url, action or form.get("action") or self.url)
        data = {**form_fields(form), **fill}
        if method == "get":
            response = await self.client.get(action, params=data)
            self.url = str(response.url)
            return response, parse(response)
        assert "csrf" in data and data["csrf"], "a page form without its CSRF token"
        response = await self.client.post(action, data=data)  # no X-CSRF-Token header: the form's field
        assert response.status_code == 303, (response.status_code, response.text[:300])
        return await self.get(response.headers["location"])


def cls(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


CARDS = f".//article[{cls('card')}]"
TITLE = ".//h2//a"
STATUS = f".//*[{cls('status')}]"
TOOLS = ".//*[@id='reading-tools']"


def card_of(tree, title: str):
    [card] = [c for c in tree.xpath(CARDS) if c.xpath(TITLE)[0].text_content() == title]
    return card


def button(scope, label: str):
    [found] = [b for b in scope.iter("button") if b.text_content().strip() == label]
    return found


def button_form(scope, label: str):
    forms = [f for f in scope.iter("form") if any(b.text_content().strip() == label for b in f.iter("button"))]
    assert len(forms) == 1, f"{len(forms)} forms with a {label!r} button"
    return forms[0]


@pytest.fixture
async def browser(settings):
    async with app_client(settings, csrf=False) as client:  # a bare client: no token header added
        first = await client.get("/")
        assert first.status_code == 200
        yield Browser(client)


async def test_the_reading_journey_without_javascript(browser, pages):
    items = [{"title": f"Story {s}", "link": pages.add_article(s), "summary": f"Summary of {s}.",
              "date": f"Mon, 0{i + 1} Nov 2026 10:00:00 GMT"} for i, s in enumerate(SLUGS)]
    feed = pages.add("/feed.xml", rss(items, title="Plain feed"), headers=RSS)

    # Subscribe through the feeds page form.
    _, tree = await browser.get("/feeds")
    [subscribe] = [f for f in tree.iter("form") if f.get("action") == "/feeds"]
    _, tree = await browser.submit(subscribe, url=feed)
    assert "Plain feed" in tree.text_content()

    # Browse and queue three with each card's button (of the page's one form, to its own
    # formaction); each post comes back to the list.
    _, tree = await browser.get("/")
    assert len(tree.xpath(CARDS)) == len(SLUGS)
    for slug in SLUGS[:3]:
        _, tree = await browser.press(button(card_of(tree, f"Story {slug}"), "queue"))
        assert browser.url.endswith("/")
        status = card_of(tree, f"Story {slug}").xpath(STATUS)[0].text_content()
        assert "in line" in status or "cleaning" in status or "ready" in status

    # No poll without JavaScript: a person reloads until the three are ready.
    async def all_ready():
        _, page = await browser.get("/")
        states = [card_of(page, f"Story {s}").xpath(STATUS)[0].text_content().strip() for s in SLUGS[:3]]
        return (page,) if states == ["ready"] * 3 else None  # a tuple: elements have no truth value

    [tree] = await wait_for(all_ready, timeout=60)
    assert card_of(tree, "Story delta").xpath(STATUS) == []  # never tapped: nothing to say
    assert pages.hits["/delta.html"] == 0  # never tapped, never fetched

    # Open one by its link: the cleaned text, and it is now read.
    link = card_of(tree, "Story beta").xpath(TITLE)[0].get("href")
    _, page = await browser.get(link)
    body = page.xpath(f".//*[@id='reading-body']//*[{cls('body')}]")[0].text_content()
    assert "marker-beta" in body and "Copyright footer text" not in body
    assert page.xpath(".//noscript") == []  # ready: no refresh

    # Mark it unread: back to the list, where it shows as unread again.
    _, tree = await browser.submit(button_form(page.xpath(TOOLS)[0], "mark unread"))
    assert browser.url.endswith("/")
    assert card_of(tree, "Story beta").get("data-read") == "no"

    # Star it from the reader view; the starred filter shows it.
    _, page = await browser.get(link)
    _, page = await browser.submit(button_form(page.xpath(TOOLS)[0], "star"))
    assert browser.url.endswith(link)
    assert button_form(page.xpath(TOOLS)[0], "unstar") is not None
    _, tree = await browser.get("/?starred=1")
    assert [c.xpath(TITLE)[0].text_content() for c in tree.xpath(CARDS)] == ["Story beta"]

    # Search with the header's form for words only the cleaned text has (not the feed).
    [search] = [f for f in tree.iter("form") if f.get("role") == "search"]
    _, results = await browser.submit(search, q="marker-beta")
    cards = results.xpath(CARDS)
    assert [c.xpath(TITLE)[0].text_content() for c in cards] == ["Story beta"]
    marks = [m.text_content() for m in cards[0].xpath(f".//*[{cls('snippet')}]//mark")]
    assert marks and all("beta" in m or "marker" in m for m in marks)


async def test_bulk_read_and_undo_without_javascript(browser, pages):
    """Mark these read, undo, mark all read: the page's own forms, 303s, and the notice's
    undo form, with no script at all; an article that arrives after the page was shown is
    not swept away by "mark all read"."""
    items = [{"title": f"Story {s}", "link": pages.add_article(s), "date": f"Mon, 0{i + 1} Nov 2026 10:00:00 GMT"}
             for i, s in enumerate(SLUGS)]
    feed = pages.add("/feed.xml", rss(items, title="Plain feed"), headers=RSS)
    _, tree = await browser.get("/feeds")
    [subscribe] = [f for f in tree.iter("form") if f.get("action") == "/feeds"]
    await browser.submit(subscribe, url=feed)

    _, tree = await browser.get("/?unread=1")
    assert len(tree.xpath(CARDS)) == 4
    _, tree = await browser.submit(button_form(tree, "Mark these read"))
    assert tree.xpath(CARDS) == []
    assert "Marked 4 articles read." in tree.text_content()
    _, tree = await browser.submit(button_form(tree, "Undo"))
    assert "4 articles are unread again." in tree.text_content()
    assert len(tree.xpath(CARDS)) == 4

    # a saved link arrives while the page is open: "mark all read" leaves it unread
    await browser.client.post("/api/articles", json={"url": pages.url("/later.html"), "title": "Later"})
    _, tree = await browser.submit(button_form(tree, "Mark all read"))
    assert [c.xpath(TITLE)[0].text_content() for c in tree.xpath(CARDS)] == ["Later"]
    assert "Marked 4 articles read." in tree.text_content()
    _, tree = await browser.submit(button_form(tree, "Undo"))
    assert len(tree.xpath(CARDS)) == 5
