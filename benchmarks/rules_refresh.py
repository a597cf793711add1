"""Rules (issue 25): what 200 active rules cost a refresh, what applying one to 100,000
stored articles takes, and the first browse page with 30 % of the library hidden.

* refresh 500 feeds × 20 items served on loopback, first pass, with 200 rules (title and
  summary words, summary and URL regexes, authors, categories, in every scope kind)
  against the same refresh with none; each side in a fresh process on a fresh file, run
  three times in turns (none, rules, ...), the fastest of each side compared, and the
  time the rules' decisions took within it, which the shared machine's noise cannot move;
* apply one words rule to 100,000 stored articles (30 % of them match): wall time of
  `Reader.apply_rule`, the count first and then the change;
* the first page of the browse list (`Reader.articles`, in process, 50 cards) with 30 %
  of the 100,000 hidden against the same page before the rule hid them, interleaved.

    python -m benchmarks.rules_refresh
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from .common import BENCH_DIR, PYTHON, Row, bench_env, cleanup, main_for, ratio, verdict
from .pagesite import page_site

FEEDS = 500
ITEMS = 20
RULES = 200
STORED = 100_000
TIMEOUT = 300
TURNS = 3

REFRESH = r"""
import asyncio, json, sys, time
from reader.core import running
from reader.feeds.refresh import refresh_feeds
from reader.settings import Settings
import reader.feeds.refresh as refresh

# the time the rules' decisions take, apart from the refresh around them (the fetches and
# the inserts, whose noise on a shared machine is larger than the rules' whole cost)
decide, spent = refresh.decide, [0.0]
def timed(*args):
    t = time.perf_counter()
    decide(*args)
    spent[0] += time.perf_counter() - t
refresh.decide = timed

async def main(base, feeds, rules):
    settings = Settings.from_env()
    async with running(settings, role="cli", worker=False, refresher=False) as r:
        for f in range(feeds):
            await r._store.add_feed(f"{base}/f/{f}.xml")
        await r.set_folder(1, "News")
        for i in range(rules):
            kind = i % 5
            if kind == 0:
                fields = {"field": "title", "pattern": f"nomatch{i} word{i}"}
            elif kind == 1:
                fields = {"field": "summary", "pattern": f"absent{i}"}
            elif kind == 2:
                fields = {"field": "summary", "match": "regex", "pattern": f"\\bspons{i}(ored)?\\b"}
            elif kind == 3:
                fields = {"field": "url", "match": "regex", "pattern": f"/never/{i}/", "scope": "folder:News"}
            else:
                fields = {"field": ("author", "category")[i % 2], "pattern": f"nobody{i}",
                          "scope": f"feed:{1 + i % feeds}", "action": "tag:t"}
            await r.add_rule(fields)
        t = time.perf_counter()
        results = await refresh_feeds(r._store, r._client, r._pool, await r._store.list_feeds(),
                                      max_bytes=settings.max_page_bytes, deadline=settings.fetch_timeout)
        took = time.perf_counter() - t
        stored = len(await r._store.list_articles(limit=1_000_000))
    print(json.dumps({"seconds": took, "decide": spent[0], "errors": sum(1 for x in results if x.error), "stored": stored}))

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""

