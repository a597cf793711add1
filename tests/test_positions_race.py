"""A queued article always has its place in the line, however the line moves meanwhile.

An article's state and its position used to be read in two statements: a take committed
between them made a queued article's position None, and every page with positions
answered 500. Raced here: takes and hand-backs in a loop against the pages and the API
in a loop.
"""

from __future__ import annotations

import asyncio

from .conftest import app_client

PATHS = ["/", "/queue", "/api/queue", "/api/articles", "/live?" + "&".join(f"id={i}" for i in range(1, 41))]


async def test_positions_hold_while_workers_take_and_hand_back(settings):
    settings = settings.replace(serve_workers=0)  # this test is the only worker
    async with app_client(settings) as client:
        store = client.app.state.reader.store
        ids = [(await store.save_link(f"http://127.0.0.1:9/{i}"))[0] for i in range(40)]
        for article_id in ids:
            await store.queue(article_id)

        stop = asyncio.Event()
        takes = 0

        async def worker() -> None:
            nonlocal takes
            while not stop.is_set():
                run = await store.take_next("racer", ttl=60)
                assert run is not None  # hand-backs keep every article in line
                takes += 1
                await store.release(run)

        racing = asyncio.create_task(worker())
        failures: list[str] = []
        try:
            for round in range(60):
                for path in PATHS:
                    response = await client.get(path)
                    if response.status_code != 200:
                        failures.append(f"{path}: {response.status_code}")
                items = (await client.get("/api/articles")).json()["items"]
                failures += [f"article {a['id']} queued without a position" for a in items
                             if a["state"] == "queued" and not isinstance(a["position"], int)]
                line = (await client.get("/api/queue")).json()["items"]
                positions = [a["position"] for a in line]
                if positions != list(range(1, len(positions) + 1)):
                    failures.append(f"line positions {positions}")
                for article_id in ids[round % 5::5][:2]:
                    article = (await client.get(f"/api/articles/{article_id}")).json()
                    if article["state"] == "queued" and not isinstance(article["position"], int):
                        failures.append(f"article {article_id} queued without a position")
        finally:
            stop.set()
            await racing
        assert failures == []
        assert takes > 0  # the line really moved while the pages were read
