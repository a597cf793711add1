"""Read anywhere, in a real Chromium against a real uvicorn on 127.0.0.1 (a secure context,
so the service worker runs): the reading list and its articles, text and images, read with
the network off (`context.set_offline(True)` once the worker controls the page); three
actions made offline applied exactly once after reconnecting, replays included; the
share target's landing page saving (and queueing) a link; the reading position restored on
another device and offline; reader stopped while the device stays online (pages from the
saved copies, taps kept and applied once it is back); an article left part-way kept on
the reading list until it is marked read; a new deploy's worker replacing the old one's caches.

Same Chromium and launch flags as the other browser tests (tests/browsing.py); skipped
without /usr/bin/chromium."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from .browsing import TIMEOUT_MS, VIEWPORT, Watch, card
from .helpers import RSS, LiveServer, published, rss, until

pytestmark = pytest.mark.browser

READING_LIST = "/?state=ready&unread=1"


@pytest.fixture
def settings(settings):
    return settings.replace(fetch_timeout=60.0, claim_ttl=30.0, open_wait=0.5)


def wait(check: Callable[[], Any], timeout: float = TIMEOUT_MS / 1000) -> Any:
    return until(check, timeout)


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

    def __init__(self, api: httpx.Client, live_server, pages, slugs: list[str], *, gated: tuple[str, ...] = (),
                 image: bool = True):
        self.url = live_server.url
        self.api = api
        self.gate = threading.Event()
        items = []
        for i, slug in enumerate(slugs):
            picture = f"{live_server.url}/static/icons/icon-192.png" if image else None
            link = pages.add(f"/{slug}.html", long_article(f"Title {slug}", f"marker-{slug}", picture),
                             gate=self.gate if slug in gated else None)
            items.append({"title": f"Title {slug}", "link": link, "date": published(i)})
        response = self.api.post("/api/feeds", json={"url": pages.add("/feed.xml", rss(items), headers=RSS)})
        assert response.status_code == 201, response.text
        by_url = {a["url"]: a["id"] for a in self.api.get("/api/articles", params={"limit": 100}).json()["items"]}
        self.ids = {slug: by_url[pages.url(f"/{slug}.html")] for slug in slugs}

    def article(self, slug: str) -> dict:
        return self.api.get(f"/api/articles/{self.ids[slug]}").json()

    def queue(self, *slugs: str) -> None:
        for slug in slugs:
            assert self.api.post(f"/api/articles/{self.ids[slug]}/queue").status_code == 200

    def wait_state(self, slug: str, state: str) -> None:
        wait(lambda: self.article(slug)["state"] == state)


@pytest.fixture
def library(live_server, pages):
    """Makes the test's Library (its articles served by `pages`, queued through the API)."""
    with httpx.Client(base_url=live_server.url, timeout=30) as api:
        yield lambda slugs, **kwargs: Library(api, live_server, pages, slugs, **kwargs)


def controlled(page, url: str, saved: int) -> None:
    """Open `url` and wait until the service worker controls the page and has saved
    `saved` articles of the reading list."""
    page.goto(url)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    page.wait_for_function("n => document.documentElement.dataset.saved === n", arg=str(saved))


def outbox(page) -> list[dict]:
    """The offline actions kept in the page's IndexedDB, oldest first."""
    return page.evaluate("""() => new Promise((resolve, reject) => {
        const open = indexedDB.open("reader", 1);
        open.onsuccess = () => {
            const get = open.result.transaction("outbox").objectStore("outbox").getAll();
            get.onsuccess = () => resolve(get.result);
            get.onerror = () => reject(get.error);
        };
        open.onerror = () => reject(open.error);
    })""")


def put_back(page, actions: list[dict]) -> None:
    """Put actions back in the outbox as they were (a device that sent them but never
    heard the answers: the tab was closed, the connection dropped)."""
    page.evaluate("""(actions) => new Promise((resolve, reject) => {
        const open = indexedDB.open("reader", 1);
        open.onsuccess = () => {
            const tx = open.result.transaction("outbox", "readwrite");
            for (const action of actions) tx.objectStore("outbox").put(action);
            tx.oncomplete = () => resolve();
            tx.onerror = () => reject(tx.error);
        };
    })""", actions)


def actions(settings) -> list[tuple[str, str, int]]:
    """The actions reader remembers: (id, action, status)."""
    with sqlite3.connect(f"file:{settings.db}?mode=ro", uri=True) as db:
        return db.execute("SELECT key, action, status FROM actions ORDER BY at").fetchall()


