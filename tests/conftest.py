"""Shared fixtures: real SQLite files in tmp_path, real HTTP servers on 127.0.0.1 for
pages and feeds, the app with its lifespan running, and a real uvicorn where the wire
matters. Nothing of reader's own is mocked. Helpers that test modules import are in
helpers.py (and the page server in loopback.py), not here."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from reader.core import running
from reader.settings import Settings
from reader.store import Store

from .browsing import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, VIEWPORT
from .helpers import CHECKOUT, FIXTURES, LiveServer, app_client
from .loopback import LoopbackServer


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
    file the way reader does (every migration, in order). Each test starts from a copy: the
    eight migrations cost ~40 ms a file, and most tests open one or more. The migrations
    themselves are tested on fresh files and the frozen v1 fixture (test_packaging)."""
    path = tmp_path_factory.mktemp("empty") / "reader.db"

    async def create() -> None:
        store = await Store.open(path)
        await store.close()

    # In a thread of its own: in a browser module, Playwright's sync API has this thread's
    # event loop marked as running, and asyncio.run would refuse to start another.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, create()).result()
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


class SharedBrowser:
    """One Playwright driver and one Chromium per test process, for the whole session:
    starting them costs ~3-5 s, once per browser module before (and more than once when
    xdist split a module between its workers).

    Playwright's sync API runs its event loop in a greenlet of this thread, and after every
    call it marks that loop as this thread's running loop. An async test (pytest-asyncio) or
    an asyncio.run() in a plain test then refuses to start its own loop ("Cannot run the
    event loop while another loop is running"). So around every phase of a test that does
    not use the browser, set_aside() clears the mark and puts it back afterwards: nothing
    calls into Playwright meanwhile, and its next call finds the mark as it left it."""

    loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    @contextlib.contextmanager
    def set_aside(cls, item: pytest.Item) -> Iterator[None]:
        loop = cls.loop
        if loop is None or "shared_chromium" in item.fixturenames or asyncio._get_running_loop() is not loop:
            yield
            return
        asyncio._set_running_loop(None)
        try:
            yield
        finally:
            if cls.loop is loop:  # not if the browser was closed meanwhile (the session's end)
                asyncio._set_running_loop(loop)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two test processes per core. The suite spends much of its time waiting
    (real servers, worker processes, a browser, epubcheck's JVM, grace periods), so with
    one process per core the cores idled: on 2 cores, 157 s with two processes against
    144 s with four, measured side by side on a quiet machine."""
    return 2 * (os.cpu_count() or 1)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with SharedBrowser.set_aside(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with SharedBrowser.set_aside(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    with SharedBrowser.set_aside(item):
        return (yield)


@pytest.fixture(scope="session")
def shared_chromium():
    """The test process's one Chromium (see SharedBrowser). Tests use `chromium`."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium chromium-headless-shell")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        SharedBrowser.loop = asyncio._get_running_loop()
        yield browser
        # The session may end in a test that set the mark aside: Playwright needs it back.
        asyncio._set_running_loop(SharedBrowser.loop)
        SharedBrowser.loop = None
        browser.close()
    asyncio._set_running_loop(None)  # the loop is closed now: nothing runs it any more


@pytest.fixture
def chromium(shared_chromium):
    """The shared Chromium for one test. Each test makes contexts of its own (cookies,
    storage, service workers); any it leaves open are closed after it, so no test sees
    another's."""
    yield shared_chromium
    for context in shared_chromium.contexts:
        context.close()


@pytest.fixture
def page(chromium, live_server):
    context = chromium.new_context(viewport=VIEWPORT, color_scheme="light")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    yield page
    context.close()
