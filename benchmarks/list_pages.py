"""The two lists a person opens most, the headlines (GET /, its first page of 50) and the
reading list (GET /?state=ready&unread=1, its first page), at 1,000 and at 100,000
articles, each against the same bytes answered from memory by the same server (/floor/NAME,
see benchmarks/serve.py: same process, same uvicorn configuration, access log included).

Measured with the lean client (benchmarks/client.py) as a browser that has its CSRF cookie,
page and floor interleaved request by request, each on its own keep-alive connection. p50
and p99, as a ratio and as microseconds over the floor; the page's size and rows with it.

    python -m benchmarks.list_pages
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from .client import Connection, expect, interleaved
from .common import Row, Served, cleanup, main_for, pct, ratio, verdict, versus, work_copy
from .make_library import make_library
from .open_ready import browser_cookie

SIZES = (1_000, 100_000)
PAGES = {"headlines": "/", "reading list": "/?state=ready&unread=1"}
REQUESTS = 400
TARGET = 10.0  # the page within this many times the same bytes from memory
MAX_BYTES = 60_000  # the headlines' first page of 50
CARD = re.compile(rb'<article class="card\b')


def _measure(db: Path) -> dict[str, tuple[int, int, list[float], list[float]]]:
    """Per page: its size in bytes, its rows, and the page's and its floor's timings."""
    floors = Path(tempfile.mkdtemp(prefix="bench-list-floors-"))
    out = {}
    try:
        with Served(db, floor_file=floors / "floor.html") as server:
            cookie = browser_cookie(server.url)
            for n, (name, path) in enumerate(PAGES.items()):
                floor = f"/floor/page{n}.html"
                with Connection(server.url, cookie) as page_conn, Connection(server.url, cookie) as floor_conn:
                    body = expect(page_conn.get(path), 200, path).body
                    (floors / f"page{n}.html").write_bytes(body)  # the same bytes, answered from memory
                    if expect(floor_conn.get(floor), 200, floor).body != body:
                        raise RuntimeError("the floor does not answer the page's bytes")
                    timed = interleaved({"page": (page_conn, path), "floor": (floor_conn, floor)}, REQUESTS,
                                        warmup=30)
                out[name] = (len(body), len(CARD.findall(body)), timed["page"], timed["floor"])
    finally:
        cleanup(floors / "floor.html")
    return out


def run() -> list[Row]:
    rows = []
    for size in SIZES:
        db = work_copy(make_library(size), f"lists{size}")
        try:
            results = _measure(db)
        finally:
            cleanup(db)
        for name, (length, cards, page, floor) in results.items():
            r50 = ratio(pct(page, 50), pct(floor, 50))
            small = name != "headlines" or (length < MAX_BYTES and cards == 50)
            target = f"p50 ≤ {TARGET:g}×" + (f", < {MAX_BYTES // 1000} KB" if name == "headlines" else "")
            rows.append(Row(
                "list_pages", f"{name}, first page ({length / 1000:.1f} KB, {cards} rows), {size:,} articles, vs the "
                              f"same bytes from memory, interleaved, {len(page)} requests each",
                versus(page, floor, b_name="floor"), target, verdict(r50 <= TARGET and small)))
    return rows


if __name__ == "__main__":
    main_for(run)
