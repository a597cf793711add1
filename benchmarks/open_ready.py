"""Benchmark 1: open a ready article (GET /articles/{id}, a ~30 KB page) under real
uvicorn, against the same server answering the same bytes from memory (/floor, see
benchmarks/serve.py). p50 and p99, sequential (one keep-alive connection) and under a
closed-loop load of 16 concurrent clients. Floor and article alternate in rounds so
both see the same noise. Library: 100,000 articles.

    python -m benchmarks.open_ready
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from .common import (Row, Served, cleanup, concurrent_gets, load_client, main_for, ms, pct, ratio,
                     timed_gets, verdict, work_copy)
from .make_library import make_library

N = 100_000
ROUNDS = 5
SEQ_PER_ROUND = 200
CONC_PER_ROUND = 800
CONCURRENCY = 16
TARGET = 1.3


async def _measure(server: Served, article: int) -> dict[str, dict[str, list[float]]]:
    paths = {"article": f"{server.url}/articles/{article}", "floor": f"{server.url}/floor"}
    results = {"seq": {k: [] for k in paths}, "conc": {k: [] for k in paths}}
    async with load_client(CONCURRENCY) as client:
        for url in paths.values():  # warm up: templates, caches, connections
            await timed_gets(client, url, 30)
        for r in range(ROUNDS):
            order = list(paths.items()) if r % 2 == 0 else list(paths.items())[::-1]
            for name, url in order:
                results["seq"][name] += await timed_gets(client, url, SEQ_PER_ROUND)
            for name, url in order:
                results["conc"][name] += await concurrent_gets(client, url, CONC_PER_ROUND, CONCURRENCY)
    return results


def _about_30kb(db: Path) -> int:
    """A ready article among the newest whose reading HTML makes a page of about 30 KB."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT article_id, length(html) FROM contents ORDER BY article_id DESC LIMIT 40").fetchall()
    return min(rows, key=lambda r: abs(r[1] - 24_000))[0]


def run() -> list[Row]:
    library = make_library(N)
    db = work_copy(library, "open")
    article = _about_30kb(db)
    floor_file = Path(tempfile.mkdtemp(prefix="bench-floor-")) / "floor.html"
    try:
        with Served(db, floor_file=floor_file) as server:
            import httpx

            page = httpx.get(f"{server.url}/articles/{article}", timeout=30)
            page.raise_for_status()
            floor_file.write_bytes(page.content)  # the same bytes, answered from memory
            floor = httpx.get(f"{server.url}/floor", timeout=30)
            assert floor.content == page.content
            results = asyncio.run(_measure(server, article))
    finally:
        cleanup(db)
        cleanup(floor_file)
    rows = []
    for mode, label in (("seq", "sequential"), ("conc", f"{CONCURRENCY} concurrent")):
        a, f = results[mode]["article"], results[mode]["floor"]
        r50, r99 = ratio(pct(a, 50), pct(f, 50)), ratio(pct(a, 99), pct(f, 99))
        rows.append(Row(
            "1", f"open a ready article ({len(page.content) / 1000:.0f} KB page), {label}, {len(a)} requests each",
            f"p50 **{r50:.2f}×** ({ms(pct(a, 50))} vs floor {ms(pct(f, 50))}); "
            f"p99 {r99:.2f}× ({ms(pct(a, 99))} vs {ms(pct(f, 99))})",
            f"p50 ≤ {TARGET}×", verdict(r50 <= TARGET)))
    return rows


if __name__ == "__main__":
    main_for(run)
