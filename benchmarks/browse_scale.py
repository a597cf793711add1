"""Benchmark 2: the browse page (GET /), first page and a deep page (?before=<an id
90 % down the list>), and the filters and search a person uses every day (ready, unread,
failed, a full-text search), with 100,000 articles against the same with 1,000. Two servers
run side by side (same settings, same 200 feeds, same 100-item queue); requests
alternate between them in rounds so both see the same noise.

    python -m benchmarks.browse_scale
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from .common import Row, Served, cleanup, load_client, main_for, ms, pct, ratio, timed_gets, verdict, work_copy
from .make_library import make_library

BIG, SMALL = 100_000, 1_000
ROUNDS = 6
PER_ROUND = 60
TARGET = 1.5
PAGES = {  # what a person opens, by name
    "first": "",
    "deep": "?before={deep}",
    "ready filter": "?state=ready",
    "unread filter": "?unread=1",
    "failed filter": "?state=failed",
    "search": "?q=reading",
}


def deep_id(db: Path) -> int:
    """The id of the article 90 % of the way down the browse order."""
    with sqlite3.connect(db) as conn:
        n = conn.execute("SELECT count(*) FROM articles").fetchone()[0]
        return conn.execute("SELECT id FROM articles ORDER BY sort_at DESC, id DESC LIMIT 1 OFFSET ?",
                            (int(n * 0.9),)).fetchone()[0]


async def _measure(urls: dict[str, str]) -> dict[str, list[float]]:
    out = {k: [] for k in urls}
    async with load_client(4) as client:
        for url in urls.values():
            await timed_gets(client, url, 10)
        for r in range(ROUNDS):
            items = list(urls.items())
            for name, url in (items if r % 2 == 0 else items[::-1]):
                out[name] += await timed_gets(client, url, PER_ROUND)
    return out


def run() -> list[Row]:
    dbs = {n: work_copy(make_library(n), f"browse{n}") for n in (BIG, SMALL)}
    try:
        deep = {n: deep_id(db) for n, db in dbs.items()}
        with Served(dbs[BIG]) as big, Served(dbs[SMALL]) as small:
            servers = {BIG: big, SMALL: small}
            urls = {}
            for n, s in servers.items():
                for page, query in PAGES.items():
                    urls[(n, page)] = f"{s.url}/{query.format(deep=deep[n])}"
            results = asyncio.run(_measure(urls))
    finally:
        for db in dbs.values():
            cleanup(db)
    rows = []
    for page in PAGES:
        b, s = results[(BIG, page)], results[(SMALL, page)]
        r50, r99 = ratio(pct(b, 50), pct(s, 50)), ratio(pct(b, 99), pct(s, 99))
        rows.append(Row(
            "2", f"browse, {page}{' page' if page in ('first', 'deep') else ''}, 100,000 vs 1,000 articles,"
                 f" {len(b)} requests each",
            f"p50 **{r50:.2f}×** ({ms(pct(b, 50))} vs {ms(pct(s, 50))}); p99 {r99:.2f}× "
            f"({ms(pct(b, 99))} vs {ms(pct(s, 99))})",
            f"≤ {TARGET}×", verdict(r50 <= TARGET)))
    return rows


if __name__ == "__main__":
    main_for(run)
