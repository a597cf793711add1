"""Two lanes, one claim: races between direct opens, the in-process worker and worker
processes; readers who leave mid-extraction; holders that die. Races are tested by
racing, against real SQLite files, real page servers and real processes."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time

import httpx
import pytest

from reader.core import running
from reader.jobs.cleaning import ArticleFailed
from reader.store import Store

from ..helpers import LiveServer, app_client, rss, wait_for, worker_process


async def _subscribe(reader, pages, slugs, **route):
    """A feed on the page server whose items are pages on it; returns article ids by slug."""
    links = {slug: pages.add_article(slug, **route) for slug in slugs}
    feed = pages.add("/feed.xml", rss([{"title": s, "link": link} for s, link in links.items()]),
                     headers={"Content-Type": "application/rss+xml"})
    feed_id, _ = await reader._store.add_feed(feed)
    from reader.feeds.refresh import refresh_feeds

    [result] = await refresh_feeds(reader._store, reader._client, reader._pool, [await reader._store.get_feed(feed_id)],
                                   max_bytes=10**7, deadline=10)
    assert result.error is None
    articles = await reader._store.list_articles(limit=1000)
    by_url = {a["url"]: a["id"] for a in articles}
    return {slug: by_url[link] for slug, link in links.items()}


async def _runs(store: Store, article_id: int) -> list[dict]:
    return await store.runs(article_id)


async def test_fifty_opens_a_worker_and_a_worker_process_race_and_extract_once(settings, pages):
    async with running(settings) as reader:
        ids = await _subscribe(reader, pages, ["contested", "sentinel"], delay=0.5)
        article_id = ids["contested"]
        with worker_process(settings):
            async with app_client(settings.replace(serve_workers=0)) as client:
                # Everyone at once: a tap (the in-process worker and the worker process both
                # look at the queue) and fifty readers opening the article directly.
                opens = [client.get(f"/api/articles/{article_id}/content") for _ in range(50)]
                tap = client.post(f"/api/articles/{article_id}/queue")
                responses = await asyncio.gather(tap, *opens)
                reader._worker.wake()
                bodies = [r.json() for r in responses[1:]]
            assert all(r.status_code == 200 for r in responses[1:]), {r.status_code for r in responses}
            assert len({b["html"] for b in bodies}) == 1
            assert "marker-contested" in bodies[0]["text"]
            # The line is served after the race (a later tap is cleaned), and still nobody
            # extracted the contested article a second time.
            await reader._store.queue(ids["sentinel"])
            await wait_for(lambda: reader._store.get_content(ids["sentinel"]), timeout=30)
        runs = await _runs(reader._store, article_id)
    assert [r["outcome"] for r in runs] == ["cached"]
    assert pages.hits["/contested.html"] == 1


async def test_closing_the_reader_mid_extraction_still_caches(settings, pages):
    gate = threading.Event()
    async with running(settings.replace(serve_workers=0), worker=False) as reader:
        ids = await _subscribe(reader, pages, ["slow"], gate=gate)
        opening = asyncio.create_task(reader._cleaner.open(ids["slow"]))
        await wait_for(lambda: pages.hits["/slow.html"] == 1)
        opening.cancel()  # the reader closes the page
        with pytest.raises(asyncio.CancelledError):
            await opening
        gate.set()
        await wait_for(lambda: reader._store.get_content(ids["slow"]))
        runs = await _runs(reader._store, ids["slow"])
    assert [r["outcome"] for r in runs] == ["cached"]


def test_a_client_disconnecting_from_uvicorn_mid_extraction_still_caches(settings, pages):
    gate = threading.Event()

    async def setup():
        async with running(settings, worker=False, refresher=False) as reader:
            return await _subscribe(reader, pages, ["wire"], gate=gate)

    ids = asyncio.run(setup())
    article_id = ids["wire"]
    with LiveServer(settings.replace(serve_workers=0)) as server:

        async def open_then_leave():
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                request = asyncio.create_task(client.get(f"/articles/{article_id}"))
                await wait_for(lambda: pages.hits["/wire.html"] == 1)
                request.cancel()  # the browser tab closes: the connection goes away
                with pytest.raises(asyncio.CancelledError):
                    await request
            gate.set()
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                await wait_for(
                    lambda: _state(client, article_id, "ready"), timeout=30, interval=0.1)
                return (await client.get("/api/stats")).json()

        stats = asyncio.run(open_then_leave())
    assert stats["started"] == stats["cached"] == 1
    assert pages.hits["/wire.html"] == 1


async def _state(client, article_id, state):
    return (await client.get(f"/api/articles/{article_id}")).json()["state"] == state


async def test_a_dead_holders_claim_blocks_an_open_only_until_it_expires(settings, pages):
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["orphan"])
        article_id = ids["orphan"]
        dead = await reader._store.claim(article_id, "crashed-process", ttl=0.6)
        assert dead is not None
        started = time.monotonic()
        content = await reader._cleaner.open(article_id)
        waited = time.monotonic() - started
        runs = await _runs(reader._store, article_id)
    assert "marker-orphan" in content["text"]
    assert waited >= 0.5  # it waited for the expiry rather than racing the holder
    assert [r["outcome"] for r in runs] == ["abandoned", "cached"]
    assert pages.hits["/orphan.html"] == 1


async def test_a_dead_holders_claim_on_a_queued_article_passes_to_the_worker_after_expiry(settings, pages):
    async with running(settings) as reader:
        ids = await _subscribe(reader, pages, ["queued-orphan"])
        article_id = ids["queued-orphan"]
        assert await reader._store.claim(article_id, "crashed-process", ttl=0.6)
        await reader._store.queue(article_id)
        reader._worker.wake()
        assert (await reader._store.get_article(article_id))["state"] == "cleaning"
        await wait_for(lambda: reader._store.get_content(article_id), timeout=10)
        runs = await _runs(reader._store, article_id)
    assert [(r["outcome"], r["lane"]) for r in runs] == [("abandoned", "direct"), ("cached", "queue")]


async def test_a_live_holder_renews_its_claim_and_is_never_robbed(settings, pages):
    # 1.5 s: long enough that a machine loaded by other test processes renews in time
    # (0.6 s was once too short for that, and the test failed for it alone)
    settings = settings.replace(claim_ttl=1.5)
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["long"], delay=4.5)  # extraction outlasts the ttl 3x
        article_id = ids["long"]
        first = asyncio.create_task(reader._cleaner.open(article_id))
        await wait_for(lambda: pages.hits["/long.html"] == 1)
        await asyncio.sleep(2.0)  # past the original expiry: only renewal keeps the claim
        async with running(settings, worker=False, refresher=False) as other:  # another "process"
            second = await other._cleaner.open(article_id)
        assert (await first)["html"] == second["html"]
        runs = await _runs(reader._store, article_id)
    assert [r["outcome"] for r in runs] == ["cached"]
    assert pages.hits["/long.html"] == 1


async def test_a_run_whose_claim_passed_on_cannot_renew_or_release_the_new_holders(settings, pages):
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["fenced"])
        article_id = ids["fenced"]
        stale = await reader._store.claim(article_id, "slow-holder", ttl=0.2)
        await asyncio.sleep(0.3)
        fresh = await reader._store.claim(article_id, "next-holder", ttl=30)
        assert fresh is not None and fresh.id != stale.id
        assert not await reader._store.renew(stale, 30)
        await reader._store.release(stale)
        holder = await reader._store.claim_holder(article_id)
        assert holder["run_id"] == fresh.id
        assert await reader._store.claim(article_id, "third", ttl=30) is None
        runs = {r["id"]: r["outcome"] for r in await _runs(reader._store, article_id)}
    assert runs == {stale.id: "abandoned", fresh.id: None}


async def test_a_worker_process_killed_mid_extraction_is_cleaned_exactly_once_more(settings, pages):
    gate = threading.Event()
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["killed"], gate=gate)
        article_id = ids["killed"]
        with worker_process(settings, ttl=1.0) as proc:
            await reader._store.queue(article_id)
            await wait_for(lambda: pages.hits["/killed.html"] == 1, timeout=20)
            proc.kill()  # SIGKILL: no cleanup, the claim stays behind
            proc.wait()
        gate.set()
        assert (await reader._store.get_article(article_id))["state"] in ("cleaning", "queued")
    async with running(settings) as reader:  # restart: the tap is still in line
        await wait_for(lambda: reader._store.get_content(article_id), timeout=20)
        runs = await _runs(reader._store, article_id)
        stats = await reader._store.stats()
    assert [r["outcome"] for r in runs] == ["abandoned", "cached"]
    assert stats["queued"] == 0
    assert pages.hits["/killed.html"] == 2


TAKER = """
import asyncio, sys
from reader.store import Store

