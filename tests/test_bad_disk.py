"""A bad disk day (issue 10, item 17): a full disk, a read-only database, a damaged file.
Real conditions only: the database lives on a tiny tmpfs that a filler file fills up, a
file system remounted read-only, pages of a copy overwritten with garbage."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reader.cli import main
from reader.settings import Settings
from reader.store import Store

from .helpers import LoopbackServer, app_client, subscribe_slugs, wait_for


class Disk:
    """A tmpfs of a few megabytes, mounted for one test: `fill()` takes every free byte
    (as a runaway log would), `free()` gives them back, `read_only()` remounts it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"

    def fill(self) -> None:
        with contextlib.suppress(OSError), self.filler.open("ab") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        # the last partial block may still fit a page: take it with small writes too
        with contextlib.suppress(OSError), self.filler.open("ab") as f:
            while True:
                f.write(b"\0" * 512)
                f.flush()

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def remount(self, mode: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{mode}", str(self.root)], check=True, capture_output=True)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    root = tmp_path / "disk"
    root.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(root)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()}): needs root")
    try:
        yield Disk(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], capture_output=True)


@pytest.fixture
def on_disk(settings: Settings, disk: Disk) -> Settings:
    return settings.replace(db=disk.root / "reader.db", serve_workers=0, extract_processes=0)


async def test_a_full_disk_answers_writes_with_503_and_says_so_while_reads_go_on(
        on_disk: Settings, disk: Disk, pages: LoopbackServer) -> None:
    async with app_client(on_disk) as client:
        _, [first, second] = await subscribe_slugs(client, pages, ["one", "two"])
        disk.fill()

        tap = await client.post(f"/api/articles/{first}/queue", json={})
        assert tap.status_code == 503
        assert tap.headers["content-type"].startswith("application/json")
        assert "the disk is full" in tap.json()["error"]
        star = await client.post(f"/api/articles/{first}/star")
        assert star.status_code == 503 and "the disk is full" in star.json()["error"]

        form = await client.post(f"/articles/{second}/queue", data={"lane": "normal"})
        assert form.status_code == 503
        assert form.headers["content-type"].startswith("text/html")
        assert "the disk is full" in form.text

        # reads go on: the headlines, one article, the API's list
        assert (await client.get("/")).status_code == 200
        assert (await client.get(f"/api/articles/{first}")).json()["state"] == "new"
        assert len((await client.get("/api/articles")).json()["items"]) == 2

        disk.free()
        tap = await client.post(f"/api/articles/{first}/queue", json={})
        assert tap.status_code == 200 and tap.json()["state"] == "queued"


async def test_a_result_that_cannot_be_stored_is_kept_and_stored_once_there_is_room(
        on_disk: Settings, disk: Disk, pages: LoopbackServer) -> None:
    """The page is fetched once: the cleaned result waits in memory for the disk, and the
    person can read it meanwhile. (Before, the run waited out its claim and a worker
    fetched the page a second time.)"""
    gate = threading.Event()
    async with app_client(on_disk.replace(serve_workers=1)) as client:
        _, [article] = await subscribe_slugs(client, pages, ["slow"])
        pages.add_article("slow", gate=gate)  # the worker's fetch waits here, its claim won
        assert (await client.post(f"/api/articles/{article}/queue", json={})).status_code == 200
        await wait_for(lambda: pages.hits["/slow.html"] == 1)
        disk.fill()
        gate.set()

        async def readable() -> bool:
            response = await client.get(f"/api/articles/{article}/content")
            return response.status_code == 200 and "marker-slow" in response.json()["text"]

        await wait_for(readable)  # from memory: the disk is still full
        assert (await client.post(f"/api/articles/{article}/star")).status_code == 503

        disk.free()

        async def ready() -> bool:
            return (await client.get(f"/api/articles/{article}")).json()["state"] == "ready"

        await wait_for(ready)
        assert pages.hits["/slow.html"] == 1
        stats = (await client.get("/api/stats")).json()
        assert (stats["started"], stats["cached"], stats["failed"], stats["running"]) == (1, 1, 0, 0)


def check(db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["check", "--db", str(db)])
    out = capsys.readouterr()
    return status, out.out + out.err


async def made(settings: Settings, pages: LoopbackServer, slugs: list[str]) -> list[int]:
    """A database with a feed of these articles, closed again."""
    async with app_client(settings) as client:
        _, ids = await subscribe_slugs(client, pages, slugs)
    return ids


async def test_a_read_only_database_serves_reads_with_a_banner_and_refuses_writes_with_503(
        on_disk: Settings, disk: Disk, pages: LoopbackServer, capsys: pytest.CaptureFixture[str]) -> None:
    [article] = await made(on_disk, pages, ["one"])
    disk.remount("ro")

    status, said = check(on_disk.db, capsys)
    assert status == 2 and "the database is read-only" in said and len(said.strip().splitlines()) == 1

    async with app_client(on_disk) as client:  # before: "unable to open database file" at start
        page = await client.get("/")
        assert page.status_code == 200 and "Item one" in page.text
        assert "The database is read-only" in page.text
        tap = await client.post(f"/api/articles/{article}/queue", json={})
        assert tap.status_code == 503 and "the database is read-only" in tap.json()["error"]
        star = await client.post(f"/articles/{article}/star", data={})
        assert star.status_code == 503 and "the database is read-only" in star.text
        assert (await client.get(f"/api/articles/{article}")).json()["starred"] is False


