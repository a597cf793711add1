"""Drain: 60 tapped articles whose pages answer slowly (0.3 s each,
the I/O-bound case), with 1 `reader worker` process and with 4, on the same page set in
the same run. Reported: both wall times and their ratio; counts that noise cannot change
(every article cleaned exactly once, one page fetch each) must hold in both.

The pages are spread over SITES loopback sites (127.0.1.1, 127.0.1.2, ...), as taps
spread over the sites a person reads: reader fetches one page of a site at a time,
whatever the number of workers, so a drain of one site's pages is single file by design.
That case is measured too, and reported, not held to the target.

    python -m benchmarks.drain
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import tempfile
import time
from pathlib import Path

from tests.loopback import LoopbackServer

from .common import Row, cleanup, main_for, verdict, workers
from .pages import article_html

ARTICLES = 60
SITES = 20
DELAY = 0.3  # seconds each page takes to answer
TARGET = 0.5  # 4 workers should take at most half the time of one


class SlowSite(LoopbackServer):
    """Loopback pages that each take DELAY seconds, on `host`."""

    def __init__(self, host: str, pages: list[int]) -> None:
        super().__init__(host)
        rng = random.Random(9)
        self.pages = [f"/s/{i}.html" for i in pages]
        for path in self.pages:
            self.add(path, article_html(rng, 900), delay=DELAY)


class SlowSites:
    """ARTICLES slow pages on `sites` loopback sites, taken round robin, and a feed (on the
    first site) listing them in tap order."""

    def __init__(self, sites: int) -> None:
        self.sites = [SlowSite(f"127.0.1.{n + 1}", list(range(n, ARTICLES, sites))) for n in range(sites)]

    def __enter__(self) -> "SlowSites":
        for site in self.sites:
            site.__enter__()
        links = {int(path.rsplit("/", 1)[1].split(".")[0]): site.url(path) for site in self.sites for path in site.pages}
        items = "".join(f"<item><title>Slow {i}</title><link>{links[i]}</link></item>" for i in range(ARTICLES))
        self.sites[0].add("/feed.xml", f'<?xml version="1.0"?><rss version="2.0"><channel><title>slow</title>{items}'
                          "</channel></rss>", "application/rss+xml")
        return self

    def __exit__(self, *exc: object) -> None:
        for site in self.sites:
            site.__exit__(None, None, None)

    @property
    def feed(self) -> str:
        return self.sites[0].url("/feed.xml")

    def clear(self) -> None:
        for site in self.sites:
            site.hits.clear()

    def most_fetches(self) -> int:
        return max(site.hits[p] for site in self.sites for p in site.pages)


async def _tapped_library(db: Path, feed: str) -> None:
    from reader.core import running
    from reader.feeds.refresh import refresh_feeds
    from reader.settings import Settings

    settings = Settings(db=db, allow_private_urls=True, refresh_interval=0, extract_processes=0)
    async with running(settings, worker=False, refresher=False) as reader:
        feed_id, _ = await reader._store.add_feed(feed)
        await refresh_feeds(reader._store, reader._client, reader._pool, [await reader._store.get_feed(feed_id)],
                            max_bytes=10**7, deadline=30)
        for article in sorted(await reader._store.list_articles(limit=ARTICLES), key=lambda a: a["id"]):
            await reader._store.queue(article["id"])


def _drain(site: SlowSites, processes: int) -> tuple[float, int, int]:
    """Seconds from the workers' start to an empty line; runs started; most fetches of a page."""
    db = Path(tempfile.mkdtemp(prefix="bench-drain-")) / "reader.db"
    try:
        asyncio.run(_tapped_library(db, site.feed))
        site.clear()
        with workers(db, processes):
            started = time.perf_counter()
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                with sqlite3.connect(db, timeout=30) as conn:
                    done = conn.execute("SELECT count(*) FROM contents").fetchone()[0]
                if done == ARTICLES:
                    break
                time.sleep(0.05)
            wall = time.perf_counter() - started
        with sqlite3.connect(db, timeout=30) as conn:
            runs = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
        return wall, runs, site.most_fetches()
    finally:
        cleanup(db)


def run() -> list[Row]:
    rows = []
    for sites in (SITES, 1):
        with SlowSites(sites) as site:
            one = _drain(site, 1)
            four = _drain(site, 4)
        r = four[0] / one[0]
        once = one[1] == four[1] == ARTICLES and one[2] == four[2] == 1
        where = f"on {sites} sites" if sites > 1 else "all on one site (fetched one at a time by design)"
        rows.append(Row(
            "drain", f"drain {ARTICLES} tapped articles {where}, pages answering in {DELAY} s, 1 vs 4 `reader worker`"
                     " processes",
            f"4 workers **{four[0]:.1f} s** vs 1 worker {one[0]:.1f} s (**{r:.2f}×**); runs {one[1]} and {four[1]}, "
            f"at most {max(one[2], four[2])} fetch per page",
            f"≤ {TARGET}× with 4; exactly once" if sites > 1 else "report; exactly once",
            verdict(r <= TARGET and once) if sites > 1 else ("reported" if once else "missed")))
    return rows


if __name__ == "__main__":
    main_for(run)
