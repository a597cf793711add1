"""Shared pieces: a loopback page server, the app under a real uvicorn in a subprocess,
percentiles, resident memory from /proc, machine facts and the Markdown table."""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import httpx

from tests.loopback import LoopbackServer

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results"
PYTHON = sys.executable


@dataclass
class Row:
    """One line of the results table."""

    num: str
    what: str
    measured: str
    target: str
    status: str  # "met", "missed", "reported", "failed", "skipped"
    note: str = ""


def table(rows: list[Row]) -> str:
    lines = ["| # | what | measured | target | status |", "|---|---|---|---|---|"]
    for r in rows:
        status = {"met": "**met**", "missed": "**MISSED**", "failed": "**FAILED**"}.get(r.status, r.status)
        lines.append(f"| {r.num} | {r.what} | {r.measured} | {r.target} | {status} |")
    notes = [f"- {r.num}: {r.note}" for r in rows if r.note]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def main_for(run: Callable[[], list[Row]]) -> None:
    """`python -m benchmarks.<name>`: run one benchmark and print its rows."""
    started = time.monotonic()
    rows = run()
    print(table(rows))
    print(f"\n({time.monotonic() - started:.0f} s)")


# -- numbers ------------------------------------------------------------------------

def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), nearest rank."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = max(0, min(len(ordered) - 1, int(round(q / 100 * len(ordered) + 0.5)) - 1))
    return ordered[k]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def ratio(a: float, b: float) -> float:
    return a / b if b else float("inf")


def us(seconds: float) -> str:
    """A signed difference in microseconds: the absolute cost next to a ratio."""
    return f"{seconds * 1e6:+.0f} µs"


def versus(a: list[float], b: list[float], *, b_name: str = "", lead: int = 50) -> str:
    """p50 and p99 of `a` against `b`: the ratio, the absolute difference and both times;
    the `lead` percentile (the one with a target) first and in bold."""
    parts = []
    for q in (lead, 149 - lead):
        pa, pb = pct(a, q), pct(b, q)
        r = f"**{ratio(pa, pb):.2f}×**" if q == lead else f"{ratio(pa, pb):.2f}×"
        parts.append(f"p{q} {r} ({us(pa - pb)}: {ms(pa)} vs {b_name + ' ' if b_name else ''}{ms(pb)})")
    return "; ".join(parts)


def verdict(ok: bool) -> str:
    return "met" if ok else "missed"


# -- machine -------------------------------------------------------------------------

def machine() -> str:
    mem_kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    return (f"nproc {os.cpu_count()}, memory {mem_kb / 1024 / 1024:.1f} GiB, "
            f"Python {platform.python_version()}, {platform.machine()} ({platform.system()} {platform.release()})")


# -- resident memory -----------------------------------------------------------------

def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kb(pid: int) -> tuple[int, int]:
    """(RSS of pid and all its descendants in KB, number of processes)."""
    kids = _children_map()
    total, count, todo = 0, 0, [pid]
    while todo:
        p = todo.pop()
        total += rss_kb(p)
        count += 1
        todo.extend(kids.get(p, []))
    return total, count


class RssSampler:
    """Samples a process tree's RSS in a thread; keeps the peak."""

    def __init__(self, pid: int, interval: float = 0.05):
        self.pid, self.interval = pid, interval
        self.peak_kb, self.peak_procs = 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            kb, n = tree_rss_kb(self.pid)
            if kb > self.peak_kb:
                self.peak_kb, self.peak_procs = kb, n
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)


# -- a loopback page server ------------------------------------------------------------

class PageServer(LoopbackServer):
    """The tests' loopback server (tests/loopback.py) with a deeper accept backlog for load,
    and /__hits, where a parent process reads the fetch counts (and "__304")."""

    def __init__(self) -> None:
        super().__init__(stats_path="/__hits", backlog=256)


