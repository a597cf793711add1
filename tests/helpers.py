"""Helpers shared by the test modules (fixtures live in conftest.py). Test modules import
from here, never from conftest or from each other."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import html
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import aiosqlite
import httpx
import uvicorn

from reader.web.csrf import CSRF_COOKIE
from reader.web.app import create_app
from reader.settings import Settings
from reader.store.schema import MIGRATIONS

from . import commands
from .loopback import LoopbackServer, Route, article_html

__all__ = ["CHECKOUT", "FIXTURES", "RSS", "LiveServer", "LoopbackServer", "Route", "app_client", "article_html", "assert_strict_csp",
           "card_ids", "free_port", "published", "rss", "run_cli", "serve_feed", "state_of", "subscribe_slugs", "wait_for",
           "worker_process"]

RSS = {"Content-Type": "application/rss+xml"}
CHECKOUT = Path(__file__).resolve().parent.parent
FIXTURES = CHECKOUT / "tests" / "fixtures"  # frozen databases: tests open copies of them, never these
EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
CARD_ID = re.compile(r'<article class="card[^"]*" id="card-(\d+)"')


def rss(items: list[dict], title: str = "Test feed", link: str = "http://127.0.0.1/") -> str:
    entries = "".join(
        f"""<item><title>{i['title']}</title><link>{i['link']}</link><guid>{i.get('guid', i['link'])}</guid>
<description>{i.get('summary', '')}</description>
<pubDate>{i.get('date', 'Mon, 02 Nov 2026 10:00:00 GMT')}</pubDate></item>"""
        for i in items
    )
    return f"""<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title>
<link>{link}</link><description>test</description>{entries}</channel></rss>"""


def published(hours: float) -> str:
    """An RSS date `hours` after EPOCH (later = newer)."""
    return format_datetime(EPOCH + datetime.timedelta(hours=hours), usegmt=True)


def serve_feed(pages: LoopbackServer, slugs: list[str], path: str = "/feed.xml", title: str = "Test feed",
               summaries: dict[str, str] | None = None) -> str:
    """A feed of real article pages; item i is published i hours after EPOCH (later = newer)."""
    items = [
        {"title": f"Item {slug}", "link": pages.add_article(slug), "date": published(i),
         "summary": (summaries or {}).get(slug, "")}
        for i, slug in enumerate(slugs)
    ]
    return pages.add(path, rss(items, title=title), headers=RSS)


async def subscribe_slugs(client: httpx.AsyncClient, pages: LoopbackServer, slugs: list[str],
                          **kwargs: Any) -> tuple[int, list[int]]:
    """Subscribe to serve_feed(...) through the API; returns the feed id and the article ids
    in `slugs` order."""
    return await subscribe_url(client, pages, serve_feed(pages, slugs, **kwargs), slugs, statuses=(201,))


async def subscribe_url(client: httpx.AsyncClient, pages: LoopbackServer, feed_url: str,
                        slugs: list[str], statuses: tuple[int, ...] = (200, 201)) -> tuple[int, list[int]]:
    """Subscribe to a feed already served through the API; returns the feed id and the ids
    of the articles at /{slug}.html, in `slugs` order."""
    response = await client.post("/api/feeds", json={"url": feed_url})
    assert response.status_code in statuses, response.text
    feed_id = response.json()["id"]
    items = (await client.get("/api/articles", params={"feed": feed_id, "limit": 500})).json()["items"]
    by_url = {item["url"]: item["id"] for item in items}
    return feed_id, [by_url[pages.url(f"/{slug}.html")] for slug in slugs]


async def state_of(client: httpx.AsyncClient, article_id: int) -> str:
    return (await client.get(f"/api/articles/{article_id}")).json()["state"]


def card_ids(page: str) -> list[int]:
    """The ids of the cards on a rendered page, in page order."""
    return [int(i) for i in CARD_ID.findall(page)]


def card_press(page: str, article_id: int, action: str) -> tuple[str, dict[str, str]] | None:
    """What a browser without JavaScript posts when a card's `action` button (queue, retry,
    unqueue) is pressed: the path and the fields. A queue or retry button belongs to the
    page's one form (#tap) and posts to its own formaction; unqueue is a form of the card's
    own. None if the card has no such button."""
    card = re.search(rf'<article [^>]*\bid="card-{article_id}".*?</article>', page, re.DOTALL)
    assert card, f"no card {article_id}"
    path = f"/articles/{article_id}/{action}"
    own = re.search(rf'<form [^>]*\baction="{re.escape(path)}".*?</form>', card.group(0), re.DOTALL)
    if own:
        return path, _hidden(own.group(0))
    button = re.search(rf'<button [^>]*\bformaction="{re.escape(path)}"[^>]*>', card.group(0))
    if not button:
        return None
    form = re.search(r'<form id="tap".*?</form>', page, re.DOTALL)
    assert form and 'form="tap"' in button.group(0), "a formaction button outside the page's #tap form"
    return path, _hidden(form.group(0))


def _hidden(form: str) -> dict[str, str]:
    return {k: html.unescape(v) for k, v in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form)}


def assert_strict_csp(response: httpx.Response) -> None:
    """A script-src of 'self' only, nothing inline or eval'd, and no MIME sniffing."""
    csp = response.headers.get("content-security-policy")
    assert csp, f"no CSP on {response.request.method} {response.request.url}"
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives["script-src"] == ["'self'"]
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"


