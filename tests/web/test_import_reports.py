"""An import's report outlives the server: its page, its "Queue the N unread links" and
GET /api/imports/{n} answer after a restart, numbers are never taken twice, and an import
that a kill -9 cut short says so (what it stored stays)."""

from __future__ import annotations

import signal
import sqlite3

import httpx

from reader.core.imports import CUT_SHORT

from ..helpers import app_client, wait_for
from ..jobs.test_shutdown import Serve


def pocket_csv(count: int, start: int = 0) -> bytes:
    rows = "\n".join(f"Link {i},https://example.org/{i},{1_600_000_000 + i},saved,unread"
                     for i in range(start, start + count))
    return ("title,url,time_added,tags,status\n" + rows + "\n").encode()


async def upload(client: httpx.AsyncClient, name: str, data: bytes) -> int:
    answer = await client.post("/feeds/import", files={"file": (name, data, "text/csv")})
    assert answer.status_code == 303, answer.text
    return int(answer.headers["location"].rsplit("/", 1)[1])


async def finished(client: httpx.AsyncClient, job: int) -> dict | None:
    answer = (await client.get(f"/api/imports/{job}")).json()
    return answer if answer["finished"] else None


async def test_the_report_and_its_queue_button_work_after_a_restart(settings):
    settings = settings.replace(serve_workers=0)
    async with app_client(settings) as client:
        first = await upload(client, "pocket.csv", pocket_csv(3))
        before = await wait_for(lambda: finished(client, first))
    assert before["report"]["new"] == 3 and before["report"]["unqueued"] == 3

    async with app_client(settings) as client:  # a new server on the same database
        after = (await client.get(f"/api/imports/{first}")).json()
        assert after == before
        page = await client.get(f"/imports/{first}")
        assert page.status_code == 200 and "Done (pocket-csv): 3 new links" in page.text
        assert "Queue the 3 unread links" in page.text
        queued = await client.post(f"/api/imports/{first}/queue")
        assert queued.status_code == 200 and queued.json()["queued"] == 3
        assert len((await client.get("/api/queue")).json()["items"]) == 3
        assert (await client.get(f"/api/imports/{first}")).json()["report"]["unqueued"] == 0

        long_name = "  a very   long " + "name" * 300 + ".csv"  # whatever a browser sends is kept short
        second = await upload(client, long_name, pocket_csv(2, start=3))
        assert second == first + 1  # not 1 again: the old link would have shown this report
        assert (await wait_for(lambda: finished(client, second)))["name"] == ("a very long " + "name" * 300)[:200]
        assert (await client.get(f"/api/imports/{first}")).json()["name"] == "pocket.csv"
        assert (await client.get(f"/api/imports/{second + 1}")).status_code == 404


async def test_only_the_latest_twenty_are_kept_and_their_numbers_are_not_reused(settings):
    settings = settings.replace(serve_workers=0)
    async with app_client(settings) as client:
        jobs = []
        for i in range(22):
            jobs.append(await upload(client, f"part-{i}.csv", pocket_csv(1, start=i)))
            await wait_for(lambda: finished(client, jobs[-1]))
    async with app_client(settings) as client:
        assert (await client.get(f"/api/imports/{jobs[0]}")).status_code == 404
        assert (await client.get(f"/api/imports/{jobs[1]}")).status_code == 404
        assert (await client.get(f"/api/imports/{jobs[2]}")).json()["name"] == "part-2.csv"
        assert (await client.get(f"/api/imports/{jobs[-1]}")).json()["report"]["new"] == 1
        assert await upload(client, "next.csv", pocket_csv(1, start=99)) == jobs[-1] + 1
    with sqlite3.connect(settings.db) as db:
        assert db.execute("SELECT count(*) FROM imports").fetchone()[0] <= 21


async def test_an_import_killed_midway_says_it_was_cut_short_and_keeps_what_it_stored(settings):
    big = pocket_csv(60_000)
    server = await Serve(settings, READER_SERVE_WORKERS="0").ready()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            await client.get("/static/style.css")  # the CSRF cookie
            client.headers["X-CSRF-Token"] = client.cookies["reader_csrf"]
            job = await upload(client, "big.csv", big)

            async def storing() -> bool:
                answer = (await client.get(f"/api/imports/{job}")).json()
                assert not answer["finished"], "the import ended before it could be killed: make the file bigger"
                return answer["done"] >= 2_000
            await wait_for(storing, timeout=60, interval=0.02)
    finally:
        server.stop(signal.SIGKILL)
    with sqlite3.connect(settings.db) as db:
        stored = db.execute("SELECT count(*) FROM articles").fetchone()[0]
    assert 2_000 <= stored < 60_000

    restarted = await Serve(settings, READER_SERVE_WORKERS="0").ready()
    try:
        async with httpx.AsyncClient(base_url=restarted.url, timeout=60) as client:
            answer = (await client.get(f"/api/imports/{job}")).json()
            page = (await client.get(f"/imports/{job}")).text
    finally:
        restarted.stop()
    assert answer["finished"] and answer["error"] == CUT_SHORT and answer["report"] is None
    assert "import the same file again" in page and 'http-equiv="refresh"' not in page


async def test_two_servers_taking_one_number_never_write_over_each_others_report(settings):
    """Two processes on one database may hand out the same number at the same moment (it
    is a read, so the form answers while another writer holds the file): the first one's
    row and report stay its own."""
    from reader.store import Store

    async with await Store.open(settings.db) as one, await Store.open(settings.db) as two:
        number = await one.next_import_id()
        assert await two.next_import_id() == number
        await one.start_import(number, "mine.csv", 100.0, keep=20)
        await two.start_import(number, "theirs.csv", 101.0, keep=20)
        await one.finish_import(number, "mine.csv", 100.0, outcome='{"name": "mine.csv", "format": "pocket-csv"}',
                                article_ids=b"", error=None, finished_at=102.0)
        await two.finish_import(number, "theirs.csv", 101.0, outcome='{"name": "theirs.csv", "format": "x"}',
                                article_ids=b"", error=None, finished_at=103.0)
        row = await one.import_record(number)
    assert (row["name"], row["finished_at"], row["outcome"]) == ("mine.csv", 102.0,
                                                                 '{"name": "mine.csv", "format": "pocket-csv"}')
