"""The core loop end to end: subscribe, browse, tap, workers pull oldest first, read."""

import asyncio

from reader.app import running

from .conftest import app_client, rss, wait_for


async def test_taps_are_cleaned_in_tap_order_and_report_positions_1_2_3(settings, pages):
    links = [pages.add_article(name) for name in ("a", "b", "c")]
    feed = pages.add("/feed.xml", rss([{"title": f"Item {i}", "link": link} for i, link in enumerate(links)]),
                     headers={"Content-Type": "application/rss+xml"})
    async with app_client(settings.replace(serve_workers=0)) as client:
        assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
        items = (await client.get("/api/articles")).json()["items"]
        by_url = {item["url"]: item["id"] for item in items}
        ids = [by_url[link] for link in links]
        positions = [(await client.post(f"/api/articles/{i}/queue")).json()["position"] for i in ids]
        assert positions == [1, 2, 3]
        line = (await client.get("/api/queue")).json()["items"]
        assert [(i["id"], i["position"]) for i in line] == list(zip(ids, [1, 2, 3]))

    async with running(settings) as reader:  # one worker now pulls the line
        await wait_for(lambda: reader.store.stats(), timeout=30)
        await wait_for(lambda: _cached(reader, 3), timeout=30)
        runs = await reader.store.runs()
    assert [r["article_id"] for r in runs] == ids
    assert [r["outcome"] for r in runs] == ["cached"] * 3
    assert [pages.hits[f"/{n}.html"] for n in "abc"] == [1, 1, 1]


async def _cached(reader, n):
    return (await reader.store.stats())["cached"] == n


async def test_refreshing_a_feed_of_200_items_queues_nothing(settings, pages):
    items = [{"title": f"Headline {i}", "link": pages.url(f"/p{i}.html")} for i in range(200)]
    feed = pages.add("/big.xml", rss(items), headers={"Content-Type": "application/rss+xml"})
    async with app_client(settings) as client:
        assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
        assert (await client.post("/api/refresh")).status_code == 200
        await asyncio.sleep(settings.worker_interval * 2)  # give a worker every chance to misbehave
        stats = (await client.get("/api/stats")).json()
        articles = (await client.get("/api/articles", params={"limit": 500})).json()["items"]
    assert len(articles) == 200
    assert {a["state"] for a in articles} == {"new"}
    assert stats["queued"] == 0 and stats["started"] == 0
    assert not any(path.startswith("/p") for path in pages.hits)
