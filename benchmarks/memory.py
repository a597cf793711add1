"""Memory: resident memory (VmRSS from /proc, summed over the process and all its
descendants: the extraction pool lives in children) of `reader serve` idle with
100,000 articles, after a warm-up of browsing and reading; and the peak of the serve
process tree during browse_under_load (sampled every 50 ms).

    python -m benchmarks.memory
"""

from __future__ import annotations

import time

import httpx

from . import browse_under_load
from .common import Row, Served, cleanup, main_for, tree_rss_kb, verdict, work_copy
from .make_library import make_library

N = 100_000
TARGET_MB = 150


def idle_rss() -> tuple[int, int]:
    db = work_copy(make_library(N), "memory")
    try:
        # `reader serve` itself, default settings (one in-process worker) but no background refresh:
        # the library's feeds point nowhere
        with Served(db, plain=True, READER_SERVE_WORKERS="1") as server:
            import sqlite3

            with sqlite3.connect(db) as conn:
                ready = conn.execute("SELECT article_id FROM contents ORDER BY article_id DESC LIMIT 20").fetchall()
            with httpx.Client(timeout=30) as client:
                for _ in range(5):
                    for path in ["/", "/?before=10000", "/feeds", "/stats", "/api/articles?limit=500",
                                 *(f"/articles/{r[0]}" for r in ready)]:
                        client.get(server.url + path).raise_for_status()
            time.sleep(2)
            samples = []
            for _ in range(10):
                samples.append(tree_rss_kb(server.proc.pid))
                time.sleep(0.2)
            return max(samples)
    finally:
        cleanup(db)


def run() -> list[Row]:
    kb, procs = idle_rss()
    rows = [Row("memory", "RSS of `reader serve` idle, 100,000 articles (process tree, after warm-up)",
                f"**{kb / 1024:.0f} MB** ({procs} process{'es' if procs > 1 else ''})",
                f"< {TARGET_MB} MB", verdict(kb / 1024 < TARGET_MB))]
    r = browse_under_load.measure()
    rows.append(Row("memory", "peak RSS of the serve process tree during browse_under_load (4 extracting)",
                    f"**{r['peak_kb'] / 1024:.0f} MB** ({r['peak_procs']} processes); "
                    f"{r['idle_peak_kb'] / 1024:.0f} MB during its idle phase", "report", "reported"))
    return rows


if __name__ == "__main__":
    main_for(run)