async def main(path, tasks):
    store = await Store.open(path)
    async def take():
        while (run := await store.take_next(f"taker-{tasks}", 60)) is not None:
            await store.store_cleaned(run, {"title": None, "author": None, "published": None,
                                            "html": "<p>x</p>", "text": "x", "words": 1})
    await asyncio.gather(*(take() for _ in range(tasks)))
    await store.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


async def test_many_tasks_in_many_processes_take_each_queued_item_exactly_once(settings, tmp_path):
    """The aiosqlite regression: tasks sharing a connection must not share a transaction,
    or one task's take can be rolled back into another's. 2 processes x 50 tasks."""
    async with await Store.open(settings.db) as store:
        feed_id, _ = await store.add_feed("http://feed.test/")
        store.feed_items = 300  # one feed this long: past the refresh cap of a real feed
        await store.store_feed_entries(
            feed_id, title="t", site_url=None, etag=None, last_modified=None,
            entries=[{"guid": str(i), "url": f"http://x.test/{i}", "title": str(i), "summary": "",
                      "author": None, "published": float(i)} for i in range(300)],
        )
        for article in sorted(await store.list_articles(limit=300), key=lambda a: a["id"]):
            await store.queue(article["id"])
    procs = [await asyncio.create_subprocess_exec(sys.executable, "-c", TAKER, str(settings.db), "50")
             for _ in range(2)]
    assert [await p.wait() for p in procs] == [0, 0]
    async with await Store.open(settings.db) as store:
        runs = await store.runs()
        stats = await store.stats()
    per_article = {}
    for r in runs:
        per_article[r["article_id"]] = per_article.get(r["article_id"], 0) + 1
    assert len(per_article) == 300 and set(per_article.values()) == {1}
    assert stats == {"started": 300, "cached": 300, "failed": 0, "abandoned": 0, "running": 0, "queued": 0,
                     "imported": 0}


