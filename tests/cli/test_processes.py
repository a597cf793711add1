"""The processes behind reader: the extraction pool survives a killed process, a folder
named `reader` in the current directory changes nothing, and kill -9 of reader leaves
none of its processes behind. Real processes, killed for real; process trees from /proc."""

from __future__ import annotations

import ast
import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reader.errors import Invalid
from reader.pool import CpuPool
from reader.settings import MIN_PASSWORD_LENGTH

from .. import poolwork
from ..helpers import RSS, app_client, article_html, free_port, rss, until, wait_for
from ..processes import alive, command_line, descendants, pool_processes

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process trees from /proc")

READER = Path(sys.executable).with_name("reader")  # the console script, as a user runs it


# -- a killed pool process costs one retry, not an article -------------------------------------------


async def test_a_pool_process_killed_mid_work_is_replaced_and_the_work_tried_again(tmp_path):
    pool = CpuPool(1)
    try:
        marker = tmp_path / "working"
        work = asyncio.create_task(pool.run(poolwork.block_the_first_time, str(marker)))
        victim = int(await wait_for(lambda: marker.exists() and marker.read_text()))
        os.kill(victim, signal.SIGKILL)  # what an OOM kill does, in the middle of the work
        answered_by = await asyncio.wait_for(work, 60)
        assert answered_by != victim
        assert await pool.run(poolwork.pid) == answered_by  # the new pool keeps serving
    finally:
        pool.close()


async def test_a_killed_pool_process_is_not_the_next_articles_failure(settings, pages):
    settings = settings.replace(extract_processes=1, serve_workers=0)
    links = [pages.add_article(f"victim-{i}") for i in range(2)]
    feed = pages.add("/feed.xml", rss([{"title": f"V{i}", "link": link} for i, link in enumerate(links)]),
                     headers=RSS)
    async with app_client(settings) as client:
        assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201  # parsed in the pool
        first, second = sorted(a["id"] for a in (await client.get("/api/articles")).json()["items"])
        assert (await client.get(f"/api/articles/{first}/content")).status_code == 200
        [victim] = pool_processes(os.getpid())
        os.kill(victim, signal.SIGKILL)
        await wait_for(lambda: not alive(victim))

        opened = await client.get(f"/api/articles/{second}/content")
        assert opened.status_code == 200 and "victim-1" in opened.json()["text"]
        stats = (await client.get("/api/stats")).json()
        assert (stats["cached"], stats["failed"]) == (2, 0)
        assert (await client.get(f"/api/articles/{second}")).json()["state"] == "ready"


# A page that takes a pool process about half a second to clean: long enough that the
# killer below always finds the process at work (a small page is cleaned in 20 ms by a
# process forked from the warmed-up fork server, which could finish before the killer looks).
HEAVY_PAGE = article_html("A long read", "marker-long", paragraphs=1000)


class PoolKiller:
    """Kills every extraction pool process of this test process as soon as it appears."""

    def __init__(self) -> None:
        self.kills = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in pool_processes(os.getpid()):
                try:
                    os.kill(pid, signal.SIGKILL)
                    self.kills += 1
                except ProcessLookupError:
                    pass
            self._stop.wait(0.005)

    def __enter__(self) -> "PoolKiller":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