def test_the_reading_list_and_its_articles_read_offline_with_their_images(page, live_server, library):
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = library(["one", "two", "three", "four"])
    library.queue("one", "two", "three")
    for slug in ("one", "two", "three"):
        library.wait_state(slug, "ready")
    watch = Watch(page, live_server.url)
    controlled(page, live_server.url + READING_LIST, 3)
    expect(page.locator("#saved-note")).to_have_text("3 articles saved on this device for offline reading")
    expect(page.locator("#offline-banner")).to_be_hidden()
    watch.collect_csp()
    assert watch.problems == []
    # the worker's saving marks nothing read: it is not a person opening the articles
    assert [library.article(s)["read"] for s in ("one", "two", "three")] == [False, False, False]

    page.context.set_offline(True)
    # the installed app opens on the reading list
    answer = page.goto(live_server.url + READING_LIST)
    assert answer.from_service_worker
    expect(page.locator("#offline-banner")).to_be_visible()
    expect(page.locator("article.card")).to_have_count(3)
    for slug in ("one", "two", "three"):
        # every article on it reads in full: the text and its image
        page.goto(live_server.url + READING_LIST)
        card(page, f"Title {slug}").get_by_role("link", name=f"Title {slug}").click()
        expect(page.locator("h1")).to_have_text(f"Title {slug}")
        body = page.locator(".reading .body")
        expect(body).to_contain_text(f"marker-{slug}")
        expect(body).to_contain_text("Paragraph number 79")
        image = body.locator("img")
        # reader's own copy, stored when the article was cleaned
        expect(image).to_have_attribute("src", re.compile(rf"^/articles/{library.ids[slug]}/images/[0-9a-f]+"))
        image.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth === 192", arg=image.element_handle())
    # what is not saved says so
    page.goto(f"{live_server.url}/articles/{library.ids['four']}")
    expect(page.locator("main")).to_contain_text("Offline: this article is not saved on this device.")
    page.goto(live_server.url + "/feeds")
    expect(page.locator("main")).to_contain_text("Offline: this page is not saved on this device.")

    # Online again: the three opened offline are read once reader hears of the opens (the
    # outbox), as opening them online would have made them; pages come from reader, live.
    page.context.set_offline(False)
    wait(lambda: outbox(page) == [])
    assert [library.article(s)["read"] for s in ("one", "two", "three")] == [True, True, True]
    for slug in ("two", "three"):  # marked unread on another device
        library.api.delete(f"/api/articles/{library.ids[slug]}/read")
    page.goto(f"{live_server.url}/articles/{library.ids['one']}")
    expect(page.get_by_role("button", name="mark unread")).to_be_visible()
    answer = page.goto(live_server.url + READING_LIST)
    assert answer.headers["cache-control"] == "no-store"  # the live line, through the worker
    expect(page.locator("article.card")).to_have_count(2)
    library.api.post(f"/api/articles/{library.ids['two']}/star")  # changed elsewhere: shown at once
    page.reload()
    expect(card(page, "Title two").locator(".star-mark")).to_be_visible()
    page.wait_for_function("n => document.documentElement.dataset.saved === n", arg="2")
    page.context.set_offline(True)
    page.goto(f"{live_server.url}/articles/{library.ids['one']}")
    expect(page.locator("main")).to_contain_text("Offline: this article is not saved on this device.")


