"""What the browser test modules share: Debian's Chromium and how it is launched, the
realistic headlines they browse, a watch on everything that goes wrong in a page, and a
server started inside a test. The tests drive Chromium through Playwright's async API; the
`chromium` and `page` fixtures, and the event loop they run on, are in conftest.py."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

from reader.settings import Settings

from ..helpers import LiveServer

# Debian's headless shell (package chromium-headless-shell) when it is there, else Debian's
# full Chromium. The shell is the same Chromium release without the full browser's UI
# layers: the browser Playwright itself runs headless tests in, and here it takes about a
# third of the full browser's CPU for the same pages (the suite is bound by CPU).
CHROMIUM = next((path for path in (Path("/usr/bin/chromium-headless-shell"), Path("/usr/bin/chromium"))
                 if path.exists()), Path("/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",  # we run as root in CI containers
    "--disable-gpu",
    "--disable-background-networking",  # or Chromium floods the closed network
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1200, "height": 900}
TIMEOUT_MS = 30_000  # generous: extraction runs in a process pool, on a machine others share

# Realistic headlines, so the screenshots read like the app in use.
ARTICLES = [
    ("sqlite-wal", "SQLite in WAL mode: one writer, many readers, no drama",
     "Write-ahead logging lets readers carry on while a writer commits. What changes, what does not, "
     "and the one pragma worth setting on every connection."),
    ("reading-log", "Keeping a reading log for a year",
     "Twelve months of notes on what I read, when, and what stuck. The surprising part was how little "
     "of it depended on the tool."),
    ("queues", "Queues beat rejections",
     "When work arrives faster than you can do it, a visible line with honest positions is kinder than "
     "an error message. A short argument with examples."),
    ("typography", "Typography for long reads",
     "Measure, leading and a serif that survives a phone screen: the small set of choices that make a "
     "ten-minute article comfortable."),
    ("offline-first", "Offline first, still",
     "A decade on, the case for apps that work without a network is stronger, not weaker. Notes from "
     "rebuilding a small one."),
    ("two-passes", "Read it twice: skim, then study",
     "A first pass for shape and a second for substance. Why separating the two saves time overall."),
]
QUEUED = ["sqlite-wal", "reading-log", "queues"]  # tapped in this order
STATUS = re.compile(r"#\d+ in line|cleaning…|ready")
POLLS = re.compile(r"/live|/articles/\d+/body")  # what the pages' two htmx pollers ask for

# Recorded in the page before any of its own scripts run; Playwright injects it over CDP,
# so the page's CSP does not apply to it.
CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', e => {
  window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sourceFile || '') + ':' + e.lineNumber);
});
"""


class Watch:
    """Everything that went wrong in a page: console errors, uncaught exceptions, CSP
    violations, failed or erroring requests. Made with `await Watch.start(page, origin)`,
    which also puts the CSP listener in every document the page loads from then on."""

    @classmethod
    async def start(cls, page, origin: str) -> Watch:
        watch = cls(page, origin)
        await page.add_init_script(CSP_LISTENER)
        return watch

    def __init__(self, page, origin: str):
        self.page = page
        self.origin = origin
        self.problems: list[str] = []
        self.loads: list[str] = []  # documents loaded (htmx's same-document history.replaceState is not one)
        page.on("console", lambda m: m.type == "error" and self.problems.append(
            f"console: {m.text} at {m.location.get('url')}"))
        page.on("pageerror", lambda e: self.problems.append(f"pageerror: {e}"))
        page.on("requestfailed", self._failed)
        page.on("response", self._response)
        page.on("request", self._request)
        self.writes: list[tuple[str, bool]] = []  # (url, carried the CSRF token)
        page.on("domcontentloaded", lambda p: self.loads.append(p.url))

    def _failed(self, request):
        # A poll still in flight when the test moves to the next page is cut off by the
        # browser (net::ERR_ABORTED): leaving a page does that, it is not the app failing.
        # Seen under load on the layout pages, whose browse page has a card waiting in line.
        if (request.failure == "net::ERR_ABORTED" and request.method == "GET"
                and request.headers.get("hx-request") == "true" and request.url.startswith(self.origin)
                and POLLS.fullmatch(urlsplit(request.url).path)):
            return
        self.problems.append(f"requestfailed: {request.url} {request.failure}")

    def _request(self, request):
        if request.method != "GET" and request.url.startswith(self.origin):
            token = request.headers.get("x-csrf-token") or ""
            body = request.post_data or ""
            self.writes.append((request.url, bool(token) or "csrf=" in body))

    def written(self) -> list[str]:
        """The paths of the writes so far, article and feed ids spelled {id}; each must
        have carried the CSRF token (asserted here, so no caller can check an empty list)."""
        assert all(carried for _, carried in self.writes), self.writes
        return [re.sub(r"/\d+(?=/|$)", "/{id}", urlsplit(url).path) for url, _ in self.writes]

    def _response(self, response):
        if response.url.startswith(self.origin) and response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.request.method} {response.url}")

    async def collect_csp(self) -> None:
        """CSP violations recorded by the current document (await before leaving it)."""
        for violation in await self.page.evaluate("window.__csp || []"):
            self.problems.append(f"csp: {violation}")


def card(page, title: str):
    return page.locator("article.card", has=page.get_by_role("link", name=title, exact=True))


@contextlib.asynccontextmanager
async def serving(settings: Settings, port: int | None = None) -> AsyncIterator[LiveServer]:
    """A LiveServer inside a browser test, started and stopped in a thread: stopping waits
    for the browser's open requests, and the loop goes on hearing from the browser meanwhile."""
    server = LiveServer(settings, port=port)
    await asyncio.to_thread(server.__enter__)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.__exit__, None, None, None)
