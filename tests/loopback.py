"""The one loopback HTTP server of the tests and the benchmarks (`tests.loopback`).

A threaded HTTP/1.1 server on a loopback address that serves routes a test sets up
(fixed bodies, answers computed per request, slow or gated answers, bodies streamed
without an end), counts hits per path, and records every request's headers, so a test
can prove what was fetched and how often. Whatever no route names gets a 404, or the
`fallback` route when one is given (the SSRF tests answer every path the same way).

Two costs it avoids: `serve_forever()` polls for shutdown every 0.5 s by default, and
`shutdown()` waits out that poll, which once made teardown half of the suite's time;
and without TCP_NODELAY every keep-alive response stalls ~40 ms on delayed ACKs.
"""

from __future__ import annotations

import http.server
import inspect
import json
import socket
import socketserver
import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

POLL_INTERVAL = 0.02  # seconds; how long stop() can wait for the serving loop to notice
HTML = {"Content-Type": "text/html; charset=utf-8"}

Answer = tuple[int, dict[str, str], bytes]
# A computed body: called per request, with the request's headers if it takes one argument;
# returns the body, or a whole answer (status, headers, body).
Compute = Callable[[], bytes | Answer] | Callable[[dict[str, str]], bytes | Answer]
# A streamed body: writes to the socket until done or until the server stops (the event).
Stream = Callable[[BinaryIO, threading.Event], None]


def article_html(title: str, marker: str, paragraphs: int = 12) -> str:
    """A page shaped like a real article: navigation, the article, a sidebar, comments.
    `marker` appears once, in the middle of the article, so a test can find the text."""
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
    body: bytes | str | Compute = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: dict(HTML))
    delay: float = 0.0  # seconds before answering
    gate: threading.Event | None = None  # answer only once set (stop() sets it)
    stream: Stream | None = None  # instead of body: headers, then this writer, then the connection closes

    def __post_init__(self) -> None:
        if isinstance(self.body, str):
            self.body = self.body.encode()


