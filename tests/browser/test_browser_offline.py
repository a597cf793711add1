"""Read anywhere, in a real Chromium against a real uvicorn on 127.0.0.1 (a secure context,
so the service worker runs): the reading list and its articles, text and images, read with
the network off (`context.set_offline(True)` once the worker controls the page); three
actions made offline applied exactly once after reconnecting, replays included; the
share target's landing page saving (and queueing) a link; the reading position restored on
another device and offline; reader stopped while the device stays online (pages from the
saved copies, taps kept and applied once it is back); an article opened and left kept on
the reading list until it is done; a new deploy's worker replacing the old one's caches.

Same Chromium and launch flags as the other browser tests (tests/browser/browsing.py); skipped
without /usr/bin/chromium."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
import pytest_asyncio

from .browsing import TIMEOUT_MS, VIEWPORT, Watch, card, serving
from ..helpers import RSS, published, rss, wait_for

pytestmark = pytest.mark.browser

READING_LIST = "/?state=ready&unread=1"


@pytest.fixture
def settings(settings):
    return settings.replace(fetch_timeout=60.0, claim_ttl=30.0, open_wait=0.5)


async def wait(check: Callable[[], Awaitable[Any]]) -> Any:
    return await wait_for(check, TIMEOUT_MS / 1000, interval=0.05)


def long_article(title: str, marker: str, image: str | None = None, paragraphs: int = 80) -> str:
    """A long article page (so there is a place to stop in), with an image if given."""
    body = "\n".join(
        f"<p>{marker if i == 3 else 'Paragraph'} number {i} of {title} carries enough words to look like "
        f"prose to an extractor, with clauses, commas and a full stop at its end.</p>"
        + (f'<figure><img src="{image}" alt="A page with lines of text" width="192" height="192">'
           f"<figcaption>The picture in {title}</figcaption></figure>" if image and i == 5 else "")
        for i in range(paragraphs)
    )
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head><body>
<header><nav><a href="/">Home</a></nav></header>
<main><article><h1>{title}</h1>{body}</article></main>
<footer><p>Copyright footer text that should not be extracted.</p></footer></body></html>"""


class Library:
    """The test's articles in reader, driven through the JSON API (another device, in effect)."""

    def __init__(self, api: httpx.AsyncClient, ids: dict[str, int], gate: threading.Event):
        self.api = api
        self.ids = ids
        self.gate = gate

    @classmethod
    async def make(cls, api: httpx.AsyncClient, live_server, pages, slugs: list[str], *,
                   gated: tuple[str, ...] = (), image: bool = True) -> Library:
        """Serve `slugs` as long articles (those in `gated` held until `gate` is set) in one
        feed, and subscribe reader to it."""
        gate = threading.Event()
        items = []
        for i, slug in enumerate(slugs):
            picture = f"{live_server.url}/static/icons/icon-192.png" if image else None
            link = pages.add(f"/{slug}.html", long_article(f"Title {slug}", f"marker-{slug}", picture),
                             gate=gate if slug in gated else None)
            items.append({"title": f"Title {slug}", "link": link, "date": published(i)})
        response = await api.post("/api/feeds", json={"url": pages.add("/feed.xml", rss(items), headers=RSS)})
        assert response.status_code == 201, response.text
        listed = (await api.get("/api/articles", params={"limit": 100})).json()["items"]
        by_url = {a["url"]: a["id"] for a in listed}
        return cls(api, {slug: by_url[pages.url(f"/{slug}.html")] for slug in slugs}, gate)

    async def article(self, slug: str) -> dict:
        return (await self.api.get(f"/api/articles/{self.ids[slug]}")).json()

    async def queue(self, *slugs: str) -> None:
        for slug in slugs:
            assert (await self.api.post(f"/api/articles/{self.ids[slug]}/queue")).status_code == 200

    async def wait_state(self, slug: str, state: str) -> None:
        async def reached() -> bool:
            return (await self.article(slug))["state"] == state

        await wait(reached)


@pytest_asyncio.fixture(loop_scope="session")
async def library(live_server, pages):
    """Makes the test's Library (its articles served by `pages`, queued through the API)."""
    async with httpx.AsyncClient(base_url=live_server.url, timeout=30) as api:
        yield lambda slugs, **kwargs: Library.make(api, live_server, pages, slugs, **kwargs)