STORED_SCRIPT = r"""
import asyncio, json, sqlite3, sys, time
from reader.core import running
from reader.settings import Settings

async def main(db, n):
    settings = Settings.from_env()
    async with running(settings, role="cli", worker=False, refresher=False) as r:
        for f in range(200):
            await r._store.add_feed(f"http://127.0.0.1:9/f/{f}.xml")
    words = ["river", "market", "garden", "signal", "harbour", "engine", "winter", "lantern", "orbit", "meadow"]
    with sqlite3.connect(db) as c:
        c.executemany(
            "INSERT INTO articles (feed_id, guid, url, title, summary, summary_text, author, sort_at, added_at)"
            " VALUES (?, ?, ?, ?, '', ?, 'someone', ?, ?)",
            [(1 + i % 200, str(i), f"http://127.0.0.1:9/a/{i}", f"{words[i % 10]} {words[(i // 10) % 10]} story {i}",
              ("sponsored " if i % 10 < 3 else "") + " ".join(words) * 20, 1.7e9 + i, 1.7e9 + i)
             for i in range(n)])
    c.close()
    async with running(settings, role="cli", worker=False, refresher=False) as r:
        rule = await r.add_rule({"field": "summary", "pattern": "sponsored"})

        async def page():
            t = time.perf_counter()
            await r.articles(limit=50)
            return time.perf_counter() - t

        before = [await page() for _ in range(5)]  # warm
        t = time.perf_counter()
        count = (await r.apply_rule(rule.id, dry_run=True)).count
        counted = time.perf_counter() - t
        # the page with none hidden and with 30 % hidden, in turns: the rule is applied,
        # undone and applied again between rounds
        shown, hidden = [], []
        applied_times = []
        for _ in range(3):
            shown += [await page() for _ in range(20)]
            t = time.perf_counter()
            applied = await r.apply_rule(rule.id, dry_run=False)
            applied_times.append(time.perf_counter() - t)
            hidden += [await page() for _ in range(20)]
            await r.undo_rule(rule.id, applied.stamp)
    shown.sort(); hidden.sort()
    print(json.dumps({"count": count, "counted": counted, "applied": min(applied_times),
                      "applied_all": applied_times, "changed": applied.count,
                      "shown_p50": shown[len(shown) // 2], "hidden_p50": hidden[len(hidden) // 2]}))

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def _run(script: str, db: Path, *args: str) -> dict:
    env = bench_env(db)
    env["PYTHONPATH"] = str(BENCH_DIR.parent)
    done = subprocess.run([PYTHON, "-c", script, *args], capture_output=True, text=True, timeout=TIMEOUT, check=False,
                          env=env, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise RuntimeError(f"failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run() -> list[Row]:
    work = Path(tempfile.mkdtemp(prefix="bench-rules-"))
    times: dict[int, list[float]] = {0: [], RULES: []}
    decided: list[float] = []
    stored: dict[int, int] = {}
    try:
        with page_site(1, 0, feeds=FEEDS, items=ITEMS) as (base, _, _hits):
            for turn in range(TURNS):
                for rules in (0, RULES):
                    db = work / f"refresh-{rules}-{turn}" / "reader.db"
                    db.parent.mkdir()
                    out = _run(REFRESH, db, base, str(FEEDS), str(rules))
                    if out["errors"]:
                        raise RuntimeError(f"{out['errors']} feeds failed")
                    times[rules].append(out["seconds"])
                    if rules:
                        decided.append(out["decide"])
                    stored[rules] = out["stored"]
                    cleanup(db)
        big_db = work / "stored" / "reader.db"
        big_db.parent.mkdir()
        big = _run(STORED_SCRIPT, big_db, str(big_db), str(STORED))
    finally:
        cleanup(work / "x")
    none, some = min(times[0]), min(times[RULES])
    r = ratio(some, none)
    rows = [
        Row("rules_refresh", f"refresh {FEEDS} feeds × {ITEMS} items, first pass, {RULES} rules vs none, fresh"
                             f" process each, {TURNS} turns (the fastest of each)",
            f"**{r:.2f}×** ({some:.2f} s vs {none:.2f} s)", "≤ 1.2×", verdict(r <= 1.2),
            note=f"all runs: none {', '.join(f'{t:.2f}' for t in times[0])} s; {RULES} rules "
                 f"{', '.join(f'{t:.2f}' for t in times[RULES])} s; articles stored {stored[0]} and {stored[RULES]}"),
        Row("rules_refresh", f"CPU of the {RULES} rules' decisions within that refresh ({FEEDS * ITEMS:,} entries)",
            f"**{min(decided):.2f} s** ({min(decided) / none * 100:.1f} % of the refresh without rules)",
            "report", "reported"),
        Row("rules_refresh", f"apply a words rule to {STORED:,} stored articles ({big['changed']:,} match)",
            f"**{big['applied']:.2f} s** (count first: {big['counted']:.2f} s)", "≤ 10 s",
            verdict(big["applied"] <= 10)),
    ]
    b = ratio(big["hidden_p50"], big["shown_p50"])
    rows.append(Row("rules_refresh", f"first browse page (Reader.articles, 50 cards, in process) with 30 % of"
                                     f" {STORED:,} hidden vs none hidden, 60 reads each in 3 rounds",
                    f"p50 **{b:.2f}×** ({big['hidden_p50'] * 1000:.2f} ms vs {big['shown_p50'] * 1000:.2f} ms)",
                    "≤ 1.5×", verdict(b <= 1.5)))
    return rows


if __name__ == "__main__":
    main_for(run)