class LoopbackServer:
    """See the module docstring. Use as a context manager, or start() and stop(); after
    stop(), restart() listens again on the same port with the same routes and counters
    (a host that went away and came back)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, fallback: Route | None = None,
                 stats_path: str | None = None, backlog: int = 128) -> None:
        self.host = host
        self.routes: dict[str, Route] = {}
        self.fallback = fallback
        self.stats_path = stats_path  # GET it for the hit counts as JSON (for a parent process)
        self.hits: Counter[str] = Counter()
        self.not_modified: Counter[str] = Counter()
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._handler = self._make_handler()
        self._server_class = self._make_server_class(host, backlog)
        self._server = self._server_class((host, port), self._handler)
        self.port: int = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    # -- routes ------------------------------------------------------------------------------

    @property
    def base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def add(self, path: str, body: bytes | str | Compute = b"", content_type: str | None = None, *,
            etag: str | None = None, **kwargs: object) -> str:
        """Serve `path`; returns its URL. A static route with an ETag answers a matching
        If-None-Match with 304 (counted in `not_modified`)."""
        route = Route(body, **kwargs)  # type: ignore[arg-type]
        if content_type is not None:
            route.headers = {**route.headers, "Content-Type": content_type}
        if etag is not None:
            route.headers = {**route.headers, "ETag": etag}
        self.routes[path] = route
        return self.url(path)

    def add_article(self, slug: str, title: str | None = None, **kwargs: object) -> str:
        """An article page at /{slug}.html whose text carries `marker-{slug}`."""
        title = title or f"Article {slug}"
        return self.add(f"/{slug}.html", article_html(title, f"marker-{slug}"), **kwargs)  # type: ignore[arg-type]

    @property
    def total(self) -> int:
        return sum(self.hits.values())

    # -- running ------------------------------------------------------------------------------

    def start(self) -> LoopbackServer:
        self.stopping.clear()
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL},
                                        daemon=True, name=f"loopback-{self.port}")
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and end every open connection, so the host is really gone: gated
        and streaming answers are released, and keep-alive clients see the connection close."""
        if self._thread is None:  # never started, or stopped already: just release the port
            self._server.server_close()
            return
        self._thread = None
        self.stopping.set()
        for route in list(self.routes.values()) + ([self.fallback] if self.fallback else []):
            if route.gate is not None:
                route.gate.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            open_now = list(self._connections)
        for connection in open_now:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by its client

    def restart(self) -> LoopbackServer:
        self._server = self._server_class((self.host, self.port), self._handler)
        return self.start()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the http.server side -------------------------------------------------------------------

    def _make_server_class(self, host: str, backlog: int) -> type[http.server.HTTPServer]:
        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True
            request_queue_size = backlog
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

            def handle_error(self, request: Any, client_address: Any) -> None:
                # reader hanging up on a page (a cap reached, a deadline, a test's client
                # gone) is what many tests cause on purpose: not worth a traceback
                if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
                    return
                super().handle_error(request, client_address)

        return Server

    def _make_handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def setup(self) -> None:
                super().setup()
                with owner._lock:
                    owner._connections.add(self.connection)

            def finish(self) -> None:
                with owner._lock:
                    owner._connections.discard(self.connection)
                try:
                    super().finish()
                except OSError:
                    pass  # the client (or stop()) already closed the socket

            def do_GET(self) -> None:
                owner._answer(self)

            def log_message(self, format: str, *args: object) -> None:
                pass  # a test's output is not the place for an access log

        return Handler

    def _answer(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        path = handler.path
        headers = dict(handler.headers)
        if self.stats_path is not None and path == self.stats_path:
            with self._lock:
                stats = {**self.hits, "__304": sum(self.not_modified.values())}
            return self._send(handler, 200, {"Content-Type": "application/json"}, json.dumps(stats).encode())
        with self._lock:
            self.hits[path] += 1
            self.requests.append((path, headers))
        route = self.routes.get(path, self.fallback)
        if route is None:
            return self._send(handler, 404, {"Content-Type": "text/plain"}, b"not found")
        if route.gate is not None:
            route.gate.wait(30)
        if route.delay:
            # stopping, not time.sleep: stop() cuts a slow answer short instead of waiting it out
            self.stopping.wait(route.delay)
        if route.stream is not None:
            return self._stream(handler, route)
        status, answer_headers, body = route.status, route.headers, route.body
        if callable(body):
            takes_headers = bool(inspect.signature(body).parameters)
            computed = body(headers) if takes_headers else body()  # type: ignore[call-arg]
            if isinstance(computed, tuple):
                status, answer_headers, body = computed
            else:
                body = computed
        if isinstance(body, str):
            body = body.encode()
        etag = answer_headers.get("ETag")
        if status == 200 and etag and headers.get("If-None-Match") == etag:
            with self._lock:
                self.not_modified[path] += 1
            return self._send(handler, 304, {"ETag": etag}, b"")
        self._send(handler, status, answer_headers, body)

    @staticmethod
    def _send(handler: http.server.BaseHTTPRequestHandler, status: int, headers: dict[str, str],
              body: bytes) -> None:
        try:
            handler.send_response(status)
            for key, value in headers.items():
                handler.send_header(key, value)
            if not any(k.lower() == "content-length" for k in headers):
                handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            if body:
                handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first, which some tests do on purpose

    def _stream(self, handler: http.server.BaseHTTPRequestHandler, route: Route) -> None:
        # No length and Connection: close: the body ends when the connection does.
        try:
            handler.send_response(route.status)
            for key, value in route.headers.items():
                handler.send_header(key, value)
            handler.send_header("Connection", "close")
            handler.end_headers()
            assert route.stream is not None
            route.stream(handler.wfile, self.stopping)  # type: ignore[arg-type]
        except (BrokenPipeError, ConnectionResetError):
            pass
        handler.close_connection = True