def test_three_offline_actions_are_applied_exactly_once_however_often_they_are_sent(page, live_server, library,
                                                                                   settings):
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = library(["one", "two", "held", "waiting"], gated=("held",), image=False)
    library.queue("one", "two")
    library.wait_state("one", "ready")
    library.wait_state("two", "ready")
    library.queue("held", "waiting")  # one worker: "held" is being cleaned, "waiting" waits
    library.wait_state("held", "cleaning")
    assert library.article("waiting")["state"] == "queued"
    controlled(page, live_server.url + READING_LIST, 2)

    page.context.set_offline(True)
    # 1. star, in the reader view
    page.goto(f"{live_server.url}/articles/{library.ids['one']}")
    expect(page.locator("#offline-banner")).to_be_visible()
    page.locator("#reading-tools").get_by_role("button", name="star").click()
    expect(page.locator("#reading-tools").get_by_role("button", name="unstar")).to_be_visible()
    # 2. mark read, from the reading list's "more" menu
    page.goto(live_server.url + READING_LIST)
    two = card(page, "Title two")
    two.locator("details.more > summary").click()
    two.get_by_role("button", name="mark read").click()
    expect(two.get_by_role("button", name="mark unread")).to_be_visible()
    # 3. unqueue, on the queue page
    page.goto(live_server.url + "/queue")
    waiting = card(page, "Title waiting")
    waiting.get_by_role("button", name="unqueue").click()
    expect(waiting.get_by_role("button", name="unqueued")).to_be_disabled()
    kept = outbox(page)
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
    assert (library.article("one")["starred"], library.article("two")["read"]) == (False, False)
    assert library.article("waiting")["state"] == "queued" and actions(settings) == []

    page.context.set_offline(False)  # back online: the outbox is sent
    wait(lambda: outbox(page) == [])
    assert library.article("one")["starred"] is True and library.article("one")["read"] is True
    assert library.article("two")["read"] is True
    assert library.article("waiting")["state"] == "new"
    remembered = actions(settings)
    assert sorted(key for key, _, _ in remembered) == sorted(a["key"] for a in kept)
    assert {status for _, _, status in remembered} == {200}

    # Meanwhile another device undoes all of them. Then the connection flaps, and this device,
    # which (say) never heard the answers, sends the same actions again, three times: each
    # is a no-op now, or the open, the star, the read and the unqueue would come back.
    library.api.delete(f"/api/articles/{library.ids['one']}/read")
    library.api.delete(f"/api/articles/{library.ids['one']}/star")
    library.api.delete(f"/api/articles/{library.ids['two']}/read")
    library.queue("waiting")
    for _ in range(3):
        put_back(page, kept)
        page.context.set_offline(True)
        page.context.set_offline(False)
        wait(lambda: outbox(page) == [])
    assert (library.article("one")["starred"], library.article("one")["read"]) == (False, False)
    assert library.article("two")["read"] is False
    assert library.article("waiting")["state"] == "queued"
    assert actions(settings) == remembered
    library.gate.set()