@contextlib.asynccontextmanager
async def app_client(settings: Settings, *, csrf: bool = True, **kwargs: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The app with its lifespan running, and an httpx client talking ASGI to it. Like the
    pages (whose forms and htmx requests carry the token), the client sends the CSRF token
    it was given with every state-changing request; csrf=False makes a bare client."""
    app = create_app(settings, **kwargs)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)

        async def add_token(request: httpx.Request) -> None:
            token = client.cookies.get(CSRF_COOKIE)
            if csrf and token and request.method not in ("GET", "HEAD"):
                request.headers.setdefault("X-CSRF-Token", token)

        async with httpx.AsyncClient(transport=transport, base_url="http://reader.test",
                                     event_hooks={"request": [add_token]}) as client:
            client.app = app  # type: ignore[attr-defined]
            if csrf:
                await client.get("/static/style.css")  # the first answer sets the token cookie
            yield client


async def wait_for(predicate: Callable[[], Any | Awaitable[Any]], timeout: float = 20.0,
                   interval: float = 0.02) -> Any:
    """Poll an async or plain predicate until it is truthy; fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)


def until(predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    """Poll a plain (not async) predicate until it is truthy and return its value; fail
    after `timeout`. For code that runs outside an event loop (plain tests, threads)."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)
    return value


async def run_cli(db: Path | str, *args: str | bytes, cwd: Path | None = None) -> tuple[int, str, str]:
    """`reader ARGS... --db DB` as a process of its own (tests/commands.py), with local
    servers allowed and no background refresh: its exit status, stdout and stderr (bytes
    that are not UTF-8 shown as U+FFFD, so a test can say where they came from).

    Parsing and extraction run in the command's thread, as in the `quiet` fixture: a pool
    means a fork server that imports trafilatura afresh, ~3 s a command on a loaded
    machine, and these tests are about what the commands do and say. The pool is tested
    by the worker, claim, lane, shutdown, process and hostile-page tests."""
    env = {**os.environ, "READER_ALLOW_PRIVATE_URLS": "1", "READER_REFRESH_INTERVAL": "0",
           "READER_EXTRACT_PROCESSES": "0"}
    done = await commands.run_async([*args, "--db", str(db)], env=env, cwd=cwd)
    return done.returncode, done.stdout.decode(), done.stderr.decode(errors="replace")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """The app under a real uvicorn, in a thread with its own event loop."""

    def __init__(self, settings: Settings, port: int | None = None) -> None:
        self.port = port or free_port()  # a port given: the same server started again
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=self.port, log_level="warning",
                                timeout_graceful_shutdown=15)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


@contextlib.contextmanager
def worker_process(settings: Settings, *extra: str, ttl: float | None = None,
                   **env_overrides: str) -> Iterator[commands.Started]:
    """`reader worker` as a real separate process on the same database file (started as
    tests/commands.py starts commands); `proc.lines` holds what it has written to stderr so far."""
    env = {**os.environ, **dict(READER_ALLOW_PRIVATE_URLS="1", READER_WORKER_INTERVAL="0.05",
               READER_CLAIM_TTL=str(ttl or settings.claim_ttl), READER_REFRESH_INTERVAL="0",
               READER_RETRY_BACKOFF="0.05"), **env_overrides}
    proc = commands.start(["worker", "--db", str(settings.db), *extra], env=env)
    ready = threading.Event()
    lines: list[str] = []

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "worker pulling" in line:
                ready.set()

    reader_thread = threading.Thread(target=read_stderr, daemon=True)
    reader_thread.start()
    try:
        if not ready.wait(60):
            raise AssertionError("worker process did not start:\n" + "".join(lines))
        proc.lines = lines  # type: ignore[attr-defined]
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reader_thread.join(10)
        assert proc.stderr is not None
        proc.stderr.close()


async def database_at(path: Path, version: int) -> None:
    """A database at an older schema version, made by the real migration steps up to it,
    for the tests of a later step."""
    async with aiosqlite.connect(path, isolation_level=None) as db:
        for step in range(version):
            await db.execute("BEGIN IMMEDIATE")
            await MIGRATIONS[step](db)
            await db.execute(f"PRAGMA user_version = {step + 1}")
            await db.execute("COMMIT")
