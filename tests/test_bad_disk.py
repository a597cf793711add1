"""A bad disk day (issue 10, item 17): a full disk, a read-only database, a damaged file.
Real conditions only: the database lives on a tiny tmpfs that a filler file fills up, a
file system remounted read-only, pages of a copy overwritten with garbage."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from reader.cli import main
from reader.settings import Settings

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


async def test_check_says_ok_or_what_is_wrong_in_one_line(
        on_disk: Settings, disk: Disk, pages: LoopbackServer, capsys: pytest.CaptureFixture[str]) -> None:
    await made(on_disk, pages, ["one"])
    assert check(on_disk.db, capsys) == (0, f"{on_disk.db}: ok\n")
    disk.fill()
    status, said = check(on_disk.db, capsys)
    assert status == 2 and "the disk is full" in said and len(said.strip().splitlines()) == 1
    status, said = check(on_disk.db.with_name("missing.db"), capsys)
    assert status == 2 and "no database at" in said
