"""The core loop end to end: subscribe, browse, tap, workers pull oldest first, read."""


from reader.core import running

from ..helpers import app_client, rss, wait_for


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
        await wait_for(lambda: _cached(reader, 3), timeout=30)
        runs = await reader._store.runs()
    assert [r["article_id"] for r in runs] == ids
    assert [r["outcome"] for r in runs] == ["cached"] * 3
    assert [pages.hits[f"/{n}.html"] for n in "abc"] == [1, 1, 1]


async def _cached(reader, n):
    return (await reader._store.stats())["cached"] == n


async def test_refreshing_a_feed_of_200_items_queues_nothing(settings, pages):
    items = [{"title": f"Headline {i}", "link": pages.url(f"/p{i}.html")} for i in range(200)]
    sentinel = pages.add_article("tapped")
    feed = pages.add("/big.xml", rss(items), headers={"Content-Type": "application/rss+xml"})
    other = pages.add("/other.xml", rss([{"title": "Tapped", "link": sentinel}]),
                      headers={"Content-Type": "application/rss+xml"})
    async with app_client(settings) as client:
        assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
        assert (await client.post("/api/refresh")).status_code == 200
        stats = (await client.get("/api/stats")).json()
        assert stats["queued"] == 0 and stats["started"] == 0
        # The worker is live: a tap on another feed's article is cleaned; the 200 stay untouched.
        feed_id = (await client.post("/api/feeds", json={"url": other})).json()["id"]
        tapped = (await client.get("/api/articles", params={"feed": feed_id})).json()["items"][0]["id"]
        await client.post(f"/api/articles/{tapped}/queue")
        await wait_for(lambda: _state_is(client, tapped, "ready"), timeout=30)
        stats = (await client.get("/api/stats")).json()
        articles = (await client.get("/api/articles", params={"limit": 500})).json()["items"]
    assert len([a for a in articles if a["id"] != tapped]) == 200
    assert {a["state"] for a in articles if a["id"] != tapped} == {"new"}
    assert stats["started"] == stats["cached"] == 1 and stats["queued"] == 0
    assert not any(path.startswith("/p") for path in pages.hits)


async def _state_is(client, article_id, state):
    return (await client.get(f"/api/articles/{article_id}")).json()["state"] == state