def test_reader_out_of_reach_while_online_reads_the_saved_copies_and_keeps_the_taps(page, live_server, library,
                                                                                  settings):
    """The device has a network, but it does not lead to reader (the server is stopped: its
    port refuses): navigator.onLine stays true. Pages come from the saved copies, taps wait
    in the outbox, and reader gets them once it is back on the same address."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = library(["one", "two"], image=False)
    library.queue("one", "two")
    library.wait_state("one", "ready")
    library.wait_state("two", "ready")
    controlled(page, live_server.url + READING_LIST, 2)
    port = live_server.port
    live_server.__exit__(None, None, None)  # reader goes away; the browser is none the wiser
    assert page.evaluate("() => navigator.onLine") is True
    # a tap on the page loaded while reader was there finds no server: kept all the same
    two = card(page, "Title two")
    two.locator("details.more > summary").click()
    two.get_by_role("button", name="mark read").click()
    expect(two.get_by_role("button", name="mark unread")).to_be_visible()
    expect(page.locator("#offline-banner")).to_be_visible()
    expect(page.locator("#offline-banner")).to_contain_text("reader cannot be reached")
    # the pages are the saved copies
    answer = page.goto(live_server.url + READING_LIST)
    assert answer.from_service_worker
    expect(page.locator("#offline-banner")).to_contain_text("reader cannot be reached")
    expect(page.locator("article.card")).to_have_count(2)
    card(page, "Title one").get_by_role("link", name="Title one").click()
    expect(page.locator(".reading .body")).to_contain_text("marker-one")
    # a tap on a saved copy goes to the outbox at once
    page.locator("#reading-tools").get_by_role("button", name="star").click()
    expect(page.locator("#reading-tools").get_by_role("button", name="unstar")).to_be_visible()
    wait(lambda: [(a["method"], a["path"]) for a in outbox(page)] == [
        ("POST", f"/api/articles/{library.ids['two']}/read"),
        ("POST", f"/api/articles/{library.ids['one']}/opened"),  # the saved copy, opened
        ("POST", f"/api/articles/{library.ids['one']}/star"),
    ])
    page.goto(f"{live_server.url}/feeds")  # not saved: says so
    expect(page.locator("main")).to_contain_text("Offline: this page is not saved on this device.")
    page.go_back()
    expect(page.locator(".reading .body")).to_contain_text("marker-one")

    with LiveServer(settings, port=port):  # reader is back where it was: the page sends the outbox by itself
        wait(lambda: outbox(page) == [])
        assert library.article("one")["read"] is True and library.article("one")["starred"] is True
        assert library.article("two")["read"] is True
        assert sorted(status for _, _, status in actions(settings)) == [200, 200, 200]
        expect(page.locator("#offline-banner")).to_be_hidden()


def test_an_article_left_part_way_stays_on_the_reading_list_until_marked_read(page, live_server, library):
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = library(["long", "skipped", "last"], image=False)
    library.queue("long", "skipped", "last")
    for slug in ("long", "skipped", "last"):
        library.wait_state(slug, "ready")

    def scroll_to(place: float) -> None:
        page.mouse.move(200, 400)
        page.mouse.wheel(0, page.evaluate("""(place) => {
            const box = document.querySelector('.reading .body').getBoundingClientRect();
            return box.top + box.height * place;
        }""", place))
        wait(lambda: abs(fraction(page) - place) < 0.02)

    page.goto(live_server.url + READING_LIST)
    card(page, "Title long").get_by_role("link", name="Title long").click()
    expect(page.locator(".reading .body")).to_contain_text("marker-long")
    scroll_to(0.4)
    wait(lambda: (place := library.article("long")["read_position"]) is not None and abs(place - 0.4) < 0.03)
    # on through the list with ]: "skipped" is opened and left at once, which sends no place
    page.keyboard.press("]")
    expect(page.locator("h1")).to_have_text("Title skipped")
    page.keyboard.press("]")
    expect(page.locator("h1")).to_have_text("Title last")
    page.goto(live_server.url + READING_LIST)
    # read, all three (the unread filter and counts as ever); the one left part-way stays here
    assert [library.article(s)["read"] for s in ("long", "skipped", "last")] == [True, True, True]
    assert library.article("skipped")["read_position"] is None
    expect(page.locator("article.card")).to_have_count(1)
    expect(card(page, "Title long")).to_contain_text(re.compile(r"\d+% read"))

    # reopened, it offers "mark read": done with it, it leaves the list, and the place the page
    # would send on leaving (scrolled on just before) does not bring it back
    card(page, "Title long").get_by_role("link", name="Title long").click()
    page.wait_for_selector(".reading[data-restored]", state="attached")
    scroll_to(0.6)
    page.locator("#reading-tools").get_by_role("button", name="mark read").click()
    expect(page.locator("#reading-tools").get_by_role("button", name="mark unread")).to_be_visible()
    page.goto(live_server.url + READING_LIST)
    expect(page.locator("article.card")).to_have_count(0)
    assert library.article("long")["read_position"] == 1.0


def test_a_shared_link_lands_on_the_confirmation_and_is_saved_and_queued(page, live_server, pages):
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    shared = pages.add("/shared.html", long_article("Shared article", "marker-shared"))
    page.goto(live_server.url + "/")
    manifest = page.evaluate("() => fetch('/manifest.webmanifest').then(r => r.json())")
    target = manifest["share_target"]
    assert target["method"] == "GET"
    # what Android sends: the title, and the link inside the text
    query = {target["params"]["title"]: "Shared article", target["params"]["text"]: f"Worth a read {shared}"}
    page.goto(live_server.url + target["action"] + "?" + urlencode(query))
    expect(page.get_by_label("Link")).to_have_value(shared)
    expect(page.get_by_label("Title")).to_have_value("Shared article")
    with httpx.Client(base_url=live_server.url) as api:
        assert api.get("/api/articles").json()["items"] == []  # the landing page saved nothing
        page.get_by_role("button", name="Save and queue").click()
        expect(page.get_by_role("status")).to_contain_text("Saved and queued")
        [item] = api.get("/api/articles").json()["items"]
    assert item["url"] == shared and item["state"] in ("queued", "cleaning", "ready")


def fraction(page) -> float:
    """How far through the text the reader view is, as static/offline.js measures it."""
    return page.evaluate("""() => {
        const box = document.querySelector('.reading .body').getBoundingClientRect();
        return box.bottom <= innerHeight ? 1 : Math.max(0, -box.top / box.height);
    }""")


def test_the_reading_position_is_saved_offline_synced_and_restored_on_another_device(chromium, live_server,
                                                                                      library):
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = library(["long"], image=False)
    library.queue("long")
    library.wait_state("long", "ready")
    phone = chromium.new_context(viewport={"width": 390, "height": 844})
    laptop = chromium.new_context(viewport=VIEWPORT)
    try:
        page = phone.new_page()
        controlled(page, live_server.url + READING_LIST, 1)
        phone.set_offline(True)
        page.goto(f"{live_server.url}/articles/{library.ids['long']}")
        # the person scrolls to three quarters, then back to the middle (the wheel: their own
        # scrolling); only the latest place waits to be sent
        page.mouse.move(200, 400)
        for place in (0.75, 0.5):
            page.mouse.wheel(0, page.evaluate("""(place) => {
                const box = document.querySelector('.reading .body').getBoundingClientRect();
                return box.top + box.height * place;
            }""", place))
            wait(lambda: abs(fraction(page) - place) < 0.02)
            wait(lambda: [abs(json.loads(a["body"])["position"] - place) < 0.02
                          for a in outbox(page) if a.get("position")] == [True])
        assert library.article("long")["read_position"] is None  # offline: not sent yet
        # reopened offline, on the same device: back in the middle
        page.goto(live_server.url + READING_LIST)
        page.goto(f"{live_server.url}/articles/{library.ids['long']}")
        page.wait_for_selector(".reading[data-restored]", state="attached")
        assert abs(fraction(page) - 0.5) < 0.03

        phone.set_offline(False)
        wait(lambda: library.article("long")["read_position"] is not None)
        assert abs(library.article("long")["read_position"] - 0.5) < 0.02
        # opened (the open was kept too), and left half-way: still on the reading list
        wait(lambda: library.article("long")["read"])

        # another device: the reading list says so, and opening goes to the middle
        other = laptop.new_page()
        other.goto(live_server.url + READING_LIST)
        expect(card(other, "Title long")).to_contain_text("half read")
        card(other, "Title long").get_by_role("link", name="Title long").click()
        other.wait_for_selector(".reading[data-restored]", state="attached")
        assert abs(fraction(other) - 0.5) < 0.03
    finally:
        phone.close()
        laptop.close()


def cache_names(page) -> list[str]:
    return sorted(page.evaluate("() => caches.keys()"))


def test_a_new_deploy_replaces_the_old_worker_and_its_caches(page, live_server):
    """The worker of an older deploy (its script as that deploy served it: another VERSION)
    controls the page and has its caches; the deploy changes /sw.js, and the next check
    for an update installs the new worker, which takes over and deletes every old cache."""
    current = httpx.get(live_server.url + "/sw.js").text
    version = re.search(r'const VERSION = "([^"]+)";', current).group(1)
    old = current.replace(f'const VERSION = "{version}";', 'const VERSION = "0.0.1-olddeploy";')
    page.context.route("**/sw.js", lambda route: route.fulfill(
        body=old, content_type="text/javascript", headers={"Cache-Control": "no-cache"}))
    controlled(page, live_server.url + READING_LIST, 0)
    assert page.evaluate("() => document.documentElement.dataset.worker") == "0.0.1-olddeploy"
    assert cache_names(page) == ["reader-saved-0.0.1-olddeploy", "reader-shell-0.0.1-olddeploy"]

    page.context.unroute("**/sw.js")  # the new deploy
    page.evaluate("() => navigator.serviceWorker.getRegistration().then(r => r.update())")
    wait(lambda: cache_names(page) == [f"reader-shell-{version}"])
    page.reload()
    page.wait_for_function("v => document.documentElement.dataset.worker === v", arg=version)
    assert cache_names(page) == [f"reader-saved-{version}", f"reader-shell-{version}"]
    # the shell is this deploy's
    shell = page.evaluate("""() => caches.open(document.documentElement.dataset.worker ?
        'reader-shell-' + document.documentElement.dataset.worker : '')
        .then(c => c.match('/static/offline.js')).then(r => r.text())""")
    assert shell == httpx.get(live_server.url + "/static/offline.js").text


def test_the_size_budget_keeps_the_oldest_taps_and_leaves_the_rest_online(chromium, live_server, library, settings):
    """A budget that the two articles' text alone fits in, but not their pages: the device
    keeps the first tap whole and says the second is not saved."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    library = library(["first", "second"])
    library.queue("first", "second")
    library.wait_state("first", "ready")
    library.wait_state("second", "ready")
    listed = library.api.get("/api/offline").json()["articles"]
    assert [a["id"] for a in listed] == [library.ids["first"], library.ids["second"]]
    budget = sum(a["bytes"] for a in listed) + 1
    # the same database served with that budget (the budget is a setting of the server)
    with LiveServer(settings.replace(offline_max_bytes=budget, serve_workers=0)) as small:
        context = chromium.new_context(viewport=VIEWPORT)
        try:
            page = context.new_page()
            controlled(page, small.url + READING_LIST, 1)
            expect(page.locator("#saved-note")).to_have_text("1 article saved on this device for offline reading")
            context.set_offline(True)
            page.goto(f"{small.url}/articles/{library.ids['first']}")
            expect(page.locator(".reading .body")).to_contain_text("marker-first")
            page.goto(f"{small.url}/articles/{library.ids['second']}")
            expect(page.locator("main")).to_contain_text("Offline: this article is not saved on this device.")
        finally:
            context.close()
