"""Browse at scale: the browse page (GET /), first page and a deep page (?before=<an id
90 % down the list>), the filters and search a person uses every day (ready, unread,
failed, a full-text search), and opening a ready article (its page links the previous and
next article of the reading list), with 100,000 articles against the same with 1,000. Two servers
run side by side (same settings and uvicorn configuration, access log included; same 200
feeds, same 100-item queue). The lean client (benchmarks/client.py) sends each page to the
two servers in turn, request by request (big, small, big, small, ...), on one keep-alive
connection per server, as a browser that has its CSRF cookie.

    python -m benchmarks.browse_scale
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .client import Connection, interleaved
from .common import Row, Served, cleanup, main_for, pct, ratio, verdict, versus, work_copy
from .make_library import make_library
from .open_ready import _about_30kb, browser_cookie

BIG, SMALL = 100_000, 1_000
REQUESTS = 150
TARGET = 1.5
PAGES = {  # what a person opens, by name
    "first": "/",
    "deep": "/?before={deep}",
    "ready filter": "/?state=ready",
    "unread filter": "/?unread=1",
    "failed filter": "/?state=failed",
    "search": "/?q=reading",
    "open": "/articles/{article}",
}


def deep_id(db: Path) -> int:
    """The id of the article 90 % of the way down the browse order."""
    with sqlite3.connect(db) as conn:
        n = conn.execute("SELECT count(*) FROM articles").fetchone()[0]
        return conn.execute("SELECT id FROM articles ORDER BY sort_at DESC, id DESC LIMIT 1 OFFSET ?",
                            (int(n * 0.9),)).fetchone()[0]


def _html_size(db: Path, article_id: int) -> int:
    with sqlite3.connect(db) as conn:
        size: int = conn.execute("SELECT length(html) FROM contents WHERE article_id = ?", (article_id,)).fetchone()[0]
    conn.close()
    return size


def _measure(servers: dict[int, Served], queries: dict[int, dict[str, str]]) -> dict[tuple[int, str], list[float]]:
    out: dict[tuple[int, str], list[float]] = {}
    conns = {n: Connection(s.url, browser_cookie(s.url)) for n, s in servers.items()}
    try:
        for page in PAGES:  # page by page, the two libraries interleaved request by request
            # the first open marks the article read: a warm-up request, like every first one
            timed = interleaved({n: (conns[n], queries[n][page]) for n in servers}, REQUESTS, warmup=10)
            for n, seconds in timed.items():
                out[(n, page)] = seconds
    finally:
        for conn in conns.values():
            conn.close()
    return out


def run() -> list[Row]:
    dbs = {n: work_copy(make_library(n), f"browse{n}") for n in (BIG, SMALL)}
    try:
        deep = {n: deep_id(db) for n, db in dbs.items()}
        # a ready article of about the same size in each (the libraries' texts differ)
        article = {n: _about_30kb(db) for n, db in dbs.items()}
        sizes = {n: _html_size(db, article[n]) for n, db in dbs.items()}
        with Served(dbs[BIG]) as big, Served(dbs[SMALL]) as small:
            queries = {n: {page: q.format(deep=deep[n], article=article[n]) for page, q in PAGES.items()}
                       for n in (BIG, SMALL)}
            results = _measure({BIG: big, SMALL: small}, queries)
    finally:
        for db in dbs.values():
            cleanup(db)
    rows = []
    for page in PAGES:
        b, s = results[(BIG, page)], results[(SMALL, page)]
        r50 = ratio(pct(b, 50), pct(s, 50))
        what = (f"open a ready article (its cleaned HTML {sizes[BIG] / 1000:.1f} KB vs {sizes[SMALL] / 1000:.1f} KB)"
                if page == "open" else f"browse, {page}{' page' if page in ('first', 'deep') else ''}")
        rows.append(Row(
            "browse_scale", f"{what}, 100,000 vs 1,000 articles, interleaved, {len(b)} requests each",
            versus(b, s), f"p50 ≤ {TARGET}×", verdict(r50 <= TARGET)))
    return rows


if __name__ == "__main__":
    main_for(run)