def _awaiting(task: asyncio.Task, name: str) -> bool:
    """Whether the task is suspended somewhere inside the coroutine function `name`: the
    second reader must really be waiting on the holder before the holder fails."""
    awaited = task.get_coro().cr_await
    while awaited is not None:
        if getattr(getattr(awaited, "cr_code", None), "co_name", None) == name:
            return True
        awaited = getattr(awaited, "cr_await", None)
    return False


async def test_readers_who_join_a_failing_extraction_share_its_failure_and_fetch_once(settings, pages):
    gate = threading.Event()
    async with running(settings.replace(serve_workers=0), worker=False) as reader:
        ids = await _subscribe(reader, pages, ["broken"])
        pages.add("/broken.html", "gone", status=404, gate=gate)
        article_id = ids["broken"]
        first = asyncio.create_task(reader._cleaner.open(article_id))
        await wait_for(lambda: pages.hits["/broken.html"] == 1)
        # The second reader arrives while the first one's extraction is on the wire.
        second = asyncio.create_task(reader._cleaner.open(article_id))
        await wait_for(lambda: _awaiting(second, "_wait_for_holder"))
        gate.set()
        outcomes = await asyncio.gather(first, second, return_exceptions=True)
        runs = await _runs(reader._store, article_id)
    assert all(isinstance(o, ArticleFailed) for o in outcomes), outcomes
    assert str(outcomes[0]) == str(outcomes[1])
    assert [r["outcome"] for r in runs] == ["failed"]
    assert pages.hits["/broken.html"] == 1


