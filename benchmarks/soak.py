"""Load and soak: many clients at once on a real `reader serve` for a long while, with taps,
untaps, opens, searches, live polls and the JSON API mixed, while a `reader worker` process is
killed with SIGKILL and restarted every minute. What must hold: not one 5xx answer, and every
tapped article cleaned exactly once (one ledger run per article that was not interrupted).

    python -m benchmarks.soak                        # 200 clients for 600 s (the 10-minute soak)
    SOAK_CLIENTS=200 SOAK_SECONDS=60 python -m benchmarks.soak   # the load test alone

Not in the default `python -m benchmarks` order: it takes as long as it is told to.
"""

from __future__ import annotations

import asyncio
import collections
import os
import random
import signal
import tempfile
import threading
import time
from pathlib import Path

import httpx

from tests.loopback import LoopbackServer

from .common import Row, Served, cleanup, main_for, verdict, workers
from .pages import article_html

ARTICLES = 300
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "200"))
SECONDS = float(os.environ.get("SOAK_SECONDS", "600"))
WORDS = ["reading", "queue", "article", "the", "light", "zzzz-nothing", '"a phrase"', "a" * 40]


class Site(LoopbackServer):
    """Article pages (some slow, some missing) and one feed listing them."""

    def __init__(self) -> None:
        super().__init__()
        rng = random.Random(7)
        items = []
        for i in range(ARTICLES):
            path = f"/p/{i}.html"
            if i % 17 == 0:
                self.add(path, "gone", status=404)
            else:
                self.add(path, article_html(rng, 600), delay=0.05 if i % 5 else 1.0)
            items.append(f"<item><title>Soak {i}</title><link>{self.url(path)}</link><guid>{i}</guid></item>")
        self.add("/feed.xml", '<?xml version="1.0"?><rss version="2.0"><channel><title>soak</title>'
                 + "".join(items) + "</channel></rss>", "application/rss+xml")


async def _client(base: str, ids: list[int], until: float, statuses: collections.Counter, seed: int) -> None:
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=120) as http:
        while time.monotonic() < until:
            article = rng.choice(ids)
            pick = rng.random()
            try:
                if pick < 0.25:
                    r = await http.get("/", params=rng.choice([{}, {"state": "ready"}, {"unread": "1"}]))
                elif pick < 0.35:
                    r = await http.get("/", params={"q": rng.choice(WORDS)})
                elif pick < 0.50:
                    r = await http.post(f"/api/articles/{article}/queue",
                                        json={"lane": rng.choice(["normal", "next"])})
                elif pick < 0.55:
                    r = await http.delete(f"/api/articles/{article}/queue")
                elif pick < 0.65:
                    r = await http.get(f"/articles/{article}")
                elif pick < 0.75:
                    r = await http.get("/live", params=[("id", str(rng.choice(ids))) for _ in range(5)])
                elif pick < 0.85:
                    r = await http.get("/api/queue")
                elif pick < 0.95:
                    r = await http.get("/api/articles", params={"state": rng.choice(["queued", "ready", "failed"])})
                else:
                    r = await http.get("/api/stats")
                statuses[r.status_code] += 1
            except httpx.HTTPError as exc:
                statuses[f"transport: {type(exc).__name__}"] += 1


async def _soak(base: str, ids: list[int], statuses: collections.Counter) -> None:
    until = time.monotonic() + SECONDS
    await asyncio.gather(*(_client(base, ids, until, statuses, seed) for seed in range(CLIENTS)))


def run() -> list[Row]:
    db = Path(tempfile.mkdtemp(prefix="bench-soak-")) / "reader.db"
    statuses: collections.Counter = collections.Counter()
    kills = 0
    try:
        with Site() as site, Served(db, plain=True, READER_SERVE_WORKERS="2", READER_CLAIM_TTL="10") as server:
            http = httpx.Client(base_url=server.url, timeout=60)
            assert http.post("/api/feeds", json={"url": site.url("/feed.xml")}).status_code == 201
            ids = [a["id"] for a in http.get("/api/articles", params={"limit": 500}).json()["items"]]
            started = time.monotonic()
            clients = threading.Thread(target=lambda: asyncio.run(_soak(server.url, ids, statuses)))
            clients.start()
            while clients.is_alive():
                with workers(db, 1) as [proc]:  # a worker process, killed -9 every minute
                    clients.join(60)
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
            elapsed = time.monotonic() - started
            stats = http.get("/api/stats").json()
    finally:
        cleanup(db)
    # 503 is the designed overload answer (uvicorn's limit_concurrency, reader's "busy"), not a failure
    errors = sum(n for s, n in statuses.items() if not isinstance(s, int) or (s >= 500 and s != 503))
    total = sum(statuses.values())
    shown = ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items(), key=str))
    ledger_ok = stats["started"] == stats["cached"] + stats["failed"] + stats["abandoned"] + stats["running"]
    return [Row("soak", f"{CLIENTS} clients for {elapsed:.0f} s on `reader serve` (2 in-process workers) while a "
                f"`reader worker` is killed -9 every minute ({kills} kills)",
                f"**{errors}** 5xx (other than 503) or transport errors in {total} requests ({shown}); ledger {stats}",
                "0 errors (503 counted, not failed); started = cached + failed + abandoned + running",
                verdict(errors == 0 and ledger_ok))]


if __name__ == "__main__":
    main_for(run)
