"""Browse under load: browse p99 (GET /, first page, 100,000 articles) while the server's
worker extracts continuously (READER_SERVE_WORKERS=4: `running(concurrency=4)` in the
serve process, extraction in its default one-process pool), against browse p99 on
the same server with the worker idle. Pages are realistic 50-500 KB articles
(benchmarks/pages.py) on a loopback server; the queue is long enough to stay busy
for the whole measurement, which is checked. The serve process tree's peak RSS is
sampled throughout (the memory benchmark reports it). Timed with the lean client
(benchmarks/client.py) on one keep-alive connection, as a browser with its CSRF cookie.

    python -m benchmarks.browse_under_load
"""

from __future__ import annotations

import sqlite3
import time

from .client import Connection, interleaved
from .common import Row, RssSampler, Served, cleanup, main_for, pct, ratio, verdict, versus, work_copy
from .make_library import make_library
from .pagesite import page_site

N = 100_000
DISTINCT_PAGES = 40
QUEUE = 300
REQUESTS = 400
TARGET = 2.0
RESULT: dict | None = None  # shared with the memory benchmark when run together


def _ledger(db) -> tuple[int, int, int]:
    with sqlite3.connect(db, timeout=30) as conn:
        cached = conn.execute("SELECT count(*) FROM runs WHERE outcome = 'cached' AND worker != 'bench'").fetchone()[0]
        failed = conn.execute("SELECT count(*) FROM runs WHERE outcome = 'failed' AND worker != 'bench'").fetchone()[0]
        queued = conn.execute("SELECT count(*) FROM queue").fetchone()[0]
    return cached, failed, queued


def measure() -> dict:
    global RESULT
    if RESULT is not None:
        return RESULT
    db = work_copy(make_library(N), "load")
    try:
        with page_site(DISTINCT_PAGES, QUEUE) as (base, mean_bytes, _hits):
            with sqlite3.connect(db) as conn:  # the old queue points nowhere: replace it (not yet)
                conn.execute("DELETE FROM queue")
                targets = [r[0] for r in conn.execute(
                    "SELECT a.id FROM articles a WHERE NOT EXISTS (SELECT 1 FROM contents c WHERE c.article_id = a.id)"
                    " AND a.error IS NULL ORDER BY a.id LIMIT ?", (QUEUE,))]
                for k, aid in enumerate(targets):
                    conn.execute("UPDATE articles SET url = ? WHERE id = ?", (f"{base}/a/{k}.html", aid))
            with Served(db, READER_SERVE_WORKERS="4") as server:
                from .open_ready import browser_cookie

                lean = Connection(server.url, browser_cookie(server.url))

                def browse(n: int) -> list[float]:
                    return interleaved({"browse": (lean, "/")}, n, warmup=20)["browse"]

                with RssSampler(server.proc.pid) as idle_rss:
                    idle = browse(REQUESTS)
                with sqlite3.connect(db, timeout=30) as conn:  # the taps, all at once
                    now = time.time()
                    conn.executemany("INSERT INTO queue (article_id, lane, tapped_at, due_at) VALUES (?, 'normal', ?, ?)",
                                     [(aid, now + k * 1e-3, now + k * 1e-3) for k, aid in enumerate(targets)])
                with RssSampler(server.proc.pid) as load_rss:
                    deadline = time.monotonic() + 30
                    while _ledger(db)[0] < 2:  # extraction under way
                        if time.monotonic() > deadline:
                            raise RuntimeError("the worker did not start extracting:\n" + server.output())
                        time.sleep(0.1)
                    before = _ledger(db)
                    started = time.monotonic()
                    loaded = browse(REQUESTS)
                    window = time.monotonic() - started
                    after = _ledger(db)
                lean.close()
    finally:
        cleanup(db)
    RESULT = {
        "idle": idle, "loaded": loaded, "window": window,
        "extracted": after[0] - before[0], "failed": after[1] - before[1], "queued_after": after[2],
        "idle_peak_kb": idle_rss.peak_kb, "peak_kb": load_rss.peak_kb, "peak_procs": load_rss.peak_procs,
        "page_kb": mean_bytes / 1000,
    }
    return RESULT


def run() -> list[Row]:
    r = measure()
    idle, loaded = r["idle"], r["loaded"]
    r99 = ratio(pct(loaded, 99), pct(idle, 99))
    busy = r["queued_after"] > 0 and r["extracted"] > 0
    note = (f"during the {r['window']:.1f} s loaded window the worker finished {r['extracted']} extractions "
            f"({r['failed']} failed; mean page {r['page_kb']:.0f} KB), {r['queued_after']} still queued at its end")
    ok = r99 <= TARGET and busy and r["failed"] == 0
    return [Row("browse_under_load",
                f"browse p99 while 4 workers extract vs idle, {len(idle)} requests each (100,000 articles)",
                f"{versus(loaded, idle, lead=99)}; {r['extracted']} extracted meanwhile",
                f"p99 ≤ {TARGET}×", verdict(ok), note)]


if __name__ == "__main__":
    main_for(run)