async def test_when_the_retry_dies_too_the_article_stays_in_line_and_is_not_failed(settings, pages):
    # an outage the test cannot bound in runs: the crash limit (its own test below) is out of reach
    settings = settings.replace(extract_processes=1, serve_workers=1, worker_interval=0.2, crash_limit=1000)
    link = pages.add("/doomed-twice.html", HEAVY_PAGE)
    feed = pages.add("/feed.xml", rss([{"title": "D", "link": link}]), headers=RSS)
    async with app_client(settings) as client:
        assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
        [article] = (await client.get("/api/articles")).json()["items"]
        url = f"/api/articles/{article['id']}"

        async def ended_somehow():
            stats = (await client.get("/api/stats")).json()
            return stats["abandoned"] + stats["failed"] + stats["cached"] > 0 and stats

        with PoolKiller() as killer:
            assert (await client.post(f"{url}/queue", json={})).status_code == 200
            stats = await wait_for(ended_somehow, timeout=60)
            assert (stats["failed"], stats["cached"]) == (0, 0) and stats["abandoned"] >= 1
            during = (await client.get(url)).json()
            assert during["state"] in ("queued", "cleaning") and during["error"] is None
            opened = await client.get(f"{url}/content")  # a direct open says so, and records nothing
            assert opened.status_code == 502 and "unavailable" in opened.json()["error"]
            assert killer.kills >= 2
        assert (await client.get(url)).json()["error"] is None

        # The machine recovers: the worker, which kept the article, cleans it.
        await wait_for(lambda: _state(client, url), timeout=60)
        assert (await client.get("/api/stats")).json()["failed"] == 0


async def test_an_article_that_kills_the_pool_every_time_fails_after_the_crash_limit(settings, pages):
    settings = settings.replace(extract_processes=1, serve_workers=1, worker_interval=0.2)
    assert settings.crash_limit == 3  # the default
    link = pages.add("/poison.html", HEAVY_PAGE)
    feed = pages.add("/feed.xml", rss([{"title": "P", "link": link}]), headers=RSS)
    async with app_client(settings) as client:
        assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
        [article] = (await client.get("/api/articles")).json()["items"]
        url = f"/api/articles/{article['id']}"

        async def failed():
            state = (await client.get(url)).json()
            return state["state"] == "failed" and state

        with PoolKiller() as killer:
            assert (await client.post(f"{url}/queue", json={})).status_code == 200
            state = await wait_for(failed, timeout=120)
            assert "extraction processes die 3 times" in state["error"]
            stats = (await client.get("/api/stats")).json()
            # two runs handed back, the third failed it; it left the line, so no worker takes it again
            assert (stats["abandoned"], stats["failed"], stats["cached"], stats["queued"]) == (2, 1, 0, 0)
            assert stats["started"] == 3 and stats["running"] == 0
            assert killer.kills >= 6  # each run: the work, and its one retry on a new pool

        async def crashed_again():
            stats = (await client.get("/api/stats")).json()
            return (stats["abandoned"] >= 3 or stats["failed"] >= 2) and stats

        # a person's retry counts afresh: its first crashed run is handed back, not failed
        with PoolKiller():
            assert (await client.post(f"{url}/queue", json={})).status_code == 200
            await wait_for(crashed_again, timeout=60)
        stats = (await client.get("/api/stats")).json()
        assert stats["failed"] == 1 and stats["abandoned"] >= 3
        # and on a sound pool again it is cleaned
        await wait_for(lambda: _state(client, url), timeout=60)
        assert (await client.get(url)).json()["error"] is None


async def _state(client: httpx.AsyncClient, url: str) -> bool:
    return (await client.get(url)).json()["state"] == "ready"


# -- real `reader serve` processes ---------------------------------------------------------------------


