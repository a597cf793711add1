"""Shared fixtures: real SQLite files in tmp_path, real HTTP servers on 127.0.0.1 for
pages and feeds, the app with its lifespan running, and a real uvicorn where the wire
matters. Nothing of reader's own is mocked. Helpers that test modules import are in
helpers.py (and the page server in loopback.py), not here."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
import pytest_asyncio

from reader.core import running
from reader.settings import Settings
from reader.store import Store

from .browser.browsing import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, VIEWPORT
from .helpers import CHECKOUT, FIXTURES, LiveServer, app_client
from .loopback import LoopbackServer

if TYPE_CHECKING:  # Playwright is imported by the browser fixture itself: without it, the browser tests skip
    from playwright.async_api import Browser, Page


def _tracked_databases() -> dict[str, tuple[int, int]]:
    """The shipped seed, the fixtures and anything SQLite leaves beside them (-wal,
    -shm, -journal), each with its size and mtime. (A ./reader.db of someone running
    reader in the checkout is theirs, not the tests'.)"""
    paths = [*CHECKOUT.glob("reader.db.example*"), *FIXTURES.iterdir()]
    return {str(path): (path.stat().st_size, path.stat().st_mtime_ns) for path in paths if path.is_file()}


@pytest.fixture(autouse=True, scope="session")
def checkout_left_unchanged() -> Iterator[None]:
    """Tests must never write next to tracked files: opening a database in place leaves
    -wal and -shm files there, or changes it. Fails the session's last test if one did."""
    before = _tracked_databases()
    yield
    assert _tracked_databases() == before, "a test wrote next to the shipped database or the fixtures"


@pytest.fixture
def pages() -> Iterator[LoopbackServer]:
    """The page and feed server of a test: routes it adds, hits counted per path."""
    with LoopbackServer() as server:
        yield server


@pytest.fixture(scope="session")
def empty_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty database at the current schema, made once per test process by opening a new
    file the way reader does (from reader/store/schema.sql). Each test starts from a copy,
    as most tests open one or more. The migrations themselves are tested on fresh files and
    the frozen v1 fixture (tests/store/test_schema.py, test_packaging)."""
    path = tmp_path_factory.mktemp("empty") / "reader.db"

    async def create() -> None:
        store = await Store.open(path)
        await store.close()

    asyncio.run(create())
    assert not path.with_name(path.name + "-wal").exists(), "the empty database was not closed cleanly"
    return path


@pytest.fixture
def settings(tmp_path: Path, empty_database: Path) -> Settings:
    """Test settings: a database file of the test's own (a copy of the empty one), local
    servers allowed, no background refresh."""
    shutil.copyfile(empty_database, tmp_path / "reader.db")
    return Settings(
        db=tmp_path / "reader.db",
        allow_private_urls=True,
        refresh_interval=0,
        worker_interval=0.5,
        fetch_timeout=10.0,
        claim_ttl=10.0,
        retry_backoff=0.05,  # transient failures still retry, without the production wait
        # opening an article waits for its text (the production 1.5 s would turn a slow
        # first extraction into a "cleaning…" page); tests of that state set it low
        open_wait=30.0,
        # the pages' polls for cards and articles still being cleaned (2 s in production):
        # a browser test waiting for "ready" waits for the next poll after it
        poll_interval=0.25,
        allowed_hosts=("reader.test",),  # the name the ASGI test client sends as Host
    )


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings) as c:
        yield c


@pytest.fixture
async def quiet(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app with no in-process worker: whatever is queued stays queued, and nothing is
    cleaned unless a test opens it. Parsing and extraction run in the pool's thread, not in
    a worker process: a fresh process costs ~1 s per app (fork, then trafilatura's first
    call), and these tests are about pages, the API and search. The process pool is
    exercised by the worker, claim, lane, shutdown and hostile-page tests."""
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as c:
        yield c


@pytest.fixture
async def reader(settings: Settings) -> AsyncIterator[object]:
    """The running services without the web layer, worker included."""
    async with running(settings) as r:
        yield r


@pytest.fixture
def live_server(settings: Settings) -> Iterator[LiveServer]:
    with LiveServer(settings) as server:
        yield server


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two test processes per core. The suite spends much of its time waiting
    (real servers, worker processes, a browser, epubcheck's JVM, grace periods), so with
    one process per core the cores idled: on 2 cores, 157 s with two processes against
    144 s with four, measured side by side on a quiet machine."""
    return 2 * (os.cpu_count() or 1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser tests (the `browser` mark) run on the session's event loop: the test process's
    one Chromium and its Playwright driver live on the loop they were started on, so every test
    that drives them runs on that loop too. The other async tests keep a loop of their own each.
    A test that reaches the browser without the mark is refused, so the mark says which tests
    need Chromium (`-m "not browser"` leaves them all out)."""
    for item in items:
        marked = item.get_closest_marker("browser") is not None
        if "shared_chromium" in getattr(item, "fixturenames", ()) and not marked:
            raise pytest.UsageError(f"{item.nodeid} drives Chromium: mark it with pytest.mark.browser")
        if marked:
            # first, ahead of the plain asyncio mark that asyncio_mode = "auto" gave it
            item.add_marker(pytest.mark.asyncio(loop_scope="session"), append=False)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def shared_chromium() -> AsyncIterator[Browser]:
    """One Playwright driver and one Chromium per test process, for the whole session:
    starting them costs ~3-5 s, once per browser module before (and more than once when
    xdist split a module between its workers). Tests use `chromium`."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium chromium-headless-shell")
    async_api = pytest.importorskip("playwright.async_api")
    async with async_api.async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        await browser.close()


@pytest_asyncio.fixture(loop_scope="session")
async def chromium(shared_chromium: Browser) -> AsyncIterator[Browser]:
    """The shared Chromium for one test. Each test makes contexts of its own (cookies,
    storage, service workers); any it leaves open are closed after it, so no test sees
    another's."""
    yield shared_chromium
    for context in shared_chromium.contexts:
        await context.close()


@pytest_asyncio.fixture(loop_scope="session")
async def page(chromium: Browser, live_server: LiveServer) -> AsyncIterator[Page]:
    context = await chromium.new_context(viewport=VIEWPORT, color_scheme="light")
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    yield page
    await context.close()