async def controlled(page, url: str, saved: int) -> None:
    """Open `url` and wait until the service worker controls the page and has saved
    `saved` articles of the reading list."""
    await page.goto(url)
    await page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    await page.wait_for_function("n => document.documentElement.dataset.saved === n", arg=str(saved))


async def outbox(page) -> list[dict]:
    """The offline actions kept in the page's IndexedDB, oldest first."""
    return await page.evaluate("""() => new Promise((resolve, reject) => {
        const open = indexedDB.open("reader", 1);
        open.onsuccess = () => {
            const get = open.result.transaction("outbox").objectStore("outbox").getAll();
            get.onsuccess = () => resolve(get.result);
            get.onerror = () => reject(get.error);
        };
        open.onerror = () => reject(open.error);
    })""")


async def put_back(page, actions: list[dict]) -> None:
    """Put actions back in the outbox as they were (a device that sent them but never
    heard the answers: the tab was closed, the connection dropped)."""
    await page.evaluate("""(actions) => new Promise((resolve, reject) => {
        const open = indexedDB.open("reader", 1);
        open.onsuccess = () => {
            const tx = open.result.transaction("outbox", "readwrite");
            for (const action of actions) tx.objectStore("outbox").put(action);
            tx.oncomplete = () => resolve();
            tx.onerror = () => reject(tx.error);
        };
    })""", actions)


async def outbox_sent(page) -> bool:
    return await outbox(page) == []


def actions(settings) -> list[tuple[str, str, int]]:
    """The actions reader remembers: (id, action, status)."""
    with sqlite3.connect(f"file:{settings.db}?mode=ro", uri=True) as db:
        return db.execute("SELECT key, action, status FROM actions ORDER BY at").fetchall()


async def test_the_reading_list_and_its_articles_read_offline_with_their_images(page, live_server, library):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = await library(["one", "two", "three", "four"])
    await library.queue("one", "two", "three")
    for slug in ("one", "two", "three"):
        await library.wait_state(slug, "ready")
    watch = await Watch.start(page, live_server.url)
    await controlled(page, live_server.url + READING_LIST, 3)
    await expect(page.locator("#saved-note")).to_have_text("3 articles saved on this device for offline reading")
    await expect(page.locator("#offline-banner")).to_be_hidden()
    await watch.collect_csp()
    assert watch.problems == []
    # the worker's saving marks nothing read: it is not a person opening the articles
    assert [(await library.article(s))["read"] for s in ("one", "two", "three")] == [False, False, False]

    await page.context.set_offline(True)
    # the installed app opens on the reading list
    answer = await page.goto(live_server.url + READING_LIST)
    assert answer.from_service_worker
    await expect(page.locator("#offline-banner")).to_be_visible()
    await expect(page.locator("article.card")).to_have_count(3)
    for slug in ("one", "two", "three"):
        # every article on it reads in full: the text and its image
        await page.goto(live_server.url + READING_LIST)
        await card(page, f"Title {slug}").get_by_role("link", name=f"Title {slug}").click()
        await expect(page.locator("h1")).to_have_text(f"Title {slug}")
        body = page.locator(".reading .body")
        await expect(body).to_contain_text(f"marker-{slug}")
        await expect(body).to_contain_text("Paragraph number 79")
        image = body.locator("img")
        # reader's own copy, stored when the article was cleaned
        await expect(image).to_have_attribute("src", re.compile(rf"^/articles/{library.ids[slug]}/images/[0-9a-f]+"))
        await image.scroll_into_view_if_needed()
        await page.wait_for_function("img => img.complete && img.naturalWidth === 192", arg=await image.element_handle())
    # what is not saved says so
    await page.goto(f"{live_server.url}/articles/{library.ids['four']}")
    await expect(page.locator("main")).to_contain_text("Offline: this article is not saved on this device.")
    await page.goto(live_server.url + "/feeds")
    await expect(page.locator("main")).to_contain_text("Offline: this page is not saved on this device.")

    # Online again: the three opened offline are read once reader hears of the opens (the
    # outbox), as opening them online would have made them; pages come from reader, live.
    await page.context.set_offline(False)
    await wait(lambda: outbox_sent(page))
    assert [(await library.article(s))["read"] for s in ("one", "two", "three")] == [True, True, True]
    for slug in ("two", "three"):  # marked unread on another device
        await library.api.delete(f"/api/articles/{library.ids[slug]}/read")
    await library.api.post(f"/api/articles/{library.ids['one']}/done")  # and done with there: off the list
    await page.goto(f"{live_server.url}/articles/{library.ids['one']}")
    await expect(page.get_by_role("button", name="mark unread")).to_be_visible()
    answer = await page.goto(live_server.url + READING_LIST)
    assert answer.headers["cache-control"] == "no-store"  # the live line, through the worker
    await expect(page.locator("article.card")).to_have_count(2)
    await library.api.post(f"/api/articles/{library.ids['two']}/star")  # changed elsewhere: shown at once
    await page.reload()
    await expect(card(page, "Title two").locator(".star-mark")).to_be_visible()
    await page.wait_for_function("n => document.documentElement.dataset.saved === n", arg="2")
    await page.context.set_offline(True)
    await page.goto(f"{live_server.url}/articles/{library.ids['one']}")
    await expect(page.locator("main")).to_contain_text("Offline: this article is not saved on this device.")


