"""The wait a card promises is the wait a person gets, on a slow site too.

One median over every recent run made a slow site's articles look instant next to fast
ones ("#7 in line · ready in a few seconds", ready 35 s later). Here a fast site has most
of the history and a slow one (a loopback server that answers in 2 s) a single run; then
several articles of the slow site are queued behind each other, and each estimate shown
at the tap is compared with when that article really became ready.
"""

from __future__ import annotations

import sqlite3
import time

from reader.store import Store
from reader.store.ledger import RECENT_TIMINGS

from ..helpers import app_client, wait_for
from ..loopback import LoopbackServer

SLOW = 2.0  # seconds the slow site takes to answer


async def test_estimates_on_a_slow_site_land_within_half_of_the_truth(settings, pages):
    with LoopbackServer("127.0.0.2") as slow:
        async with app_client(settings) as client:
            store = client.app.state.reader._store
            fast_ids = [(await store.save_link(pages.add_article(f"f{i}")))[0] for i in range(8)]
            slow_ids = [(await store.save_link(slow.add_article(f"s{i}", delay=SLOW)))[0] for i in range(5)]
            for article_id in fast_ids + slow_ids[:1]:  # history: mostly fast, one slow run
                assert (await client.get(f"/api/articles/{article_id}/content")).status_code == 200

            promised: dict[int, float] = {}
            tapped_at: dict[int, float] = {}
            for article_id in slow_ids[1:]:
                tapped_at[article_id] = time.monotonic()
                answer = (await client.post(f"/api/articles/{article_id}/queue")).json()
                assert answer["state"] in ("queued", "cleaning")
                if answer["state"] == "queued":
                    promised[article_id] = answer["wait_seconds"]

            ready_at: dict[int, float] = {}

            async def all_ready() -> bool:
                for article_id in tapped_at:
                    if article_id not in ready_at:
                        state = (await client.get(f"/api/articles/{article_id}")).json()["state"]
                        if state == "ready":
                            ready_at[article_id] = time.monotonic()
                return len(ready_at) == len(tapped_at)

            await wait_for(all_ready, timeout=60, interval=0.05)

    assert len(promised) >= 3  # the line really stood behind each other
    for article_id, estimate in promised.items():
        truth = ready_at[article_id] - tapped_at[article_id]
        assert 0.5 * truth <= estimate <= 1.5 * truth, (article_id, estimate, truth)


async def test_the_latest_runs_are_read_from_the_newest_end_of_an_index(tmp_path):
    """The estimates read the latest finished runs on every page with a queued card: the
    newest few, not a sort of the whole ledger (38 ms at 4,000 runs)."""
    db = tmp_path / "ledger.db"
    async with await Store.open(db):
        pass
    with sqlite3.connect(db) as connection:
        connection.executemany(
            "INSERT INTO runs (article_id, lane, worker, started_at, finished_at, outcome) VALUES (?, 'queue', 'w', ?, ?, ?)",
            [(i, 0, i if i % 10 else None, ("cached", "failed", "abandoned")[i % 3] if i % 10 else None)
             for i in range(1, 3001)])
        plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + RECENT_TIMINGS, (200,))]
    connection.close()
    assert plan[0] == "SCAN r USING INDEX runs_by_finished" and not any("TEMP B-TREE" in step for step in plan), plan
    async with await Store.open(db) as store:
        latest = await store.recent_timings(limit=4)
    # newest first, and only finished runs that cleaned or failed: 3000 is still running,
    # 2999 and 2996 were abandoned
    assert [row["seconds"] for row in latest] == [2998, 2997, 2995, 2994]