async def test_a_tap_in_another_process_reaches_an_idle_worker_process_at_once(settings, pages):
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["elsewhere"])
    # The worker looks at the line every 60 s only; the tap comes from this process's
    # API, whose wake() cannot reach the worker process.
    with worker_process(settings, READER_WORKER_INTERVAL="60"):
        async with app_client(settings.replace(serve_workers=0)) as client:
            assert (await client.post(f"/api/articles/{ids['elsewhere']}/queue")).status_code == 200
            await wait_for(lambda: _state(client, ids["elsewhere"], "ready"), timeout=15, interval=0.1)
    assert pages.hits["/elsewhere.html"] == 1


async def test_a_dead_holders_claim_reaches_an_idle_worker_process_when_it_expires(settings, pages):
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["abandoned"])
    with worker_process(settings, READER_WORKER_INTERVAL="60"):
        async with await Store.open(settings.db) as store:
            # A holder that will never finish: the claim is taken first, then the tap, so
            # the worker (woken by the tap) finds the article held and goes back to sleep.
            dead = await store.claim(ids["abandoned"], "killed-process", ttl=2.0)
            assert dead is not None
            await store.queue(ids["abandoned"])
            await wait_for(lambda: store.get_content(ids["abandoned"]), timeout=20, interval=0.1)
            runs = await store.runs(ids["abandoned"])
    assert [(r["outcome"], r["lane"]) for r in runs] == [("abandoned", "direct"), ("cached", "queue")]


async def test_after_a_clock_jump_robs_a_live_holder_the_result_is_stored_once(settings, pages):
    """A wall-clock jump forward larger than a claim's remaining life makes that claim look
    expired to everyone, live holder or not; reader bounds the damage instead: the page may
    be fetched twice, but the article's content and state are written once, and the
    ledger still adds up. Here the holder's claim is made to run out (what the jump does)
    while it is still working, and another reader takes over."""
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["jumped"])
        article_id = ids["jumped"]
        robbed = await reader._store.claim(article_id, "holder-before-the-jump", ttl=0.2)
        assert robbed is not None
        await wait_for(lambda: _expired(reader._store, article_id))
        content = await reader._cleaner.open(article_id)  # the new holder, after the "jump"
        # The robbed holder comes back with its own result, then with a failure: neither
        # replaces what the new holder stored, nor marks the article failed.
        await reader._store.store_cleaned(robbed, {**content, "html": "<p>stale</p>", "text": "stale"})
        await reader._store.store_failed(robbed, "fetch failed: too late")
        assert not await reader._store.renew(robbed, 30)
        stored = await reader._store.get_content(article_id)
        article = await reader._store.get_article(article_id)
        runs = await _runs(reader._store, article_id)
        stats = await reader._store.stats()
    assert stored["html"] == content["html"] and "stale" not in stored["text"]
    assert article["state"] == "ready" and article["error"] is None
    assert [r["outcome"] for r in runs] == ["abandoned", "cached"]
    assert stats["started"] == stats["cached"] + stats["failed"] + stats["abandoned"]


async def _expired(store: Store, article_id: int) -> bool:
    holder = await store.claim_holder(article_id)
    return holder is None or holder["expires_at"] < time.time()


LATE_CONTENT = {"title": "Late", "author": None, "published": None, "html": "<p>late but alive</p>",
                "text": "late but alive", "words": 3}


async def _lapse_and_drop(reader, article_id: int) -> None:
    """Let the article's claim run out, then have someone's take of another article drop
    it (every claim taken first closes the expired ones): what a late renewal meets."""
    await wait_for(lambda: _expired(reader._store, article_id))
    other = await reader._store.save_link(f"http://example.invalid/other-{article_id}")
    assert await reader._store.claim(other[0], "someone-else", ttl=30) is not None
    assert await reader._store.claim_holder(article_id) is None


async def test_a_late_renewal_with_nobody_taking_over_gets_the_claim_back(settings, pages):
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["late"])
        late = await reader._store.claim(ids["late"], "late-holder", ttl=0.2)
        await _lapse_and_drop(reader, ids["late"])
        # Late is not dead: nobody claimed the article meanwhile, so the claim is its own again
        assert await reader._store.renew(late, 30)
        assert (await reader._store.claim_holder(ids["late"]))["run_id"] == late.id
        assert await reader._store.claim(ids["late"], "third", ttl=30) is None  # not up for grabs
        await reader._store.store_cleaned(late, LATE_CONTENT)
        runs = await _runs(reader._store, ids["late"])
    assert [r["outcome"] for r in runs] == ["cached"]


