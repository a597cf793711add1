"""A refresh takes at most READER_FEED_ITEMS items from one feed, the newest, and the
feed says how many it left out: a feed that rotates its guids cannot add unbounded rows
per refresh. Real feed server, real SQLite, the real app."""

from __future__ import annotations

import itertools

from ..helpers import app_client, published, rss

RSS = {"Content-Type": "application/rss+xml"}

_round = itertools.count()


def _rotating_feed(n: int) -> str:
    """n items whose guids change at every fetch; item i is i hours newer than item 0."""
    r = next(_round)
    items = [{"title": f"Item {i}", "link": f"http://127.0.0.1/{r}/{i}", "guid": f"round-{r}-{i}",
              "date": published(i)} for i in range(n)]
    return rss(items, title="Rotating")


async def test_a_refresh_keeps_the_newest_items_up_to_the_cap_and_says_so(settings, pages):
    pages.add("/feed.xml", _rotating_feed(300), headers=RSS)
    async with app_client(settings.replace(serve_workers=0, extract_processes=0, feed_items=40)) as client:
        response = await client.post("/api/feeds", json={"url": pages.url("/feed.xml")})
        assert response.status_code == 201, response.text
        [feed] = (await client.get("/api/feeds")).json()["feeds"]
        assert feed["articles"] == 40
        assert "300" in feed["note"] and "40" in feed["note"]
        titles = {a["title"] for a in (await client.get("/api/articles", params={"limit": 500})).json()["items"]}
        assert titles == {f"Item {i}" for i in range(260, 300)}  # the newest 40
        page = await client.get("/feeds")
        assert "only the newest 40" in page.text

        pages.add("/feed.xml", _rotating_feed(300), headers=RSS)  # every guid new again
        refreshed = await client.post("/api/refresh")
        assert refreshed.status_code < 300, refreshed.text
        [feed] = (await client.get("/api/feeds")).json()["feeds"]
        assert feed["articles"] == 80  # 40 more, not 300

        pages.add("/feed.xml", _rotating_feed(10), headers=RSS)
        await client.post("/api/refresh")
        [feed] = (await client.get("/api/feeds")).json()["feeds"]
        assert feed["articles"] == 90 and feed["note"] is None
