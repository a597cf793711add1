"""Shared fixtures: real SQLite files in tmp_path, real HTTP servers on 127.0.0.1 for
pages and feeds, the app with its lifespan running, and a real uvicorn where the wire
matters. Nothing of reader's own is mocked."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import socket
import socketserver
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn

from reader.access import CSRF_COOKIE
from reader.app import create_app, running
from reader.settings import Settings

SAMPLES = Path(__file__).resolve().parent.parent / "reader" / "samples" / "site"


def article_html(title: str, marker: str, paragraphs: int = 12) -> str:
    """A page shaped like a real article: navigation, the article, a sidebar, comments."""
    body = "\n".join(
        f"<p>{marker if i == paragraphs // 2 else 'Paragraph'} number {i} of {title} carries enough words "
        f"to look like prose to an extractor, with clauses, commas and a full stop at its end.</p>"
        for i in range(paragraphs)
    )
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(12))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>
<meta name="author" content="Test Author"></head><body>
<header><nav><ul>{nav}</ul></nav></header>
<main><article><h1>{title}</h1><p class="byline">By Test Author</p>{body}</article></main>
<aside><h3>Related</h3><ul>{nav}</ul></aside>
<footer><p>Copyright footer text that should not be extracted.</p></footer>
</body></html>"""


@dataclass
class Route:
    body: bytes | Callable[[], bytes]
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    delay: float = 0.0  # seconds before answering
    gate: threading.Event | None = None  # answer only once set


class PageServer:
    """A threaded HTTP/1.1 server on 127.0.0.1 serving routes that a test sets up, and
    counting hits per path so a test can prove a page was fetched exactly once."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: Counter[str] = Counter()
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # or every keep-alive response stalls ~40 ms

            def do_GET(self):
                path = self.path
                with server._lock:
                    server.hits[path] += 1
                    server.requests.append((path, dict(self.headers)))
                route = server.routes.get(path)
                if route is None:
                    return self._send(404, {"Content-Type": "text/plain"}, b"not found")
                if route.gate is not None:
                    route.gate.wait(30)
                if route.delay:
                    time.sleep(route.delay)
                body = route.body() if callable(route.body) else route.body
                if isinstance(body, tuple):  # a callable may answer (status, headers, body)
                    return self._send(*body)
                self._send(route.status, route.headers, body)

            def _send(self, status, headers, body):
                try:
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    if "Content-Length" not in headers:
                        self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def add(self, path: str, body: bytes | str | Callable, **kwargs) -> str:
        if isinstance(body, str):
            body = body.encode()
        self.routes[path] = Route(body, **kwargs)
        return self.url(path)

    def add_article(self, slug: str, title: str | None = None, **kwargs) -> str:
        title = title or f"Article {slug}"
        return self.add(f"/{slug}.html", article_html(title, f"marker-{slug}"), **kwargs)

    def start(self) -> "PageServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        for route in self.routes.values():
            if route.gate is not None:
                route.gate.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def pages():
    server = PageServer().start()
    yield server
    server.stop()


def rss(items: list[dict], title: str = "Test feed", link: str = "http://127.0.0.1/") -> str:
    entries = "".join(
        f"""<item><title>{i['title']}</title><link>{i['link']}</link><guid>{i.get('guid', i['link'])}</guid>
<description>{i.get('summary', '')}</description>
<pubDate>{i.get('date', 'Mon, 02 Nov 2026 10:00:00 GMT')}</pubDate></item>"""
        for i in items
    )
    return f"""<?xml version="1.0"?><rss version="2.0"><channel><title>{title}</title>
<link>{link}</link><description>test</description>{entries}</channel></rss>"""


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Test settings: a fresh database file, local servers allowed, no background refresh."""
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
        allowed_hosts=("reader.test",),  # the name the ASGI test client sends as Host
    )


@contextlib.asynccontextmanager
async def app_client(settings: Settings, *, csrf: bool = True, **kwargs):
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
            client.app = app
            if csrf:
                await client.get("/static/style.css")  # the first answer sets the token cookie
            yield client


@pytest.fixture
async def client(settings):
    async with app_client(settings) as c:
        yield c


@pytest.fixture
async def reader(settings):
    """The running services without the web layer, worker included."""
    async with running(settings) as r:
        yield r


async def wait_for(predicate, timeout: float = 20.0, interval: float = 0.02):
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """The app under a real uvicorn, in a thread with its own event loop."""

    def __init__(self, settings: Settings):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=self.port, log_level="warning",
                                timeout_graceful_shutdown=15)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(30)


@pytest.fixture
def live_server(settings):
    with LiveServer(settings) as server:
        yield server
