"""Take throughput: queue take throughput with 1, 2 and 4 worker processes and a no-op
extraction: each process runs reader.store.Store.take_next + store_cleaned in a loop
(one task, as `reader worker` does with concurrency 1) until the queue is empty. All
processes open the database first and start together. Exactly-once is checked: every
queued article has exactly one ledger run, cached, and the queue ends empty. The articles
are on SITES sites, as a person's taps are: a take never fetches from a site another live
claim is fetching from (nothing is fetched here, but the rule is part of every take).

    python -m benchmarks.take_throughput
"""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
import time
from pathlib import Path

from reader.store import Store

from .common import BENCH_DIR, PYTHON, Row, cleanup, main_for

SITES = 50

ITEMS = 1500
PROCESSES = (1, 2, 4)

TAKER = r"""
import asyncio, sys, time
from reader.store import Store

async def main(path, start_at):
    store = await Store.open(path)
    await asyncio.sleep(max(0.0, start_at - time.time()))
    n = 0
    while (run := await store.take_next(sys.argv[3], 60)) is not None:
        await store.store_cleaned(run, {"title": None, "author": None, "published": None,
                                        "html": "<p>x</p>", "text": "x", "words": 1})
        n += 1
    await store.close()
    print(n, time.time())

asyncio.run(main(sys.argv[1], float(sys.argv[2])))
"""


async def _fill(db: Path) -> None:
    async with await Store.open(db) as store:
        feed_id, _ = await store.add_feed("http://127.0.0.1:9/feed.xml")
        store.feed_items = ITEMS  # one feed this long: past the refresh cap of a real feed
        await store.store_feed_entries(feed_id, title="t", site_url=None, etag=None, last_modified=None, entries=[
            {"guid": str(i), "url": f"http://site-{i % SITES}.invalid/{i}", "title": str(i), "summary": "", "author": None,
             "published": float(i)} for i in range(ITEMS)])
        for article in await store.list_articles(limit=ITEMS):
            await store.queue(article["id"])


def one(processes: int) -> tuple[float, bool, str]:
    db = Path(tempfile.mkdtemp(prefix="bench-take-")) / "reader.db"
    try:
        asyncio.run(_fill(db))
        start_at = time.time() + 2.0  # every process has opened the database by then
        procs = [subprocess.Popen([PYTHON, "-c", TAKER, str(db), str(start_at), f"taker-{k}"],
                                  stdout=subprocess.PIPE, text=True, cwd=BENCH_DIR.parent) for k in range(processes)]
        outs = [p.communicate(timeout=120)[0].split() for p in procs]
        if any(p.returncode for p in procs):
            return 0.0, False, "a taker failed"
        wall = max(float(o[1]) for o in outs) - start_at
        taken = [int(o[0]) for o in outs]

        async def check():
            async with await Store.open(db) as store:
                return await store.runs(), await store.stats()

        runs, stats = asyncio.run(check())
        per_article: dict[int, int] = {}
        for r in runs:
            per_article[r["article_id"]] = per_article.get(r["article_id"], 0) + 1
        once = (len(per_article) == ITEMS and set(per_article.values()) == {1} and stats["cached"] == ITEMS
                and stats["queued"] == 0 and sum(taken) == ITEMS)
        return ITEMS / wall, once, "/".join(map(str, taken))
    finally:
        cleanup(db)


def run() -> list[Row]:
    rows, results = [], []
    for n in PROCESSES:
        rate, once, split = one(n)
        results.append((n, rate, once, split))
    measured = "; ".join(f"{n} process{'es' if n > 1 else ''}: **{rate:.0f} takes/s** (split {split})"
                         for n, rate, _, split in results)
    all_once = all(o for *_, o, _ in results)
    base = results[0][1]
    scaling = ", ".join(f"{n}: {rate / base:.2f}×" for n, rate, _, _ in results)
    rows.append(Row("take_throughput", f"queue take throughput, no-op extraction, {ITEMS} queued items",
                    measured + f"; exactly-once **{'held' if all_once else 'BROKEN'}**",
                    "report takes/s; exactly-once holds", "met" if all_once else "failed",
                    f"throughput relative to 1 process: {scaling}"))
    return rows


if __name__ == "__main__":
    main_for(run)