SAMPLE_TITLE = "On typography for long reads"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator:
    """Start `reader serve` (the installed console script) on a free port with a fresh
    database, from a directory of the test's choice; stopped (or reaped) at the end."""
    started: list[subprocess.Popen] = []

    def start(cwd: Path) -> tuple[subprocess.Popen, str]:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
        env.update(READER_REFRESH_INTERVAL="0", READER_EXTRACT_PROCESSES="1", READER_SERVE_WORKERS="1")
        log = open(tmp_path / f"serve-{port}.log", "wb")
        process = subprocess.Popen(
            [str(READER), "serve", "--port", str(port), "--db", str(tmp_path / f"data-{port}.db")],
            cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        log.close()
        started.append(process)
        base = f"http://127.0.0.1:{port}"

        def up() -> bool:
            assert process.poll() is None, (tmp_path / f"serve-{port}.log").read_text()
            try:
                return httpx.get(f"{base}/api/stats", timeout=5).status_code == 200
            except httpx.TransportError:
                return False

        until(up, timeout=60)
        return process, base

    yield start
    for process in started:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def a_clone_named_reader(parent: Path) -> Path:
    """The folder reader was cloned into is named `reader`: run from its parent, it is a
    namespace package `reader` in the current directory (here with a bogus package in it)."""
    clone = parent / "reader"
    (clone / "reader").mkdir(parents=True)
    (clone / "pyproject.toml").write_text("[project]\nname = 'not-this'\n")
    (clone / "reader" / "__init__.py").write_text("raise ImportError('the wrong reader was imported')\n")
    return parent


def test_a_folder_named_reader_in_the_current_directory_breaks_nothing(serve, tmp_path):
    workdir = a_clone_named_reader(tmp_path / "home")
    process, base = serve(workdir)
    with httpx.Client(base_url=base, timeout=60) as client:
        assert SAMPLE_TITLE in client.get("/").text  # the first run's sample feed
        [feed] = client.post("/api/refresh").json()["feeds"]  # parsed in the pool
        assert feed["error"] is None
        article = next(a for a in client.get("/api/articles").json()["items"] if a["title"] == SAMPLE_TITLE)
        opened = client.get(f"/api/articles/{article['id']}/content")  # cleaned in the pool
        assert opened.status_code == 200, opened.text
        assert opened.json()["words"] > 100


def test_kill_9_of_serve_leaves_none_of_its_processes(serve, tmp_path):
    process, base = serve(tmp_path)
    with httpx.Client(base_url=base, timeout=60) as client:
        article = client.get("/api/articles").json()["items"][0]
        assert client.get(f"/api/articles/{article['id']}/content").status_code == 200  # the pool is up
    family = descendants(process.pid)
    kinds = " ".join(command_line(pid) for pid in family)
    assert "multiprocessing.forkserver" in kinds and "multiprocessing.resource_tracker" in kinds
    assert pool_processes(process.pid), kinds

    process.kill()
    process.wait()
    until(lambda: not any(alive(pid) for pid in family), timeout=10)


# -- the rules `reader serve` starts by, and what the command line may import ------------------------


def test_serving_beyond_loopback_needs_a_password_long_enough(settings):
    """The rule is the settings' own (create_app enforces it too), not the CLI's."""
    for host in ("127.0.0.1", "localhost", "::1", "[::1]"):
        settings.replace(host=host, password=None).check_for_serving()
    with pytest.raises(Invalid, match="refusing to listen on 0.0.0.0 without READER_PASSWORD"):
        settings.replace(host="0.0.0.0", password=None).check_for_serving()
    with pytest.raises(Invalid, match=f"at least {MIN_PASSWORD_LENGTH} characters"):
        settings.replace(host="192.0.2.7", password="x" * (MIN_PASSWORD_LENGTH - 1)).check_for_serving()
    settings.replace(host="192.0.2.7", password="x" * MIN_PASSWORD_LENGTH).check_for_serving()


BELOW_THE_CORE = ("store", "jobs", "pool", "fetch", "clean", "formats", "feeds")


def test_the_command_line_imports_the_core_and_nothing_below_it():
    """reader/cli calls reader.core (with the vocabulary modules) and the web adapter it
    serves, never the store, the jobs, the pool, the fetcher, the cleaner or the formats."""
    below = []
    for path in sorted((Path(__file__).resolve().parent.parent.parent / "reader" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2:  # from ..x import y
                if (node.module or "").split(".")[0] in BELOW_THE_CORE:
                    below.append(f"{path.name}:{node.lineno} {node.module}")
            elif isinstance(node, ast.Import):
                below += [f"{path.name}:{node.lineno} {a.name}" for a in node.names
                          if a.name.split(".")[:2] in (["reader", b] for b in BELOW_THE_CORE)]
    assert below == []