async def test_three_offline_actions_are_applied_exactly_once_however_often_they_are_sent(page, live_server, library,
                                                                                   settings):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = await library(["one", "two", "held", "waiting"], gated=("held",), image=False)
    await library.queue("one", "two")
    await library.wait_state("one", "ready")
    await library.wait_state("two", "ready")
    await library.queue("held", "waiting")  # one worker: "held" is being cleaned, "waiting" waits
    await library.wait_state("held", "cleaning")
    assert (await library.article("waiting"))["state"] == "queued"
    await controlled(page, live_server.url + READING_LIST, 2)

    await page.context.set_offline(True)
    # 1. star, in the reader view
    await page.goto(f"{live_server.url}/articles/{library.ids['one']}")
    await expect(page.locator("#offline-banner")).to_be_visible()
    await page.locator("#reading-tools").get_by_role("button", name="star").click()
    await expect(page.locator("#reading-tools").get_by_role("button", name="unstar")).to_be_visible()
    # 2. mark read, from the reading list's ⋯ menu
    await page.goto(live_server.url + READING_LIST)
    two = card(page, "Title two")
    await two.locator(".more-toggle").click()
    await two.get_by_role("button", name="mark read").click()
    await expect(two.get_by_role("button", name="mark unread")).to_be_visible()
    # 3. unqueue, on the queue page
    await page.goto(live_server.url + "/queue")
    waiting = card(page, "Title waiting")
    await waiting.get_by_role("button", name="unqueue").click()
    await expect(waiting.get_by_role("button", name="unqueued")).to_be_disabled()
    kept = await outbox(page)
    assert [(a["method"], a["path"]) for a in kept] == [
        ("POST", f"/api/articles/{library.ids['one']}/opened"),  # its saved copy, opened
        ("POST", f"/api/articles/{library.ids['one']}/star"),
        ("POST", f"/api/articles/{library.ids['two']}/read"),
        ("DELETE", f"/api/articles/{library.ids['waiting']}/queue"),
    ]
    assert len({a["key"] for a in kept}) == 4
    # nothing reached reader (the open is not asked about here: Playwright's offline
    # emulation reaches a new page a moment late, and a send made in that moment is
    # applied, and replayed later as a no-op)
    assert ((await library.article("one"))["starred"], (await library.article("two"))["read"]) == (False, False)
    assert (await library.article("waiting"))["state"] == "queued" and actions(settings) == []

    await page.context.set_offline(False)  # back online: the outbox is sent
    await wait(lambda: outbox_sent(page))
    assert (await library.article("one"))["starred"] is True and (await library.article("one"))["read"] is True
    assert (await library.article("two"))["read"] is True
    assert (await library.article("waiting"))["state"] == "new"
    remembered = actions(settings)
    assert sorted(key for key, _, _ in remembered) == sorted(a["key"] for a in kept)
    assert {status for _, _, status in remembered} == {200}

    # Meanwhile another device undoes all of them. Then the connection flaps, and this device,
    # which (say) never heard the answers, sends the same actions again, three times: each
    # is a no-op now, or the open, the star, the read and the unqueue would come back.
    await library.api.delete(f"/api/articles/{library.ids['one']}/read")
    await library.api.delete(f"/api/articles/{library.ids['one']}/star")
    await library.api.delete(f"/api/articles/{library.ids['two']}/read")
    await library.queue("waiting")
    for _ in range(3):
        await put_back(page, kept)
        await page.context.set_offline(True)
        await page.context.set_offline(False)
        await wait(lambda: outbox_sent(page))
    assert ((await library.article("one"))["starred"], (await library.article("one"))["read"]) == (False, False)
    assert (await library.article("two"))["read"] is False
    assert (await library.article("waiting"))["state"] == "queued"
    assert actions(settings) == remembered
    library.gate.set()