async def test_a_ready_article_on_a_read_only_database_says_so_too(
        on_disk: Settings, disk: Disk, pages: LoopbackServer) -> None:
    """The reader view is rendered apart from the other pages (and kept): it shows the
    banner all the same."""
    [article] = await made(on_disk, pages, ["one"])
    async with app_client(on_disk) as client:
        assert (await client.get(f"/api/articles/{article}/content")).status_code == 200
        assert (await client.post(f"/api/articles/{article}/read")).status_code == 200
    disk.remount("ro")
    async with app_client(on_disk) as client:
        for _ in range(2):
            page = await client.get(f"/articles/{article}")
            assert page.status_code == 200 and 'class="body"' in page.text
            assert "The database is read-only" in page.text


async def test_check_says_ok_or_what_is_wrong_in_one_line(
        on_disk: Settings, disk: Disk, pages: LoopbackServer, capsys: pytest.CaptureFixture[str]) -> None:
    await made(on_disk, pages, ["one"])
    assert check(on_disk.db, capsys) == (0, f"{on_disk.db}: ok\n")
    disk.fill()
    status, said = check(on_disk.db, capsys)
    assert status == 2 and "the disk is full" in said and len(said.strip().splitlines()) == 1
    status, said = check(on_disk.db.with_name("missing.db"), capsys)
    assert status == 2 and "no database at" in said


async def damaged_library(settings: Settings, links: int = 150) -> tuple[Path, int]:
    """A library of saved links with long titles (about two to a page), closed, then two
    of the articles table's pages overwritten with garbage. Returns the file and how many
    articles were on the damaged pages."""
    async with await Store.open(settings.db) as store:
        for n in range(links):
            await store.save_link(f"http://example.org/{n}", f"Saved link {n} " + "x" * 1500)
    with contextlib.closing(sqlite3.connect(settings.db)) as db:
        db.execute("PRAGMA journal_mode = DELETE")  # everything in the one file
        leaves = [row[0] for row in db.execute(
            "SELECT pageno FROM dbstat WHERE name = 'articles' AND pagetype = 'leaf' ORDER BY pageno")]
        damaged = [leaves[len(leaves) // 3], leaves[2 * len(leaves) // 3]]
        lost = sum(db.execute("SELECT ncell FROM dbstat WHERE pageno = ?", (page,)).fetchone()[0]
                   for page in damaged)
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    garbage = random.Random(17)
    with settings.db.open("r+b") as f:
        for page in damaged:
            f.seek((page - 1) * page_size)
            f.write(garbage.randbytes(page_size))
    return settings.db, lost


def test_a_damaged_file_is_refused_by_serve_and_backup_and_export_saves_the_rest(
        settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, lost = asyncio.run(damaged_library(settings))  # the commands run their own event loops
    assert lost > 0
    args = ["--db", str(db)]

    status, said = check(db, capsys)
    assert status == 2 and "the database file is damaged" in said and len(said.strip().splitlines()) == 1
    assert main(["serve", *args]) == 2
    assert "refusing to serve" in capsys.readouterr().err

    assert main(["backup", *args, str(tmp_path / "copy.db")]) == 1
    err = capsys.readouterr().err
    assert "damaged" in err and "reader export" in err
    assert not (tmp_path / "copy.db").exists()

    out = tmp_path / "export"
    assert main(["export", *args, "--out", str(out)]) == 1  # 1: not everything could be saved
    said = capsys.readouterr().out
    assert f"saved 0 feeds and {150 - lost} articles; unreadable: 0 feeds, {lost} articles" in said
    records = json.loads((out / "articles.json").read_text())["articles"]
    assert len(records) == 150 - lost
    assert all(r["title"].startswith("Saved link ") for r in records)

    fresh = tmp_path / "fresh.db"
    assert main(["import", "--db", str(fresh), str(out)]) == 0
    assert f"{150 - lost} new articles" in capsys.readouterr().out


async def test_reading_a_damaged_page_is_a_503_that_says_so(settings: Settings) -> None:
    await damaged_library(settings)
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        response = await client.get("/api/articles", params={"limit": 200})
        assert response.status_code == 503  # before: a text/plain 500
        assert "the database file is damaged" in response.json()["error"]
        page = await client.get("/?starred=1")
        assert page.status_code in (200, 503)  # whichever pages the query touched


async def test_the_worker_says_once_that_it_cannot_write_not_every_beat(
        on_disk: Settings, disk: Disk, pages: LoopbackServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="reader.jobs.worker")
    async with app_client(on_disk.replace(serve_workers=1, worker_interval=0.3)) as client:
        await subscribe_slugs(client, pages, ["one"])
        disk.fill()

        def heartbeat_lapsed() -> bool:
            # the heartbeat row lasts three beats: once it has lapsed, several beats failed
            with contextlib.closing(sqlite3.connect(on_disk.db)) as db:
                return db.execute("SELECT count(*) FROM workers WHERE expires_at > ?", (time.time(),)
                                  ).fetchone()[0] == 0

        await wait_for(heartbeat_lapsed)
        warnings = [r for r in caplog.records if "heartbeat" in r.getMessage() and r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and "the disk is full" in warnings[0].getMessage()
        assert not any(r.exc_info for r in caplog.records)  # no tracebacks for a full disk

        disk.free()
        await wait_for(lambda: any("heartbeat works again" in r.getMessage() for r in caplog.records))
