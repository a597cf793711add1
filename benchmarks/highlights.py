"""Highlights (issue 24's speed targets) under real uvicorn, through the lean client:

- opening a ready article with 50 highlights against the same article (a copy: the same
  text, title and feed) with none, on one server, interleaved request by request, both
  already read: kept (the page rendered before and still current, reader/web/kept.py),
  fresh (the library's version raised before every request by starring and unstarring a
  third article, so both pages are rendered again, as after any change in the library),
  and repainted (a highlight's color and length changed before every request, to a shape
  it had last 388 changes ago, on the article with highlights for its requests and on a third article
  for the other's, so its marks are painted anew);
- the highlights page's first page at 10,000 highlights against 100, two identical
  servers (same library, same settings) interleaved request by request.

    python -m benchmarks.highlights
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

from reader.clean.anchors import CONTEXT, text_hash

from .client import Connection, expect, interleaved
from .common import Row, Served, cleanup, main_for, pct, ratio, verdict, versus, work_copy
from .make_library import make_library, ready_ids
from .open_ready import _about_30kb, browser_cookie

N = 1_000
MARKS = 50
OPENS = 1_000
FRESH = 600
PAGE_REQUESTS = 300
MANY, FEW = 10_000, 100
OPEN_TARGET = 1.2
PAGE_TARGET = 1.5
COLORS = ("yellow", "green", "blue", "pink")
TAGS = ("quote", "idea", "todo", "method", "history", "data", "argument", "later")


def _twin(db: Path, article_id: int) -> int:
    """A copy of the article (its row and its cleaned content) under a new id and address:
    the same page but for its highlights. Both marked read, so opening them writes nothing."""
    with sqlite3.connect(db, isolation_level=None) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(articles)") if r[1] not in ("id", "tap_order")]
        copied = ", ".join("guid || '-twin'" if c == "guid" else "url || '#twin'" if c == "url"
                           else "url_key || '#twin'" if c == "url_key" else c for c in cols)
        conn.execute("BEGIN")
        twin = conn.execute(f"INSERT INTO articles ({', '.join(cols)}) SELECT {copied} FROM articles WHERE id = ?",
                            (article_id,)).lastrowid
        assert twin is not None
        ccols = [r[1] for r in conn.execute("PRAGMA table_info(contents)") if r[1] != "article_id"]
        conn.execute(f"INSERT INTO contents (article_id, {', '.join(ccols)}) SELECT ?, {', '.join(ccols)}"
                     " FROM contents WHERE article_id = ?", (twin, article_id))
        conn.execute("UPDATE articles SET read_at = 1700000000 WHERE id IN (?, ?)", (article_id, twin))
        conn.execute("COMMIT")
    conn.close()
    return twin


def _passages(text: str, count: int, rng: random.Random) -> list[tuple[int, int]]:
    """`count` passages of 40-160 characters spread over the text, each from a word's start
    to a word's end, none overlapping."""
    out = []
    step = len(text) // count
    for k in range(count):
        lo = k * step + rng.randint(0, max(0, step - 200))
        start = text.find(" ", lo) + 1
        end = text.rfind(" ", start, start + rng.randint(40, 160))
        if start > 0 and end > start + 10 and text[start:end].strip() == text[start:end]:
            out.append((start, end))
    return out