async def test_reader_out_of_reach_while_online_reads_the_saved_copies_and_keeps_the_taps(page, live_server, library,
                                                                                  settings):
    """The device has a network, but it does not lead to reader (the server is stopped: its
    port refuses): navigator.onLine stays true. Pages come from the saved copies, taps wait
    in the outbox, and reader gets them once it is back on the same address."""
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = await library(["one", "two"], image=False)
    await library.queue("one", "two")
    await library.wait_state("one", "ready")
    await library.wait_state("two", "ready")
    await controlled(page, live_server.url + READING_LIST, 2)
    port = live_server.port
    # reader goes away; the browser is none the wiser (stopped from a thread, as serving() does)
    await asyncio.to_thread(live_server.__exit__, None, None, None)
    assert await page.evaluate("() => navigator.onLine") is True
    # a tap on the page loaded while reader was there finds no server: kept all the same
    two = card(page, "Title two")
    await two.locator(".more-toggle").click()
    await two.get_by_role("button", name="mark read").click()
    await expect(two.get_by_role("button", name="mark unread")).to_be_visible()
    await expect(page.locator("#offline-banner")).to_be_visible()
    await expect(page.locator("#offline-banner")).to_contain_text("reader cannot be reached")
    # the pages are the saved copies
    answer = await page.goto(live_server.url + READING_LIST)
    assert answer.from_service_worker
    await expect(page.locator("#offline-banner")).to_contain_text("reader cannot be reached")
    await expect(page.locator("article.card")).to_have_count(2)
    await card(page, "Title one").get_by_role("link", name="Title one").click()
    await expect(page.locator(".reading .body")).to_contain_text("marker-one")
    # a tap on a saved copy goes to the outbox at once
    await page.locator("#reading-tools").get_by_role("button", name="star").click()
    await expect(page.locator("#reading-tools").get_by_role("button", name="unstar")).to_be_visible()

    async def kept_all_three() -> bool:
        return [(a["method"], a["path"]) for a in await outbox(page)] == [
            ("POST", f"/api/articles/{library.ids['two']}/read"),
            ("POST", f"/api/articles/{library.ids['one']}/opened"),  # the saved copy, opened
            ("POST", f"/api/articles/{library.ids['one']}/star"),
        ]

    await wait(kept_all_three)
    await page.goto(f"{live_server.url}/feeds")  # not saved: says so
    await expect(page.locator("main")).to_contain_text("Offline: this page is not saved on this device.")
    await page.go_back()
    await expect(page.locator(".reading .body")).to_contain_text("marker-one")

    async with serving(settings, port=port):  # reader is back where it was: the page sends the outbox by itself
        await wait(lambda: outbox_sent(page))
        assert (await library.article("one"))["read"] is True and (await library.article("one"))["starred"] is True
        assert (await library.article("two"))["read"] is True
        assert sorted(status for _, _, status in actions(settings)) == [200, 200, 200]
        await expect(page.locator("#offline-banner")).to_be_hidden()


async def test_an_article_opened_and_left_stays_on_the_reading_list_until_done(page, live_server, library):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = await library(["long", "skipped", "last"], image=False)
    await library.queue("long", "skipped", "last")
    for slug in ("long", "skipped", "last"):
        await library.wait_state(slug, "ready")

    async def scroll_to(place: float) -> None:
        await page.mouse.move(200, 400)
        await page.mouse.wheel(0, await page.evaluate("""(place) => {
            const box = document.querySelector('.reading .body').getBoundingClientRect();
            return box.top + box.height * place;
        }""", place))
        await wait(lambda: scrolled_to(page, place))

    await page.goto(live_server.url + READING_LIST)
    await card(page, "Title long").get_by_role("link", name="Title long").click()
    await expect(page.locator(".reading .body")).to_contain_text("marker-long")
    await scroll_to(0.4)
    async def place_sent() -> bool:
        place = (await library.article("long"))["read_position"]
        return place is not None and abs(place - 0.4) < 0.03

    await wait(place_sent)
    # on through the list with ]: "skipped" is opened and left at once, which sends no place
    await page.keyboard.press("]")
    await expect(page.locator("h1")).to_have_text("Title skipped")
    await page.keyboard.press("]")
    await expect(page.locator("h1")).to_have_text("Title last")
    # read to its end: done with it
    await scroll_to(1.0)

    async def last_done() -> bool:
        return (await library.article("last"))["done"] is True

    await wait(last_done)
    await page.goto(live_server.url + READING_LIST)
    # read, all three (the unread filter and counts as ever); the two not read to the end stay here
    assert [(await library.article(s))["read"] for s in ("long", "skipped", "last")] == [True, True, True]
    assert (await library.article("skipped"))["read_position"] is None
    await expect(page.locator("article.card")).to_have_count(2)
    await expect(card(page, "Title long")).to_contain_text(re.compile(r"\d+% read"))

    # reopened, it offers "done": it leaves the list, and the place the page sends on leaving
    # (scrolled on just before) does not bring it back
    await card(page, "Title long").get_by_role("link", name="Title long").click()
    await page.wait_for_selector(".reading[data-restored]", state="attached")
    await scroll_to(0.6)
    await page.locator("#reading-tools").get_by_role("button", name="done", exact=True).click()
    await expect(page.locator("#reading-tools").get_by_role("button", name="not done", exact=True)).to_be_visible()
    await page.goto(live_server.url + READING_LIST)
    await expect(page.locator("article.card h2 a")).to_have_text(["Title skipped"])
    assert (await library.article("long"))["done"] is True


