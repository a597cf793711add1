"""Native apps at scale (the Google Reader API, reader/web/sync/): NetNewsWire's first
sync of the 100,000-article library (the ids of the reading list, of the unread and of
the starred, every page followed, then the contents of 1,000 items in batches of 250),
its incremental sync after 50 new items, and the two calls against their targets:
`stream/items/ids` with n=10000 at 100,000 articles against the same call at 10,000 (both
answer 10,000 ids; against 1,000 articles the small side answered a tenth as many), n=1000
at 100,000 against 1,000, and
a batch of 250 contents against the browse page of 250 cards on the same server.

Each server is signed in once with an app password made through the core; the lean
client (benchmarks/client.py) sends the token as NetNewsWire does. Contents are asked by
GET with the ids in the query (the API takes both; the lean client times GETs).

    python -m benchmarks.sync_scale
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import time
from pathlib import Path

import httpx

from reader.core import sync
from reader.settings import Settings
from reader.web.app import running

from .client import Connection, expect, interleaved
from .common import Row, Served, cleanup, main_for, pct, ratio, verdict, versus, work_copy
from .make_library import make_library
from .open_ready import browser_cookie

BIG, MID, SMALL = 100_000, 10_000, 1_000
REQUESTS = 40  # a page of 10,000 ids is a large answer: fewer rounds than the pages'
IDS_TARGET, CONTENTS_TARGET = 1.5, 2.0
BATCH = 250
READING_LIST = "user/-/state/com.google/reading-list"
API = "/reader/api/0"


def _password(db: Path) -> str:
    async def make() -> str:
        async with running(Settings(db=db, extract_processes=0, refresh_interval=0), worker=False,
                           refresher=False) as reader:
            _, password = await sync.add_app_password(reader, "bench")
        return password

    return asyncio.run(make())


def _token(base: str, password: str) -> dict[str, str]:
    answer = httpx.post(base + "/accounts/ClientLogin", data={"Email": "bench", "Passwd": password}, timeout=30)
    answer.raise_for_status()
    token = answer.text.split("Auth=", 1)[1].strip()
    return {"Authorization": f"GoogleLogin auth={token}"}


def _ids(conn: Connection, query: str) -> tuple[list[int], float]:
    """Every id of a stream, following continuations: (ids, seconds)."""
    found: list[int] = []
    seconds = 0.0
    c = ""
    while True:
        answer = expect(conn.get(f"{API}/stream/items/ids?{query}{c}"), 200, query)
        seconds += answer.seconds
        body = json.loads(answer.body)
        found += [int(r["id"]) for r in body["itemRefs"]]
        if "continuation" not in body:
            return found, seconds
        c = f"&c={body['continuation']}"


def _contents_path(ids: list[int]) -> str:
    return f"{API}/stream/items/contents?" + "&".join(f"i={i}" for i in ids)


def _netnewswire(conn: Connection, since: int | None = None) -> tuple[float, int]:
    """One sync as NetNewsWire makes it: (seconds, items whose contents were fetched)."""
    ot = f"&ot={since}" if since is not None else ""
    everything, t1 = _ids(conn, f"s={READING_LIST}&n=10000{ot}")
    _, t2 = _ids(conn, f"s={READING_LIST}&xt=user/-/state/com.google/read&n=10000{ot}")
    _, t3 = _ids(conn, f"s=user/-/state/com.google/starred&n=10000{ot}")
    wanted = everything[:1000]
    t4 = 0.0
    for start in range(0, len(wanted), BATCH):
        t4 += expect(conn.get(_contents_path(wanted[start:start + BATCH])), 200, "contents").seconds
    return t1 + t2 + t3 + t4, len(wanted)


def _add_new(db: Path, count: int) -> None:
    """`count` new articles arriving in feed 1, as a refresh stores them."""
    with sqlite3.connect(db) as conn:
        top = conn.execute("SELECT max(id) FROM articles").fetchone()[0]
        now = time.time()
        conn.executemany(
            "INSERT INTO articles (id, feed_id, guid, url, title, summary, sort_at, added_at) VALUES (?, 1, ?, ?, ?,"
            " '<p>New.</p>', ?, ?)",
            [(top + k, f"new-{k}", f"http://127.0.0.1:9/new/{k}.html", f"New {k}", now, now)
             for k in range(1, count + 1)])
    conn.close()


def run() -> list[Row]:
    dbs = {n: work_copy(make_library(n), f"sync{n}") for n in (BIG, MID, SMALL)}
    try:
        passwords = {n: _password(db) for n, db in dbs.items()}
        with Served(dbs[BIG], READER_PAGE_SIZE=str(BATCH)) as big, Served(dbs[MID]) as mid, \
                Served(dbs[SMALL]) as small:
            conns = {n: Connection(s.url, _token(s.url, passwords[n]))
                     for n, s in ((BIG, big), (MID, mid), (SMALL, small))}
            # the same size of answer from both: 10,000 ids, which the 10,000-article library fills
            ids_path = f"{API}/stream/items/ids?s={READING_LIST}&n=10000"
            timed = interleaved({str(n): (conns[n], ids_path) for n in (BIG, MID)}, REQUESTS, warmup=5)
            ids_big, ids_mid = timed[str(BIG)], timed[str(MID)]
            # the same size of answer from both: a page of 1,000, which the small library fills too
            page_path = f"{API}/stream/items/ids?s={READING_LIST}&n=1000"
            timed = interleaved({str(n): (conns[n], page_path) for n in (BIG, SMALL)}, REQUESTS, warmup=5)
            page_big, page_small = timed[str(BIG)], timed[str(SMALL)]

            page_of_ids = expect(conns[BIG].get(f"{API}/stream/items/ids?s={READING_LIST}&n={BATCH}"), 200, "ids")
            first_250 = [int(r["id"]) for r in json.loads(page_of_ids.body)["itemRefs"]]
            browse = Connection(big.url, browser_cookie(big.url))
            timed = interleaved({"contents": (conns[BIG], _contents_path(first_250)), "browse": (browse, "/")},
                                REQUESTS, warmup=5)
            contents, page = timed["contents"], timed["browse"]
            browse.close()

            firsts = [_netnewswire(conns[BIG])[0] for _ in range(3)]
            since = int(time.time()) - 1
            _add_new(dbs[BIG], 50)
            incremental = [_netnewswire(conns[BIG], since) for _ in range(3)]
            for conn in conns.values():
                conn.close()
    finally:
        for db in dbs.values():
            cleanup(db)
    fetched = incremental[0][1]
    return [
        Row("sync_scale", f"stream/items/ids, n=10000 (the reading list: both answer 10,000 ids), {BIG:,} vs"
            f" {MID:,} articles, interleaved, {len(ids_big)} requests each",
            versus(ids_big, ids_mid), f"p50 ≤ {IDS_TARGET}×", verdict(ratio(pct(ids_big, 50), pct(ids_mid, 50))
                                                                     <= IDS_TARGET)),
        Row("sync_scale", f"stream/items/ids, n=1000 (the reading list: both answer 1,000 ids), {BIG:,} vs"
            f" {SMALL:,} articles, interleaved, {len(page_big)} requests each",
            versus(page_big, page_small), f"p50 ≤ {IDS_TARGET}×",
            verdict(ratio(pct(page_big, 50), pct(page_small, 50)) <= IDS_TARGET)),
        Row("sync_scale", f"stream/items/contents of {BATCH} items vs the browse page of {BATCH} cards, {BIG:,}"
            f" articles, interleaved, {len(contents)} requests each",
            versus(contents, page, b_name="browse"), f"p50 ≤ {CONTENTS_TARGET}×",
            verdict(ratio(pct(contents, 50), pct(page, 50)) <= CONTENTS_TARGET)),
        Row("sync_scale", f"NetNewsWire's first sync at {BIG:,} articles (ids of the reading list, unread and starred,"
            f" every page; contents of 1,000 in batches of {BATCH}), median of 3",
            f"{statistics.median(firsts):.2f} s", "reported", "reported"),
        Row("sync_scale", f"NetNewsWire's incremental sync after 50 new items (the same calls with ot; contents of"
            f" the {fetched} new), median of 3",
            f"{statistics.median(t for t, _ in incremental) * 1000:.0f} ms", "reported", "reported"),
    ]


if __name__ == "__main__":
    main_for(run)
