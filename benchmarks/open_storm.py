"""Open storm: 1,000 concurrent opens (GET /api/articles/{id}/content, 20 for each of 50
uncached articles, shuffled) racing the server's own worker and 4 `reader worker`
processes, already pulling when the taps land in the middle of the storm.
Counts, which noise cannot change:
extractions started in the ledger must be 50 exactly, page fetches on the loopback
site 50 exactly, errors 0. Wall time is reported. The opens go through the lean client
(benchmarks/client.py), each on a connection of its own, so the wall time is the server's;
at most 100 at a time (with the taps), well below the connections and tasks `reader serve`
accepts at once (200; past that it answers 503).

    python -m benchmarks.open_storm
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import tempfile
import time
from pathlib import Path

import httpx

from reader.web.server import LIMIT_CONCURRENCY
from reader.store import Store

from .client import ClientError, get_once
from .common import Row, Served, cleanup, main_for, verdict, workers
from .pagesite import page_site

ARTICLES = 50
OPENS = 1000
WORKERS = 4


async def _library(db: Path, base: str) -> list[int]:
    store = await Store.open(db)
    try:
        feed_id, _ = await store.add_feed(f"{base}/feed.xml", "storm")
        store.feed_items = ARTICLES  # one feed this long: past the refresh cap of a real feed
        await store.store_feed_entries(feed_id, title="storm", site_url=None, etag=None, last_modified=None, entries=[
            {"guid": str(k), "url": f"{base}/a/{k}.html", "title": f"Article {k}", "summary": "", "author": None,
             "published": 1_700_000_000.0 + k} for k in range(ARTICLES)])
        return sorted(a["id"] for a in await store.list_articles(limit=ARTICLES))
    finally:
        await store.close()


async def _storm(url: str, ids: list[int]) -> tuple[list[int], list[str], float]:
    targets = [i for i in ids for _ in range(OPENS // len(ids))]
    random.Random(5).shuffle(targets)
    statuses, errors = [], []
    # a connection for every request, taps included: none waits to reuse one the server has
    # since closed as idle (that is a client artefact, not a server error); the 50 taps are
    # POSTs with a JSON body, untimed, so they keep httpx
    limits = httpx.Limits(max_connections=ARTICLES, max_keepalive_connections=ARTICLES)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        # reader serve answers 503 past LIMIT_CONCURRENCY connections and tasks (closing
        # connections still count for a moment): keep well below it
        in_flight = asyncio.Semaphore(LIMIT_CONCURRENCY // 2)

        async def one(i):
            try:
                async with in_flight:
                    status, body = await get_once(f"{url}/api/articles/{i}/content")
                statuses.append(status)
                if status != 200 or not json.loads(body).get("words"):
                    errors.append(f"{i}: HTTP {status} {body[:100]!r}")
            except (ClientError, OSError, ValueError) as exc:
                errors.append(f"{i}: {type(exc).__name__} {exc}")

        async def tap(i):
            (await client.post(f"{url}/api/articles/{i}/queue", json={})).raise_for_status()

        # The taps land in the middle of the storm, so the workers (already pulling) and
        # the direct opens really race for the same articles.
        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in targets[: OPENS // 2]), *(tap(i) for i in ids),
                             *(one(i) for i in targets[OPENS // 2:]))
        return statuses, errors, time.perf_counter() - started


def run() -> list[Row]:
    db = Path(tempfile.mkdtemp(prefix="bench-storm-")) / "reader.db"
    try:
        with page_site(ARTICLES, ARTICLES, seed=5) as (base, mean_bytes, hits):
            ids = asyncio.run(_library(db, base))
            with Served(db, READER_SERVE_WORKERS="1") as server:
                with workers(db, WORKERS):
                    statuses, errors, wall = asyncio.run(_storm(server.url, ids))
                    deadline = time.monotonic() + 60
                    while True:  # let every worker finish what it holds before counting
                        with sqlite3.connect(db, timeout=30) as conn:
                            running = conn.execute("SELECT count(*) FROM runs WHERE outcome IS NULL").fetchone()[0]
                        if running == 0 or time.monotonic() > deadline:
                            break
                        time.sleep(0.2)
            fetches = hits()
    finally:
        with sqlite3.connect(db, timeout=30) as conn:
            runs = conn.execute("SELECT lane, outcome, count(*) FROM runs GROUP BY lane, outcome").fetchall()
            ready = conn.execute("SELECT count(*) FROM contents").fetchone()[0]
        cleanup(db)
    started = sum(n for _, _, n in runs)
    page_fetches = sum(n for p, n in fetches.items() if p.startswith("/a/"))
    by_lane = ", ".join(f"{lane} {outcome}: {n}" for lane, outcome, n in runs)
    ok = started == ARTICLES and page_fetches == ARTICLES and not errors and ready == ARTICLES
    note = f"ledger by lane and outcome: {by_lane}; {ready} articles ready; mean page {mean_bytes / 1000:.0f} KB"
    if errors:
        note += f"; first errors: {errors[:3]}"
    return [Row("open_storm", f"{OPENS} opens ({LIMIT_CONCURRENCY // 2} at a time) of {ARTICLES} uncached articles"
                              f" + {WORKERS} worker processes",
                f"extractions in the ledger **{started}**, page fetches **{page_fetches}**, errors **{len(errors)}**; "
                f"wall {wall:.1f} s",
                f"= {ARTICLES}, = {ARTICLES}, 0; wall reported", verdict(ok), note)]


if __name__ == "__main__":
    main_for(run)