async def test_a_shared_link_lands_on_the_confirmation_and_is_saved_and_queued(page, live_server, pages):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    shared = pages.add("/shared.html", long_article("Shared article", "marker-shared"))
    await page.goto(live_server.url + "/")
    manifest = await page.evaluate("() => fetch('/manifest.webmanifest').then(r => r.json())")
    target = manifest["share_target"]
    assert target["method"] == "GET"
    # what Android sends: the title, and the link inside the text
    query = {target["params"]["title"]: "Shared article", target["params"]["text"]: f"Worth a read {shared}"}
    await page.goto(live_server.url + target["action"] + "?" + urlencode(query))
    await expect(page.get_by_label("Link")).to_have_value(shared)
    await expect(page.get_by_label("Title")).to_have_value("Shared article")
    async with httpx.AsyncClient(base_url=live_server.url) as api:
        assert (await api.get("/api/articles")).json()["items"] == []  # the landing page saved nothing
        await page.get_by_role("button", name="Save and queue").click()
        await expect(page.get_by_role("status")).to_contain_text("Saved and queued")
        [item] = (await api.get("/api/articles")).json()["items"]
    assert item["url"] == shared and item["state"] in ("queued", "cleaning", "ready")


async def fraction(page) -> float:
    """How far through the text the reader view is, as static/offline.js measures it."""
    return await page.evaluate("""() => {
        const box = document.querySelector('.reading .body').getBoundingClientRect();
        return box.bottom <= innerHeight ? 1 : Math.max(0, -box.top / box.height);
    }""")


async def scrolled_to(page, place: float) -> bool:
    return abs(await fraction(page) - place) < 0.02


async def test_the_reading_position_is_saved_offline_synced_and_restored_on_another_device(chromium, live_server,
                                                                                      library):
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = await library(["long"], image=False)
    await library.queue("long")
    await library.wait_state("long", "ready")
    phone = await chromium.new_context(viewport={"width": 390, "height": 844})
    laptop = await chromium.new_context(viewport=VIEWPORT)
    try:
        page = await phone.new_page()
        await controlled(page, live_server.url + READING_LIST, 1)
        await phone.set_offline(True)
        await page.goto(f"{live_server.url}/articles/{library.ids['long']}")
        # the person scrolls to three quarters, then back to the middle (the wheel: their own
        # scrolling); only the latest place waits to be sent
        await page.mouse.move(200, 400)
        for place in (0.75, 0.5):
            await page.mouse.wheel(0, await page.evaluate("""(place) => {
                const box = document.querySelector('.reading .body').getBoundingClientRect();
                return box.top + box.height * place;
            }""", place))
            await wait(lambda: scrolled_to(page, place))

            async def only_the_latest_place_waits() -> bool:
                return [abs(json.loads(a["body"])["position"] - place) < 0.02
                        for a in await outbox(page) if a.get("position")] == [True]

            await wait(only_the_latest_place_waits)
        assert (await library.article("long"))["read_position"] is None  # offline: not sent yet
        # reopened offline, on the same device: back in the middle
        await page.goto(live_server.url + READING_LIST)
        await page.goto(f"{live_server.url}/articles/{library.ids['long']}")
        await page.wait_for_selector(".reading[data-restored]", state="attached")
        assert abs(await fraction(page) - 0.5) < 0.03

        await phone.set_offline(False)

        async def place_sent() -> bool:
            return (await library.article("long"))["read_position"] is not None

        async def opened() -> bool:
            return (await library.article("long"))["read"]

        await wait(place_sent)
        assert abs((await library.article("long"))["read_position"] - 0.5) < 0.02
        # opened (the open was kept too), and left half-way: still on the reading list
        await wait(opened)

        # another device: the reading list says so, and opening goes to the middle
        other = await laptop.new_page()
        await other.goto(live_server.url + READING_LIST)
        await expect(card(other, "Title long")).to_contain_text("half read")
        await card(other, "Title long").get_by_role("link", name="Title long").click()
        await other.wait_for_selector(".reading[data-restored]", state="attached")
        assert abs(await fraction(other) - 0.5) < 0.03
    finally:
        await phone.close()
        await laptop.close()