async def test_a_late_result_with_nobody_taking_over_is_recorded_as_the_runs_own(settings, pages):
    """A holder whose claim lapsed and was dropped, with nobody claiming the article since,
    comes back with its result: the ledger says cached (or failed), not abandoned, and a
    failure is the article's, so that started = cached + failed holds."""
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["late-cached", "late-failed"])
        cached = await reader._store.claim(ids["late-cached"], "late-holder", ttl=0.2)
        failed = await reader._store.claim(ids["late-failed"], "late-holder", ttl=0.2)
        await _lapse_and_drop(reader, ids["late-cached"])
        await _lapse_and_drop(reader, ids["late-failed"])
        await reader._store.store_cleaned(cached, LATE_CONTENT)
        await reader._store.store_failed(failed, "fetch failed: 404 Not Found")
        outcomes = {slug: [r["outcome"] for r in await _runs(reader._store, ids[slug])] for slug in ids}
        article = await reader._store.get_article(ids["late-failed"])
        stats = await reader._store.stats()
    assert outcomes == {"late-cached": ["cached"], "late-failed": ["failed"]}
    assert article["state"] == "failed" and article["error"] == "fetch failed: 404 Not Found"
    # the two "someone-else" claims are still running
    assert (stats["cached"], stats["failed"], stats["abandoned"], stats["running"]) == (1, 1, 0, 2)


def _forkserver_of(pid: int) -> int | None:
    """The multiprocessing fork server among a process's children, if it has started."""
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            continue
        for child in children:
            try:
                with open(f"/proc/{child}/cmdline", "rb") as f:
                    if b"forkserver" in f.read():
                        return child
            except OSError:
                continue
    return None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the fork server through /proc")
async def test_a_holder_whose_extraction_processes_are_slow_to_start_keeps_its_claim(settings, pages):
    """Under heavy load, starting the first extraction process (it waits for the fork
    server, busy importing trafilatura) once stopped a worker's event loop for longer than
    the claim's life: no renewal, and a second worker cleaned the article again. Here the
    worker process's fork server is stopped outright while the article waits to be cleaned,
    far past the claim's life (3 s: with 1 s, renewals on a machine loaded tenfold by other
    test processes sometimes came late enough to lose it, which is not what this test is
    about); the worker must keep renewing, and the in-process worker of this reader,
    pulling from the same line, must never get the article."""
    async with running(settings, worker=False) as reader:
        ids = await _subscribe(reader, pages, ["slow-start"])
        article_id = ids["slow-start"]
    with worker_process(settings, ttl=3.0) as proc:
        server = await wait_for(lambda: _forkserver_of(proc.pid), timeout=30)
        os.kill(server, signal.SIGSTOP)
        try:
            async with running(settings, worker=False) as tapper:
                await tapper._store.queue(article_id)
                await wait_for(lambda: pages.hits["/slow-start.html"] == 1, timeout=20)
                first = await tapper._store.claim_holder(article_id)
                assert first is not None
            async with running(settings) as reader:  # a worker pulling from the same line

                async def renewed_well_past_its_first_life() -> bool:
                    holder = await reader._store.claim_holder(article_id)
                    assert holder is not None and holder["run_id"] == first["run_id"], \
                        ("the claim passed on", await _runs(reader._store, article_id), "".join(proc.lines)[-3000:])
                    return holder["expires_at"] > first["expires_at"] + 6.0  # two lives on

                await wait_for(renewed_well_past_its_first_life, timeout=40, interval=0.05)
                os.kill(server, signal.SIGCONT)
                await wait_for(lambda: reader._store.get_content(article_id), timeout=60)
                runs = await _runs(reader._store, article_id)
        finally:
            os.kill(server, signal.SIGCONT)
    assert [(r["outcome"], r["worker"].startswith("worker")) for r in runs] == [("cached", True)]
    assert pages.hits["/slow-start.html"] == 1
