"""Where the time of opening a ready article goes, layer by layer, in one process (no
network): what open_ready's overhead over the floor is made of. Not part of the table;
its numbers are written into benchmarks/README.md by hand.

    python -m benchmarks.open_profile            # the breakdown
    python -m benchmarks.open_profile --profile  # and cProfile's top functions for the app call

Each layer is timed as a median over many calls, the layers interleaved call by call:
  - the read: the article's SELECT through aiosqlite (a hop to its thread and back), the
    same SELECT on a plain sqlite3 connection in the calling thread (no hop),
    `Store.reading`, the article's tags read apart (as `Reader.reading` still does), and
    `Reader.reading_page` as the article's page calls it (the article, its content, tags,
    notes, the reading list's length and its neighbours in one statement, read on the
    loop's thread);
  - the check that answers a reopen from the page kept rendered (`Reader.page_version`:
    the library's version and whether the article is unread, one small statement);
  - the render: article.html through the app's Jinja environment;
  - the app: the whole ASGI app (access middleware, the kept page or routing, handler,
    response) called directly, against the floor (a prepared byte string through the
    same HTMLResponse).
What open_ready measures on top of "the app" is uvicorn: parsing, the access log line,
and the socket writes, the same for the floor.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from starlette.responses import HTMLResponse

from .common import cleanup, work_copy
from .make_library import make_library
from .open_ready import N, _about_30kb

CALLS = 2000


def _scope(path: str, cookie: bytes) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
            "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
            "headers": [(b"host", b"127.0.0.1"), (b"cookie", cookie)], "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 80)}


async def _call(app, path: str, cookie: bytes, etag: bytes | None = None) -> bytes:
    body = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            body.append(message.get("body", b""))

    scope = _scope(path, cookie)
    if etag:
        scope["headers"].append((b"if-none-match", etag))
    await app(scope, receive, send)
    return b"".join(body)


async def _median(fn: Callable[[], Awaitable[Any]], out: list[float]) -> None:
    t = time.perf_counter()
    await fn()
    out.append(time.perf_counter() - t)


async def breakdown(profile: bool) -> dict[str, float]:
    from reader.web.render import env
    from reader.records import READING_LIST
    from reader.core import running
    from reader.web.app import create_app
    from reader.settings import Settings

    db = work_copy(make_library(N), "profile")
    try:
        article_id = _about_30kb(db)
        settings = Settings(db=db, allow_private_urls=True, refresh_interval=0, serve_workers=0,
                            extract_processes=0)
        app = create_app(settings)
        async with running(settings, worker=False, refresher=False) as reader:
            app.state.reader = reader
            cookie = b"reader_csrf=" + b"x" * 43
            path = f"/articles/{article_id}"
            await _call(app, path, cookie)  # the first open marks it read
            page = await _call(app, path, cookie)
            floor_response = HTMLResponse(page)
            plain = sqlite3.connect(db, check_same_thread=False)
            plain.row_factory = sqlite3.Row
            from reader.store import base as store_module

            sql = (f"SELECT {store_module._ONE_ARTICLE_COLUMNS}, c.html AS c_html FROM {store_module._ARTICLE_JOINS} "
                   "WHERE a.id = :id")
            article, content = await reader._store.reading(article_id)
            template = env.get_template("article.html")

            class Req:  # what the template reads from the request
                url = None

            async def read_hop() -> None:
                await reader._store._one(sql, {"id": article_id, "now": time.time()})

            async def reading() -> None:
                await reader._store.reading(article_id)

            async def read_direct() -> None:
                dict(plain.execute(sql, {"id": article_id, "now": time.time()}).fetchone())

            async def tags() -> None:
                await reader._store.tags_of([article_id])

            async def page_read() -> None:
                await reader.reading_page(article_id, READING_LIST)

            async def version() -> None:
                await reader.page_version(article_id)

            async def render() -> None:
                template.render(request=Req, csrf="x" * 43, article=article, content=content, error=None)

            async def whole_app() -> None:
                await _call(app, path, cookie)

            etag: list[bytes] = []

            async def capture(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    etag.extend(v for k, v in message["headers"] if k == b"etag")

            async def no_body() -> dict[str, Any]:
                return {"type": "http.request", "body": b"", "more_body": False}

            await app(_scope(path, cookie), no_body, capture)

            async def revalidated() -> None:
                await _call(app, path, cookie, etag[0] if etag else None)

            async def floor() -> None:
                async def receive() -> dict[str, Any]:
                    return {"type": "http.request", "body": b"", "more_body": False}

                async def send(message: dict[str, Any]) -> None:
                    pass

                await HTMLResponse(floor_response.body)(_scope("/floor", cookie), receive, send)

            layers = {"read, aiosqlite (thread hop)": read_hop, "read, sqlite3 in the loop thread": read_direct,
                      "Store.reading": reading, "the article's tags alone": tags,
                      "Reader.reading_page (as the app calls it)": page_read,
                      "Reader.page_version (a kept page's check)": version,
                      "render article.html": render, "whole app (ASGI call)": whole_app,
                      "whole app, If-None-Match (304 if supported)": revalidated, "floor (ASGI call)": floor}
            times: dict[str, list[float]] = {k: [] for k in layers}
            for _ in range(CALLS):
                for name, fn in layers.items():
                    await _median(fn, times[name])
            if profile:
                prof = cProfile.Profile()
                prof.enable()
                for _ in range(CALLS):
                    await whole_app()
                prof.disable()
                pstats.Stats(prof).sort_stats("tottime").print_stats(25)
            plain.close()
    finally:
        cleanup(db)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    result = asyncio.run(breakdown("--profile" in sys.argv))
    for name, seconds in result.items():
        print(f"{name:40s} {seconds * 1e6:8.0f} µs")


if __name__ == "__main__":
    main()
