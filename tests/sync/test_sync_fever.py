"""The Fever API against a real `reader serve` on 127.0.0.1: the `freshrss-api` client
(which posts to /api/fever.php) and the request shapes of Unread and Reeder Classic
(POST /fever/?api&... with api_key = md5("NAME:PASSWORD"))."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from reader.core.sync import fever_key

from ..helpers import rss
from ..syncing import Serve, app_password, feed_of, revoke, subscribed


async def _fever(client: httpx.AsyncClient, key: str, *flags: str, path: str = "/fever/", **values: str) -> httpx.Response:
    query = "&".join(["api", *flags, *(f"{k}={v}" for k, v in values.items())])
    return await client.post(f"{path}?{query}", data={"api_key": key})


async def test_unread_signs_in_reads_groups_feeds_and_items_and_marks_them(settings, pages):
    one = feed_of(pages, ["a", "b"], path="/one.xml", title="One")
    links = [pages.add_article(f"n{i}") for i in range(60)]
    many = pages.add("/many.xml", rss([{"title": f"N{i}", "link": link, "guid": f"n{i}"} for i, link in enumerate(links)],
                                      title="Many"), headers={"Content-Type": "application/rss+xml"})
    ids = await subscribed(settings, one, folder="Tech")
    await subscribed(settings, many)
    password = await app_password(settings, "tablet")
    key = fever_key("tablet", password)
    async with Serve(settings) as server, httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        bad = await _fever(client, "0" * 32)
        assert bad.status_code == 200 and bad.json()["auth"] == 0
        assert bad.headers["content-type"] == "application/json"
        hello = await _fever(client, key)
        assert hello.json()["auth"] == 1 and hello.json()["api_version"] == 3
        assert hello.json()["last_refreshed_on_time"] > 0

        body = (await _fever(client, key, "groups", "feeds", "favicons", "links")).json()
        [group] = body["groups"]
        assert group["title"] == "Tech"
        assert body["feeds_groups"] == [{"group_id": group["id"], "feed_ids": "1"}]
        assert {f["title"] for f in body["feeds"]} == {"One", "Many"}
        assert body["favicons"] == [] and body["links"] == []

        # 50 a page, since_id upward, max_id downward
        first = (await _fever(client, key, "items", since_id="0")).json()
        assert len(first["items"]) == 50 and first["total_items"] == 62
        seen = [i["id"] for i in first["items"]]
        rest = (await _fever(client, key, "items", since_id=str(seen[-1]))).json()["items"]
        assert len(rest) == 12 and seen + [i["id"] for i in rest] == sorted(seen + [i["id"] for i in rest])
        back = (await _fever(client, key, "items", max_id=str(rest[0]["id"]))).json()["items"]
        assert [i["id"] for i in back] == sorted(seen, reverse=True)
        named = (await _fever(client, key, "items", with_ids=f"{ids['Article a']},{ids['Article b']}")).json()
        assert [i["title"] for i in named["items"]] == ["Article a", "Article b"]
        assert named["items"][0]["is_read"] == 0 and "The feed's own summary" in named["items"][0]["html"]

        unread = (await _fever(client, key, "unread_item_ids")).json()["unread_item_ids"]
        assert len(unread.split(",")) == 62
        marked = (await _fever(client, key, mark="item", id=str(ids["Article a"]), **{"as": "read"})).json()
        assert str(ids["Article a"]) not in marked["unread_item_ids"].split(",")
        saved = (await _fever(client, key, mark="item", id=str(ids["Article b"]), **{"as": "saved"})).json()
        assert saved["saved_item_ids"] == str(ids["Article b"])
        # saving is the app's star: it queues, as a star from any app does
        state = await client.get(f"/api/articles/{ids['Article b']}")
        assert state.json()["state"] in ("queued", "cleaning", "ready")
        await _fever(client, key, mark="item", id=str(ids["Article a"]), **{"as": "unread"})
        # a group read: its feeds' articles, up to the time given (later ones: feed 2, nothing)
        await _fever(client, key, mark="group", id=str(group["id"]), before=str(int(time.time()) + 5), **{"as": "read"})
        unread = (await _fever(client, key, "unread_item_ids")).json()["unread_item_ids"].split(",")
        assert len(unread) == 60 and str(ids["Article a"]) not in unread
        await _fever(client, key, mark="feed", id="2", before="1", **{"as": "read"})
        assert len((await _fever(client, key, "unread_item_ids")).json()["unread_item_ids"].split(",")) == 60
        await _fever(client, key, mark="group", id="0", before=str(int(time.time()) + 5), **{"as": "read"})
        assert (await _fever(client, key, "unread_item_ids")).json()["unread_item_ids"] == ""

        # the same at FreshRSS's address; a wrong mark is refused in JSON, nothing changed
        assert (await _fever(client, key, path="/api/fever.php")).json()["auth"] == 1
        wrong = await _fever(client, key, mark="item", id="1", **{"as": "burnt"})
        assert 400 <= wrong.status_code < 500 and wrong.headers["content-type"] == "application/json"

        await revoke(settings, "tablet")
        assert (await _fever(client, key)).json()["auth"] == 0  # at once


async def test_fever_says_how_to_make_an_app_password_and_refuses_the_web_one(settings, pages):
    await subscribed(settings, feed_of(pages, ["a"]))
    web = "correct horse battery staple"
    async with Serve(settings, READER_PASSWORD=web) as server, httpx.AsyncClient(base_url=server.url) as client:
        answer = await _fever(client, fever_key("reader", web), "items")
        assert answer.status_code == 200 and answer.json()["auth"] == 0
        assert "reader app-password add NAME" in answer.json()["error"]
        assert "items" not in answer.json()


async def test_the_freshrss_api_fever_client_against_serve(settings, pages):
    freshrss_api = pytest.importorskip("freshrss_api")
    from freshrss_api.utils.errors import AuthenticationError
    ids = await subscribed(settings, feed_of(pages, ["a", "b", "c"]), folder="Tech")
    password = await app_password(settings, "laptop")
    async with Serve(settings) as server:
        def use() -> None:
            client = freshrss_api.FreshRSSAPI(host=server.url, username="laptop", password=password)
            assert [f["title"] for f in client.get_feeds()["feeds"]] == ["Test feed"]
            assert [g["title"] for g in client.get_groups()["groups"]] == ["Tech"]
            assert {i.id for i in client.get_unreads()} == set(ids.values())
            client.set_mark(as_="read", id=ids["Article a"])
            client.set_mark(as_="saved", id=ids["Article b"])
            assert {i.id for i in client.get_unreads()} == {ids["Article b"], ids["Article c"]}
            assert [i.id for i in client.get_saved()] == [ids["Article b"]]
            with pytest.raises(AuthenticationError):
                freshrss_api.FreshRSSAPI(host=server.url, username="laptop", password="wrong")

        await asyncio.to_thread(use)