# -- the app under uvicorn, in its own process -------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_env(db: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "READER_DB": str(db),
        "READER_ALLOW_PRIVATE_URLS": "1",
        "READER_REFRESH_INTERVAL": "0",
        "READER_SERVE_WORKERS": "0",
        "READER_WORKER_INTERVAL": "0.5",
        "PYTHONUNBUFFERED": "1",
    })
    env.update(extra)
    return env


class Served:
    """`python -m benchmarks.serve` (reader's app plus a /floor route, under uvicorn with
    the settings `reader serve` uses) or `reader serve` itself, on a free port."""

    def __init__(self, db: Path, *, floor_file: Path | None = None, plain: bool = False, **env: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        extra = {"READER_PORT": str(self.port), "READER_HOST": "127.0.0.1", **env}
        if floor_file is not None:
            extra["BENCH_FLOOR_FILE"] = str(floor_file)
        self.env = bench_env(db, **extra)
        self.cmd = ([PYTHON, "-m", "reader", "serve"] if plain else [PYTHON, "-m", "benchmarks.serve"])
        self.proc: subprocess.Popen | None = None
        self.log = tempfile.TemporaryFile()

    def __enter__(self) -> "Served":
        self.proc = subprocess.Popen(self.cmd, env=self.env, cwd=BENCH_DIR.parent,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited:\n" + self.output())
            try:
                if httpx.get(self.url + "/api/stats", timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start:\n" + self.output())
            time.sleep(0.1)

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]

    def __exit__(self, *exc) -> None:
        stop(self.proc)
        self.log.close()


def stop(proc: subprocess.Popen | None, timeout: float = 30) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def workers(db: Path, count: int, concurrency: int = 1, wait: bool = True, **env: str):
    """`reader worker` processes on the same database; yields once each says it is pulling
    (at once if not `wait`)."""
    procs = []
    logs = []
    try:
        for _ in range(count):
            log = tempfile.NamedTemporaryFile(delete=False)
            logs.append(Path(log.name))
            procs.append(subprocess.Popen(
                [PYTHON, "-m", "reader", "worker", "--db", str(db), "--concurrency", str(concurrency)],
                env=bench_env(db, READER_WORKER_INTERVAL="0.05", **env), cwd=BENCH_DIR.parent,
                stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 60
        while wait and not all("worker pulling" in p.read_text(errors="replace") for p in logs):
            if time.monotonic() > deadline or any(pr.poll() is not None for pr in procs):
                raise RuntimeError("a worker did not start:\n" + "\n".join(p.read_text()[-2000:] for p in logs))
            time.sleep(0.05)
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            stop(p)
        for p in logs:
            p.unlink(missing_ok=True)


def work_copy(src: Path, name: str) -> Path:
    """A throwaway copy of a cached library (benchmarks change what they run on)."""
    dst_dir = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    dst = dst_dir / src.name
    shutil.copyfile(src, dst)
    return dst


def cleanup(db: Path) -> None:
    shutil.rmtree(db.parent, ignore_errors=True)


# -- load generation -------------------------------------------------------------------

async def timed_gets(client: httpx.AsyncClient, url: str, count: int) -> list[float]:
    """`count` sequential GETs on one keep-alive connection; seconds each. Non-200 raises."""
    out = []
    for _ in range(count):
        t = time.perf_counter()
        r = await client.get(url)
        out.append(time.perf_counter() - t)
        if r.status_code != 200:
            raise RuntimeError(f"GET {url}: HTTP {r.status_code}")
    return out


async def concurrent_gets(client: httpx.AsyncClient, url: str, count: int, concurrency: int) -> list[float]:
    """`count` GETs by `concurrency` tasks at once (closed loop); seconds each."""
    import asyncio

    out: list[float] = []
    left = [count]

    async def one():
        while left[0] > 0:
            left[0] -= 1
            t = time.perf_counter()
            r = await client.get(url)
            out.append(time.perf_counter() - t)
            if r.status_code != 200:
                raise RuntimeError(f"GET {url}: HTTP {r.status_code}")

    await asyncio.gather(*(one() for _ in range(concurrency)))
    return out


def load_client(concurrency: int = 16) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=concurrency,
                                                             max_keepalive_connections=concurrency))
