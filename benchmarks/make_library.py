"""Make a library of N articles for the benchmarks: a SQLite file with reader's own
schema (created by opening reader.store.Store once), filled with sqlite3 executemany.

    python -m benchmarks.make_library 100000        # -> benchmarks/results/library-100000.db

200 feeds; every article has a headline and a sanitized summary; 3 % are ready (cleaned
contents of 15-30 KB of reading HTML and a ledger run), 1 % failed (but at least about 60,
so that the failed filter's first page holds its full 50 cards in a small library too,
and browse_scale compares pages of the same size), 100 are queued
(the same queue whatever N, so comparisons across sizes change only the library).
The newest page holds articles of every state. Article URLs point at 127.0.0.1:9
(discard: nothing answers), so a stray fetch fails at once and never leaves the machine.
Cached by size: an existing file is reused.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import sys
import time
from pathlib import Path

from reader.clean.sanitize import plain_text
from reader.store import Store

from .common import RESULTS
from .pages import _WORDS, _sentence, article_html

FEEDS = 200
QUEUED = 100
VERSION = 2  # bump when the generated content changes: old caches are then ignored
BASE_TIME = 1_700_000_000.0


def library_path(n: int) -> Path:
    return RESULTS / f"library-{n}-v{VERSION}.db"


def ready_ids(n: int) -> list[int]:
    """Article ids that have cleaned contents (the newest one is a good 'open' target)."""
    return [i for i in range(1, n + 1) if _state(i, n) == "ready"]


def _state(i: int, n: int) -> str:
    top = n - i  # 0 for the newest article
    if top < 50:  # the first browse page: a bit of everything
        return ("ready", "queued", "new", "failed", "new")[top % 5]
    if i % 33 == 0:
        return "ready"
    if i % min(97, max(1, n // 80)) == 0:
        return "failed"
    if i % max(1, n // QUEUED) == 1:
        return "queued"
    return "new"


def make_library(n: int, path: Path | None = None, *, force: bool = False) -> Path:
    path = path or library_path(n)
    if path.exists() and not force:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    for p in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        p.unlink(missing_ok=True)

    async def schema():
        store = await Store.open(tmp)
        await store.close()

    asyncio.run(schema())
    rng = random.Random(f"library-{n}")
    bodies = [article_html(rng, rng.randint(2800, 4200)) for _ in range(48)]
    texts = [plain_text(b) for b in bodies]
    db = sqlite3.connect(tmp, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO feeds (id, url, title, site_url, etag, added_at, refreshed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(f, f"http://127.0.0.1:9/feeds/{f}.xml", f"Feed {f}: {_sentence(rng)[:40]}", f"http://127.0.0.1:9/{f}/",
          f'"etag-{f}"', BASE_TIME, BASE_TIME + n * 60) for f in range(1, FEEDS + 1)],
    )
    articles, contents, runs, queue = [], [], [], []
    queued_seen = 0
    for i in range(1, n + 1):
        published = BASE_TIME + i * 60 + rng.random()
        title = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 11))).capitalize()
        summary = f"<p>{_sentence(rng)} {_sentence(rng)}</p>"
        state = _state(i, n)
        if state == "queued" and queued_seen >= QUEUED:
            state = "new"
        error = failed_at = None
        if state == "failed":
            error, failed_at = "the site answered HTTP 404 Not Found", published + 30
        articles.append((i, (i % FEEDS) + 1, f"guid-{i}", f"http://127.0.0.1:9/a/{i}.html", title, summary,
                         f"Author {i % 300}", published, published, published, error, failed_at))
        if state == "ready":
            k = i % len(bodies)
            contents.append((i, title, f"Author {i % 300}", None, bodies[k], texts[k], len(texts[k].split()),
                             published + 60))
            runs.append((i, "queue", "bench", published + 50, published + 52, "cached", None))
        elif state == "failed":
            runs.append((i, "queue", "bench", published + 25, published + 30, "failed", error))
        elif state == "queued":
            queued_seen += 1
            queue.append((i, "normal", published + 100, published + 100))
    db.executemany(
        "INSERT INTO articles (id, feed_id, guid, url, title, summary, author, published, sort_at, added_at,"
        " error, failed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", articles)
    db.executemany(
        "INSERT INTO contents (article_id, title, author, published, html, text, words, cleaned_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", contents)
    db.executemany(
        "INSERT INTO runs (article_id, lane, worker, started_at, finished_at, outcome, error)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)", runs)
    db.executemany("INSERT INTO queue (article_id, lane, tapped_at, due_at) VALUES (?, ?, ?, ?)", queue)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    tmp.rename(path)
    return path


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [100_000]
    for n in sizes:
        started = time.monotonic()
        path = make_library(n, force=True)
        print(f"{path}: {n} articles, {path.stat().st_size / 1e6:.0f} MB, {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
