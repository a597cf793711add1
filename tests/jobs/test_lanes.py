"""The line a person can see: two lanes that cannot starve the normal one, positions that
are the real service order, honest wait estimates, and more workers draining faster."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from reader.core import running
from reader.feeds.refresh import refresh_feeds
from reader.core.waits import Timings, Work, describe_wait, estimate_waits

from ..helpers import app_client, rss, wait_for, worker_process
from ..loopback import LoopbackServer


async def _articles(reader, pages, count, sites=None, **route):
    """`count` articles in a feed on `pages`; article i on sites[i] if given (a server each)."""
    links = [(sites[i] if sites else pages).add_article(f"p{i}", **route) for i in range(count)]
    feed = pages.add("/feed.xml", rss([{"title": f"t{i}", "link": link} for i, link in enumerate(links)]),
                     headers={"Content-Type": "application/rss+xml"})
    feed_id, _ = await reader._store.add_feed(feed)
    [result] = await refresh_feeds(reader._store, reader._client, reader._pool, [await reader._store.get_feed(feed_id)],
                                   max_bytes=10**7, deadline=10)
    assert result.error is None
    by_url = {a["url"]: a["id"] for a in await reader._store.list_articles(limit=1000)}
    return [by_url[link] for link in links]


async def _drained(reader, count):
    stats = await reader._store.stats()
    return stats["cached"] + stats["failed"] == count and stats["running"] == 0


async def test_positions_reported_equal_the_order_workers_serve_with_both_lanes_and_several_workers(settings, pages):
    async with running(settings, worker=False) as reader:
        ids = await _articles(reader, pages, 12)
        for i, article_id in enumerate(ids):
            await reader._store.queue(article_id, "next" if i % 3 == 2 else "normal", next_lead=600)
        await reader._store.queue(ids[0], "next", next_lead=600)  # moving lanes is a tap too
        line = await reader._store.waiting()
        reported = [item["article_id"] for item in sorted(line, key=lambda item: item["position"])]
        one_by_one = {a: (await reader._store.get_article(a))["position"] for a in ids}
    assert [one_by_one[a] for a in reported] == list(range(1, 13))
    # every next-lane tap (0, 2, 5, 8, 11) was made within the lead: all of them go first
    assert reported[:5] == [ids[0], ids[2], ids[5], ids[8], ids[11]]

    with worker_process(settings, "--concurrency", "2"):
        async with running(settings, concurrency=2) as reader:
            await wait_for(lambda: _drained(reader, 12), timeout=60)
            runs = await reader._store.runs()
    assert [r["article_id"] for r in sorted(runs, key=lambda r: r["id"])] == reported
    assert {r["outcome"] for r in runs} == {"cached"}


async def test_a_stream_of_read_next_taps_cannot_starve_the_normal_lane(settings, pages):
    lead = 0.6
    settings = settings.replace(next_lead=lead)
    async with running(settings) as reader:
        ids = await _articles(reader, pages, 40, delay=0.1)
        normal, nexts = ids[:6], ids[6:]
        tapped: dict[int, float] = {}
        for article_id in normal:
            tapped[article_id] = time.time()
            await reader._store.queue(article_id, "normal", next_lead=lead)
        reader._worker.wake()
        for article_id in nexts:  # a read-next tap every 50 ms while the normal taps wait
            await asyncio.sleep(0.05)
            tapped[article_id] = time.time()
            await reader._store.queue(article_id, "next", next_lead=lead)
            reader._worker.wake()
        await wait_for(lambda: _drained(reader, 40), timeout=60)
        started = {r["article_id"]: r["started_at"] for r in await reader._store.runs()}

    # The promise: a normal article is never passed by a read-next tap made more than
    # `lead` seconds after it (20 ms slack for the clock read around the tap).
    for n in normal:
        for x in nexts:
            if tapped[x] > tapped[n] + lead + 0.02:
                assert started[n] < started[x], (n, x)
    # And the lane does something: some read-next tap was served before an earlier normal one.
    assert any(started[x] < started[n] and tapped[x] > tapped[n] for n in normal for x in nexts)


async def test_unqueueing_an_article_being_cleaned_finishes_and_keeps_the_work(settings, pages):
    gate = threading.Event()
    async with running(settings) as reader:
        [article_id] = await _articles(reader, pages, 1, gate=gate)
        await reader._store.queue(article_id)
        reader._worker.wake()
        await wait_for(lambda: pages.hits["/p0.html"] == 1)
        assert await reader._store.unqueue(article_id)
        assert (await reader._store.get_article(article_id))["state"] == "cleaning"
        gate.set()
        await wait_for(lambda: reader._store.get_content(article_id))
        runs = await reader._store.runs(article_id)
        article = await reader._store.get_article(article_id)
    assert article["state"] == "ready"
    assert [r["outcome"] for r in runs] == ["cached"]


async def test_three_worker_processes_and_the_app_worker_drain_sixty_slow_pages_once_each(settings, pages):
    # Twenty sites, taken in turn along the service order: the workers clean one article of
    # a site at a time, so pages all on one site would be drained in single file. With a
    # site's articles twenty places apart, none waits for its site and the order is exact.
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(LoopbackServer(f"127.0.1.{n}")) for n in range(1, 21)]
        service = sorted(range(60), key=lambda i: (i % 10 != 0, i))  # the next-lane taps first
        sites = {i: servers[place % 20] for place, i in enumerate(service)}
        async with running(settings, worker=False) as reader:
            ids = await _articles(reader, pages, 60, sites=sites, delay=0.3)
            for i, article_id in enumerate(ids):
                await reader._store.queue(article_id, "next" if i % 10 == 0 else "normal", next_lead=600)
            order = [item["article_id"] for item in await reader._store.waiting()]
        assert order == [ids[i] for i in service]
        with worker_process(settings), worker_process(settings), worker_process(settings):
            async with running(settings) as reader:
                await wait_for(lambda: _drained(reader, 60), timeout=120)
                runs = sorted(await reader._store.runs(), key=lambda r: r["id"])
    assert [r["article_id"] for r in runs] == order  # the lane rule held across processes
    assert all(sites[i].hits[f"/p{i}.html"] == 1 for i in range(60))
    assert len({r["worker"] for r in runs}) == 4  # every worker took part
    # Draining in parallel, shown by the ledger rather than a clock: at some moment at least
    # three extractions were running at once.
    events = sorted([(r["started_at"], 1) for r in runs] + [(r["finished_at"], -1) for r in runs])
    running_now = peak = 0
    for _, step in events:
        running_now += step
        peak = max(peak, running_now)
    assert peak >= 3


def test_wait_estimates_follow_each_sites_recent_times_the_work_ahead_and_the_workers():
    slow, fast = "http://slow.example/a", "http://fast.example/b"
    runs = [{"url": slow, "seconds": s} for s in (2.0, 2.0, 10.0, 2.0, 3.0)]  # median 2 s: one odd page does not skew it
    runs += [{"url": fast, "seconds": 0.1}] * 30
    timings = Timings.from_runs(runs)
    assert timings.expected(slow) == 2.0 and timings.expected(fast) == 0.1
    assert timings.expected("http://never.example/") is not None  # a new site: the overall median
    line = [Work(slow), Work(fast), Work(slow)]
    assert estimate_waits(line, timings, capacity=1) == [2.0, 2.1, 4.1]
    # two workers, one site at a time: the fast page goes on the free one at once, and the
    # second slow page waits for the first, however many workers there are
    assert estimate_waits(line, timings, capacity=2) == [2.0, 0.1, 4.0]
    # one being cleaned for 1.5 s of its 2: half a second is left of it
    assert estimate_waits([Work(slow, started_at=100.0), Work(slow)], timings, 1, now=101.5) == [0.5, 2.5]
    assert estimate_waits(line, Timings(), capacity=1) == [None] * 3  # no history: no made-up number
    assert estimate_waits(line, timings, capacity=0) == [None] * 3  # no worker running
    assert describe_wait(41.0) == "about 40 s"
    assert describe_wait(200.0) == "about 3 min"
    assert describe_wait(None) == ""


async def test_live_workers_register_their_capacity_and_leave_on_shutdown(settings):
    async with running(settings, worker=False) as reader:
        assert await reader._store.capacity() == 0
        async with running(settings, concurrency=3, refresher=False) as other:
            await wait_for(lambda: _capacity_is(other, 3))
        assert await reader._store.capacity() == 0


async def test_a_write_cancelled_at_any_moment_leaves_the_next_write_working(settings):
    """A worker's shutdown cancels its heartbeat wherever it is. Cancelled while waiting
    for BEGIN, the transaction stayed open on the connection (SQLite's thread ran the BEGIN
    anyway), so the worker's goodbye failed and its capacity stayed counted: raced here by
    cancelling heartbeats at every moment of their write."""
    async with running(settings, worker=False) as reader:
        store = reader._store
        for attempt in range(300):
            beat = asyncio.create_task(store.worker_alive("w", 3, ttl=60))
            for _ in range(attempt % 6):  # each step of the write is one await of the loop
                await asyncio.sleep(0)
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)
            await store.worker_gone("w")  # raised "cannot start a transaction within a transaction"
            assert await store.capacity() == 0


async def _capacity_is(reader, n):
    return await reader._store.capacity() == n


async def test_cards_and_the_api_estimate_the_wait_from_the_ledger_and_the_workers(settings, pages):
    gate = threading.Event()
    async with app_client(settings.replace(serve_workers=1)) as client:
        reader = client.app.state.reader
        ids = await _articles(reader, pages, 5)
        for article_id in ids[:2]:  # some history in the ledger
            assert (await client.get(f"/api/articles/{article_id}/content")).status_code == 200
        pages.add_article("p2", gate=gate)  # the next one holds the only worker
        await client.post(f"/api/articles/{ids[2]}/queue")
        await wait_for(lambda: pages.hits["/p2.html"] == 1)
        tapped = [(await client.post(f"/api/articles/{i}/queue")).json() for i in ids[3:]]
        assert await reader._store.capacity() == 1
        expected = [t["wait_seconds"] for t in tapped]
        assert 0 < expected[0] < expected[1]  # the second waits for the first as well
        page = (await client.get("/queue")).text
        gate.set()
    # /queue shows the line in service order: the one being cleaned, then the waiting ones
    positions = [page.index(f'id="card-{i}"') for i in ids[2:]]
    assert positions == sorted(positions)
    assert "cleaning…" in page and "#1 in line" in page and "#2 in line" in page
    assert f"ready in {describe_wait(expected[0])}" in page
    # unqueue and lane moves on the waiting cards (the lane move a button of the page's one form)
    assert page.count('action="/articles/') + page.count('formaction="/articles/') >= 4


async def test_the_queue_page_says_when_no_worker_is_running(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        ids = await _articles(client.app.state.reader, pages, 1)
        await client.post(f"/api/articles/{ids[0]}/queue", json={"lane": "next"})
        page = (await client.get("/queue")).text
    assert "#1 in line (queue first)" in page and "no worker is running" in page
    assert f'action="/articles/{ids[0]}/unqueue"' in page
    # a queue-first card can go back in line, with or without JavaScript
    assert f'formaction="/articles/{ids[0]}/queue" hx-post="/articles/{ids[0]}/queue" name="lane" value="normal"' in page