async def cache_names(page) -> list[str]:
    return sorted(await page.evaluate("() => caches.keys()"))


async def test_a_new_deploy_replaces_the_old_worker_and_its_caches(page, live_server):
    """The worker of an older deploy (its script as that deploy served it: another VERSION)
    controls the page and has its caches; the deploy changes /sw.js, and the next check
    for an update installs the new worker, which takes over and deletes every old cache."""
    async with httpx.AsyncClient(base_url=live_server.url) as api:
        current = (await api.get("/sw.js")).text
        offline_js = (await api.get("/static/offline.js")).text
    version = re.search(r'const VERSION = "([^"]+)";', current).group(1)
    old = current.replace(f'const VERSION = "{version}";', 'const VERSION = "0.0.1-olddeploy";')
    await page.context.route("**/sw.js", lambda route: route.fulfill(
        body=old, content_type="text/javascript", headers={"Cache-Control": "no-cache"}))
    await controlled(page, live_server.url + READING_LIST, 0)
    assert await page.evaluate("() => document.documentElement.dataset.worker") == "0.0.1-olddeploy"
    assert await cache_names(page) == ["reader-saved-0.0.1-olddeploy", "reader-shell-0.0.1-olddeploy"]

    await page.context.unroute("**/sw.js")  # the new deploy
    await page.evaluate("() => navigator.serviceWorker.getRegistration().then(r => r.update())")

    async def only_the_new_shell() -> bool:
        return await cache_names(page) == [f"reader-shell-{version}"]

    await wait(only_the_new_shell)
    await page.reload()
    await page.wait_for_function("v => document.documentElement.dataset.worker === v", arg=version)
    assert await cache_names(page) == [f"reader-saved-{version}", f"reader-shell-{version}"]
    # the shell is this deploy's
    shell = await page.evaluate("""() => caches.open(document.documentElement.dataset.worker ?
        'reader-shell-' + document.documentElement.dataset.worker : '')
        .then(c => c.match('/static/offline.js')).then(r => r.text())""")
    assert shell == offline_js


async def test_the_size_budget_keeps_the_oldest_taps_and_leaves_the_rest_online(chromium, live_server, library, settings):
    """A budget that the two articles' text alone fits in, but not their pages: the device
    keeps the first tap whole and says the second is not saved."""
    from playwright.async_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = await library(["first", "second"])
    await library.queue("first", "second")
    await library.wait_state("first", "ready")
    await library.wait_state("second", "ready")
    listed = (await library.api.get("/api/offline")).json()["articles"]
    assert [a["id"] for a in listed] == [library.ids["first"], library.ids["second"]]
    budget = sum(a["bytes"] for a in listed) + 1
    # the same database served with that budget (the budget is a setting of the server)
    async with serving(settings.replace(offline_max_bytes=budget, serve_workers=0)) as small:
        context = await chromium.new_context(viewport=VIEWPORT)
        try:
            page = await context.new_page()
            await controlled(page, small.url + READING_LIST, 1)
            await expect(page.locator("#saved-note")).to_have_text("1 article saved on this device for offline reading")
            await context.set_offline(True)
            await page.goto(f"{small.url}/articles/{library.ids['first']}")
            await expect(page.locator(".reading .body")).to_contain_text("marker-first")
            await page.goto(f"{small.url}/articles/{library.ids['second']}")
            await expect(page.locator("main")).to_contain_text("Offline: this article is not saved on this device.")
        finally:
            await context.close()