def _add_highlights(db: Path, article_ids: list[int], count: int, seed: str) -> None:
    """`count` highlights spread over these articles' texts, as the store places them (the
    quote, its context, offsets and the text's hash); one in three has a note, one in two
    tags. Made oldest first, a second apart."""
    rng = random.Random(seed)
    with sqlite3.connect(db, isolation_level=None) as conn:
        marks = ",".join("?" * len(article_ids))
        texts = dict(conn.execute(f"SELECT article_id, text FROM contents WHERE article_id IN ({marks})",
                                  article_ids).fetchall())
        per = -(-count // len(article_ids))
        rows = []
        for article_id in article_ids:
            text = texts[article_id]
            digest = text_hash(text)
            for s, e in _passages(text, per, rng):
                note = " ".join(rng.sample(text[s:e].split() * 3, 8)) if rng.random() < 1 / 3 else ""
                tags = rng.sample(TAGS, rng.randint(1, 3)) if rng.random() < 0.5 else []
                rows.append((article_id, text[s:e], text[max(0, s - CONTEXT):s], text[e:e + CONTEXT], s, e, digest,
                             note, rng.choice(COLORS), json.dumps(tags)))
        rng.shuffle(rows)
        rows = rows[:count]
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO highlights (article_id, quote, prefix, suffix, start_offset, end_offset, text_hash, note,"
            " color, tags, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*r, 1_700_000_000.0 + i, 1_700_000_000.0 + i) for i, r in enumerate(rows)])
        conn.execute("COMMIT")
    conn.close()
    if len(rows) != count:
        raise RuntimeError(f"made {len(rows)} highlights, wanted {count}")


def _after_changes(targets: dict[str, tuple[Connection, str, Callable[[], None]]], count: int, warmup: int = 10,
                   ) -> dict[str, list[float]]:
    """Like client.interleaved, but each request comes after its own change to the library
    (untimed, made here through sqlite3 like another process's write)."""
    out: dict[str, list[float]] = {name: [] for name in targets}
    for round_ in range(warmup + count):
        for name, (conn, path, change) in targets.items():
            change()
            seconds = expect(conn.get(path), 200, path).seconds
            if round_ >= warmup:
                out[name].append(seconds)
    return out


def _open_rows(db: Path) -> list[Row]:
    article = _about_30kb(db)
    twin = _twin(db, article)
    others = [i for i in ready_ids(N) if i not in (article, twin)][:2]
    _add_highlights(db, [article], MARKS, "open")
    _add_highlights(db, [others[0]], 1, "other")
    writer = sqlite3.connect(db, isolation_level=None)
    with sqlite3.connect(db) as conn:
        size = conn.execute("SELECT length(html) FROM contents WHERE article_id = ?", (article,)).fetchone()[0]
        mine = conn.execute("SELECT id FROM highlights WHERE article_id = ? ORDER BY id LIMIT 1",
                            (article,)).fetchone()[0]
        theirs = conn.execute("SELECT id FROM highlights WHERE article_id = ?", (others[0],)).fetchone()[0]
    conn.close()
    flips = iter(range(10**9))

    def bump() -> None:  # a star on another article: every kept page is stale, no page shown changes
        writer.execute("UPDATE articles SET starred_at = CASE WHEN starred_at IS NULL THEN 1 END WHERE id = ?",
                       (others[1],))

    def reshape(highlight: int) -> Callable[[], None]:
        """Its color and length changed, to a shape it had last 388 changes ago (a painting
        kept by its marks, 32 of them, would be found again)."""
        def change() -> None:
            k = next(flips)
            writer.execute("UPDATE highlights SET color = ?, end_offset = start_offset + ? WHERE id = ?",
                           (COLORS[k % 4], 20 + k % 97, highlight))
        return change

    marked, bare = f"/articles/{article}", f"/articles/{twin}"
    try:
        with Served(db) as server:
            cookie = browser_cookie(server.url)
            with Connection(server.url, cookie) as a, Connection(server.url, cookie) as b:
                with_marks = expect(a.get(marked), 200, marked).body
                if with_marks.count(b'<mark class="hl ') < MARKS:
                    raise RuntimeError("the article's page does not show its 50 highlights")
                without = expect(b.get(bare), 200, bare).body
                kept = interleaved({"marked": (a, marked), "bare": (b, bare)}, OPENS, warmup=50)
                fresh = _after_changes({"marked": (a, marked, bump), "bare": (b, bare, bump)}, FRESH)
                painted = _after_changes({"marked": (a, marked, reshape(mine)), "bare": (b, bare, reshape(theirs))},
                                         FRESH)
    finally:
        writer.close()
    what = (f"a ready article ({size / 1000:.0f} KB of cleaned HTML; pages of {len(with_marks) / 1000:.0f} vs "
            f"{len(without) / 1000:.0f} KB) with {MARKS} highlights vs the same article with none")
    rows = []
    for results, how, target in (
            (kept, "kept (rendered before and current)", OPEN_TARGET),
            (fresh, "rendered afresh (the library's version raised before each request)", OPEN_TARGET),
            (painted, ("painted afresh (a highlight's color and length changed before each request, to a shape "
                       "it had last 388 changes ago: on this article for its requests, on another for the other's)"), None)):
        m, n = results["marked"], results["bare"]
        r50 = ratio(pct(m, 50), pct(n, 50))
        rows.append(Row("highlights", f"open {what}, {how}, sequential, interleaved, {len(m)} requests each",
                        versus(m, n, b_name="none"), f"p50 ≤ {target}×" if target else "report",
                        verdict(r50 <= target) if target else "reported"))
    return rows


def _page_rows() -> list[Row]:
    library = make_library(N)
    dbs = {n: work_copy(library, f"highlights{n}") for n in (MANY, FEW)}
    try:
        for n, db in dbs.items():
            _add_highlights(db, ready_ids(N), n, f"page-{n}")
        with Served(dbs[MANY]) as many, Served(dbs[FEW]) as few:
            conns = {n: Connection(s.url, browser_cookie(s.url)) for n, s in ((MANY, many), (FEW, few))}
            try:
                bodies = {n: expect(c.get("/highlights"), 200, "/highlights").body for n, c in conns.items()}
                timed = interleaved({n: (c, "/highlights") for n, c in conns.items()}, PAGE_REQUESTS, warmup=20)
            finally:
                for c in conns.values():
                    c.close()
    finally:
        for db in dbs.values():
            cleanup(db)
    r50 = ratio(pct(timed[MANY], 50), pct(timed[FEW], 50))
    return [Row("highlights", f"the highlights page, first page (50 highlights; {len(bodies[MANY]) / 1000:.0f} vs "
                              f"{len(bodies[FEW]) / 1000:.0f} KB), {MANY:,} vs {FEW} highlights in a {N:,}-article "
                              f"library, two servers interleaved, {PAGE_REQUESTS} requests each",
                versus(timed[MANY], timed[FEW]), f"p50 ≤ {PAGE_TARGET}×", verdict(r50 <= PAGE_TARGET))]


def run() -> list[Row]:
    db = work_copy(make_library(N), "highlights-open")
    try:
        rows = _open_rows(db)
    finally:
        cleanup(db)
    return rows + _page_rows()


if __name__ == "__main__":
    main_for(run)
