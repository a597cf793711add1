"""Feeds against a peer: refresh 500 feeds of 20 items served on loopback (each with an ETag),
then refresh them again (every feed answers 304), with reader against lemon24's
`reader` library (PyPI `reader` + `sgmllib3k`, in its own venv under
benchmarks/results/peer-venv, run by that venv's python: same import name as ours).
Each side runs in its own fresh process and times only its two refresh calls; ours is
reader.feeds.refresh_feeds over every feed, inside reader.app.running (what
`reader refresh` does); theirs is update_feeds() then update_feeds(scheduled=False).

    python -m benchmarks.feeds_peer
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from .common import BENCH_DIR, PYTHON, RESULTS, Row, bench_env, cleanup, main_for, ratio, verdict
from .pagesite import page_site

FEEDS = 500
ITEMS = 20
PEER_VENV = RESULTS / "peer-venv"
PEER_PYTHON = PEER_VENV / "bin" / "python"
TIMEOUT = 240

OURS = r"""
import asyncio, json, sys, time
from reader.core import running
from reader.feeds.refresh import refresh_feeds
from reader.settings import Settings

async def main(db, base, feeds):
    settings = Settings.from_env()
    async with running(settings, role="cli", worker=False, refresher=False) as r:
        for f in range(feeds):
            await r._store.add_feed(f"{base}/f/{f}.xml")
        out = {}
        for name in ("first", "second"):
            t = time.perf_counter()
            results = await refresh_feeds(r._store, r._client, r._pool, await r._store.list_feeds(),
                                          max_bytes=settings.max_page_bytes, deadline=settings.fetch_timeout)
            out[name] = time.perf_counter() - t
            out[name + "_errors"] = sum(1 for x in results if x.error)
            out[name + "_not_modified"] = sum(1 for x in results if x.not_modified)
        out["entries"] = len(await r._store.list_articles(limit=1_000_000))
    print(json.dumps(out))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""

THEIRS = r"""
import json, sys, time
from reader import make_reader

db, base, feeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
reader = make_reader(db)
for f in range(feeds):
    reader.add_feed(f"{base}/f/{f}.xml")
out = {}
t = time.perf_counter()
reader.update_feeds()
out["first"] = time.perf_counter() - t
t = time.perf_counter()
reader.update_feeds(scheduled=False)
out["second"] = time.perf_counter() - t
out["entries"] = reader.get_entry_counts().total
out["errors"] = sum(1 for f in reader.get_feeds() if f.last_exception)
out["version"] = __import__("reader").__version__
print(json.dumps(out))
"""


def ensure_peer() -> str | None:
    """Install the peer in its own venv (once). Returns why it is unavailable, or None."""
    if PEER_PYTHON.exists():
        ok = subprocess.run([str(PEER_PYTHON), "-c", "import reader, sgmllib"], capture_output=True)
        if ok.returncode == 0:
            return None
    try:
        subprocess.run([PYTHON, "-m", "venv", str(PEER_VENV)], check=True, capture_output=True, timeout=120)
        subprocess.run([str(PEER_VENV / "bin" / "pip"), "install", "-q", "reader", "sgmllib3k"], check=True,
                       capture_output=True, text=True, timeout=300)
    except (subprocess.SubprocessError, OSError) as exc:
        return f"could not install the peer: {getattr(exc, 'stderr', '') or exc}"[:300]
    return None


def _side(python: str, script: str, db: Path, base: str, env: dict) -> dict:
    done = subprocess.run([python, "-c", script, str(db), base, str(FEEDS)], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise RuntimeError(f"{python} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run() -> list[Row]:
    problem = ensure_peer()
    work = Path(tempfile.mkdtemp(prefix="bench-feeds-"))
    try:
        with page_site(1, 0, feeds=FEEDS, items=ITEMS) as (base, _, hits):
            ours_db = work / "ours.db"
            env = bench_env(ours_db)
            env["PYTHONPATH"] = str(BENCH_DIR.parent)
            ours = _side(PYTHON, OURS, ours_db, base, env)
            h0 = hits()
            theirs = None
            if problem is None:
                peer_env = {k: v for k, v in env.items() if not k.startswith("READER_") and k != "PYTHONPATH"}
                theirs = _side(str(PEER_PYTHON), THEIRS, work / "theirs.sqlite", base, peer_env)
            h1 = hits()
    finally:
        cleanup(work / "x")
    ours_304 = h0.get("__304", 0)
    theirs_304 = h1.get("__304", 0) - ours_304
    rows = []
    if theirs is None:
        for name in ("first", "second"):
            rows.append(Row("feeds_peer", f"refresh {FEEDS} feeds × {ITEMS} items, {name} pass", f"ours {ours[name]:.2f} s",
                            "vs peer", "failed", problem or ""))
        return rows
    for name, target in (("first", 0.75), ("second", 1.0)):
        r = ratio(ours[name], theirs[name])
        rows.append(Row(
            "6", f"refresh {FEEDS} feeds × {ITEMS} items, {name} pass"
                 + (" (all answered 304 by ETag)" if name == "second" else "")
                 + f", vs lemon24 reader {theirs['version']}",
            f"**{r:.2f}×** (ours {ours[name]:.2f} s vs theirs {theirs[name]:.2f} s)",
            f"≤ {target}× theirs", verdict(r <= target)))
    rows[-1].note = (f"entries stored: ours {ours['entries']}, theirs {theirs['entries']}; errors: ours "
                     f"{ours['first_errors']}+{ours['second_errors']}, theirs {theirs['errors']}; 304 answers: ours "
                     f"{ours_304} (counted by us {ours['second_not_modified']}), theirs {theirs_304}")
    return rows


if __name__ == "__main__":
    main_for(run)
