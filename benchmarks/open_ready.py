"""Open a ready article: GET /articles/{id} (a ~30 KB page, 100,000-article library) under
real uvicorn, against the same server answering the same bytes from memory (/floor, see
benchmarks/serve.py: same process, same uvicorn configuration, access log included).

Measured with the lean client (benchmarks/client.py), as a browser that already has its
CSRF cookie: sequentially, article and floor interleaved request by request on one
keep-alive connection each; and under a closed loop of 16 connections, article and floor
taking turns round by round. p50 and p99, as a ratio and as microseconds over the floor.

    python -m benchmarks.open_ready
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from .client import Connection, closed_loop_rounds, expect, interleaved
from .common import Row, Served, cleanup, main_for, pct, ratio, verdict, versus, work_copy
from .make_library import make_library

N = 100_000
SEQUENTIAL = 2000
ROUNDS = 4
CONC_PER_ROUND = 1000
CONCURRENCY = 16
TARGET = 1.3


def _about_30kb(db: Path) -> int:
    """A ready article among the newest whose reading HTML makes a page of about 30 KB."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT article_id, length(html) FROM contents ORDER BY article_id DESC LIMIT 40").fetchall()
    return min(rows, key=lambda r: abs(r[1] - 24_000))[0]


def browser_cookie(base: str) -> dict[str, str]:
    """The Cookie header a browser sends after its first page: with it the server neither
    mints a CSRF token nor sets a cookie on every response."""
    with Connection(base) as conn:
        first = expect(conn.get("/"), 200, base + "/")
    pair = first.headers.get("set-cookie", "").split(";", 1)[0]
    return {"Cookie": pair} if pair else {}


def run() -> list[Row]:
    library = make_library(N)
    db = work_copy(library, "open")
    article = _about_30kb(db)
    floor_file = Path(tempfile.mkdtemp(prefix="bench-floor-")) / "floor.html"
    path = f"/articles/{article}"
    try:
        with Served(db, floor_file=floor_file) as server:
            cookie = browser_cookie(server.url)
            with Connection(server.url, cookie) as a, Connection(server.url, cookie) as f:
                page = expect(a.get(path), 200, path)  # the first open marks it read: not timed
                page = expect(a.get(path), 200, path)
                floor_file.write_bytes(page.body)  # the same bytes, answered from memory
                if expect(f.get("/floor"), 200, "/floor").body != page.body:
                    raise RuntimeError("the floor does not answer the article's bytes")
                seq = interleaved({"article": (a, path), "floor": (f, "/floor")}, SEQUENTIAL, warmup=50)
                # a browser reopening the article it has kept asks with its ETag
                etag = page.headers.get("etag")
                reopen = interleaved({"article": (a, path), "floor": (f, "/floor")}, SEQUENTIAL, warmup=50,
                                     status={"article": 304}, extra={"article": {"If-None-Match": etag}}) if etag else None
            conc = closed_loop_rounds({"article": server.url + path, "floor": server.url + "/floor"},
                                      ROUNDS, CONC_PER_ROUND, CONCURRENCY, headers=cookie)
    finally:
        cleanup(db)
        cleanup(floor_file)
    rows = []
    for results, label in ((seq, "sequential, interleaved"), (conc, f"{CONCURRENCY} concurrent")):
        art, flo = results["article"], results["floor"]
        r50 = ratio(pct(art, 50), pct(flo, 50))
        rows.append(Row(
            "open_ready", f"open a ready article ({len(page.body) / 1000:.0f} KB page) vs the same bytes from "
                          f"memory, {label}, {len(art)} requests each",
            versus(art, flo, b_name="floor"), f"p50 ≤ {TARGET}×", verdict(r50 <= TARGET)))
    if reopen is not None:
        rows.append(Row(
            "open_ready", f"reopen a ready article the browser kept (If-None-Match, answered 304 without a body) "
                          f"vs the whole page from memory, sequential, interleaved, {len(reopen['article'])} "
                          f"requests each", versus(reopen["article"], reopen["floor"], b_name="floor"),
            "report", "reported"))
    return rows


if __name__ == "__main__":
    main_for(run)
