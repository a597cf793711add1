"""Logging out leaves nothing readable offline, in a real Chromium (Playwright's async API)
against a real uvicorn on 127.0.0.1 with a password: log in, let the service worker save
the reading list, log out with the footer's button, go offline, open a saved article: it is
not served. And a browser whose session ended without a logout (reader restarted: sessions
live in memory) drops the saved copies as soon as it is sent to the login page.

Each test has a context of its own on the shared Chromium. Skipped without Chromium."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest

from .browsing import TIMEOUT_MS, VIEWPORT
from ..helpers import RSS, LiveServer, published, rss, wait_for
from .test_browser_offline import long_article

pytestmark = pytest.mark.browser

PASSWORD = "a long enough password"
READING_LIST = "/?state=ready&unread=1"


@pytest.fixture
def settings(settings):
    return settings.replace(password=PASSWORD, fetch_timeout=60.0, claim_ttl=30.0, open_wait=0.5)


@contextlib.asynccontextmanager
async def browser_page(chromium) -> AsyncIterator:
    context = await chromium.new_context(viewport=VIEWPORT, color_scheme="light")
    context.set_default_timeout(TIMEOUT_MS)
    try:
        yield await context.new_page()
    finally:
        await context.close()


async def ready_article(url: str, pages, slug: str) -> int:
    """One article on the reading list, cleaned, through the API (the password as a bearer token)."""
    async with httpx.AsyncClient(base_url=url, timeout=30, headers={"Authorization": f"Bearer {PASSWORD}"}) as api:
        link = pages.add(f"/{slug}.html", long_article(f"Title {slug}", f"marker-{slug}"))
        feed = pages.add("/feed.xml", rss([{"title": f"Title {slug}", "link": link, "date": published(0)}]),
                         headers=RSS)
        assert (await api.post("/api/feeds", json={"url": feed})).status_code == 201
        [item] = (await api.get("/api/articles")).json()["items"]
        assert (await api.post(f"/api/articles/{item['id']}/queue")).status_code == 200

        async def ready() -> bool:
            return (await api.get(f"/api/articles/{item['id']}")).json()["state"] == "ready"

        await wait_for(ready, timeout=60)
        return int(item["id"])


async def log_in_and_save(page, url: str, saved: int) -> None:
    await page.goto(url + READING_LIST)
    await page.fill("#password", PASSWORD)
    await page.click("form[action='/login'] button[type=submit]")
    await page.wait_for_url(url + READING_LIST)
    await page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    await page.wait_for_function("n => document.documentElement.dataset.saved === n", arg=str(saved))


async def served_offline(page, url: str, marker: str) -> bool:
    """Whether the page at `url` opens, with `marker` in it, with the network off."""
    await page.context.set_offline(True)
    try:
        await page.goto(url)
    except Exception:  # no worker left to answer: the browser's own offline error
        return False
    finally:
        await page.context.set_offline(False)
    return marker in await page.content()


# The page's IndexedDB (static/offline.js's schema): the outbox and the reading positions.
OPEN_DB = """const open = indexedDB.open("reader", 1);
    open.onupgradeneeded = () => {
        open.result.createObjectStore("outbox", { keyPath: "seq", autoIncrement: true });
        open.result.createObjectStore("positions", { keyPath: "id" });
    };"""


async def positions(page) -> list[dict]:
    return await page.evaluate("""() => new Promise((resolve, reject) => {
        %s
        open.onsuccess = () => {
            const get = open.result.transaction("positions").objectStore("positions").getAll();
            get.onsuccess = () => { open.result.close(); resolve(get.result); };
        };
        open.onerror = () => reject(open.error);
    })""" % OPEN_DB)


async def keep_position(page, article: int) -> None:
    """A place in the article, kept on this device as offline.js keeps it."""
    await page.evaluate("""(id) => new Promise((resolve, reject) => {
        %s
        open.onsuccess = () => {
            const tx = open.result.transaction("positions", "readwrite");
            tx.objectStore("positions").put({ id: String(id), position: 0.5, at: Date.now() / 1000 });
            tx.oncomplete = () => { open.result.close(); resolve(); };
            tx.onerror = () => reject(tx.error);
        };
    })""" % OPEN_DB, article)


async def saved_caches(page) -> list[str]:
    return [n for n in await page.evaluate("() => caches.keys()") if n.startswith("reader-saved-")]


async def test_after_logging_out_no_saved_page_is_served_offline(settings, pages, chromium) -> None:
    with LiveServer(settings) as live:
        article = await ready_article(live.url, pages, "one")
        async with browser_page(chromium) as page:
            await log_in_and_save(page, live.url, 1)
            # saved, as it should be (the article is not opened: its saved copy, opened, would mark it read)
            assert await served_offline(page, live.url + READING_LIST, "Title one")
            await page.goto(live.url + READING_LIST)
            assert await page.evaluate("(path) => caches.match(path).then(r => r !== undefined)",
                                       f"/articles/{article}")
            await keep_position(page, article)
            assert len(await positions(page)) == 1

            await page.click("form.logout button[type=submit]")
            await page.wait_for_url(live.url + "/login")
            assert not await served_offline(page, f"{live.url}/articles/{article}", "marker-one")
            assert not await served_offline(page, live.url + READING_LIST, "Title one")
            await page.goto(live.url + "/login")
            assert await saved_caches(page) == []
            assert await positions(page) == []  # the database went, the outbox with it


async def test_a_session_that_ended_without_a_logout_drops_the_saved_copies_at_the_login_page(settings, pages,
                                                                                               chromium) -> None:
    """No Clear-Site-Data and no message here: reader restarted, so the session is gone, and
    the worker learns it from the login page it is sent to."""
    with LiveServer(settings) as live:
        article = await ready_article(live.url, pages, "two")
        port = live.port
        async with browser_page(chromium) as page:
            await log_in_and_save(page, live.url, 1)
            live.__exit__(None, None, None)
            with LiveServer(settings, port=port) as again:
                await page.goto(again.url + READING_LIST)
                await page.wait_for_url(f"{again.url}/login?**")
                assert await saved_caches(page) == []
                assert not await served_offline(page, f"{again.url}/articles/{article}", "marker-two")
