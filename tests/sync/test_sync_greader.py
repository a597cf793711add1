"""The Google Reader API against a real `reader serve` on 127.0.0.1, replaying the request
shapes of each client (/work/shared/specs/native-sync.md): NetNewsWire, Read You, Fluent
Reader, FeedMe, Reeder Classic and Liferea; and the `google-reader` client library."""

from __future__ import annotations

import asyncio
import re
import threading
import time

import httpx
import pytest

from reader.core import sync

from ..helpers import app_client, rss, wait_for
from ..pictures import page_with, png
from ..syncing import (
    API, QUEUE, READ, READING_LIST, READY, STARRED, GReader, Serve, app_password, feed_of, item_number, refreshed,
    server_time, subscribed,
)


async def test_netnewswire_signs_in_syncs_everything_then_only_what_is_new(settings, pages):
    feed = feed_of(pages, ["a", "b", "c"])
    ids = await subscribed(settings, feed, folder="Tech")
    # The Date header counts whole seconds, and `ot` takes what was added from that second
    # on: a first sync within the second the articles came would see them again next time
    # (harmless to the app, but not what this test is about). Wait for the next second.
    await asyncio.sleep(1.0 - time.time() % 1.0)
    password = await app_password(settings)
    async with Serve(settings) as server, GReader(server.url) as nnw:
        # plain-text ClientLogin, split on "=" per line: the token holds none
        answer = await nnw.login("phone", password)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
        assert nnw.auth and "=" not in nnw.auth
        assert re.fullmatch(r"SID=\S+\nLSID=\S+\nAuth=\S+\n", answer.text)
        token = (await nnw.get("/token")).text
        assert len(token) > 20

        tags = (await nnw.get("/tag/list")).json()["tags"]
        assert {"id": "user/-/label/Tech", "type": "folder"} in tags
        assert {"id": QUEUE, "type": "tag"} in tags and {"id": READY, "type": "tag"} in tags
        [sub] = (await nnw.get("/subscription/list")).json()["subscriptions"]
        assert sub["url"] == feed and sub["categories"] == [{"id": "user/-/label/Tech", "label": "Tech"}]

        first = await nnw.get("/stream/items/ids", params={"s": READING_LIST, "n": 1000,
                                                         "ot": int(time.time()) - 90 * 86400})
        assert first.headers["date"]
        since = server_time(first)
        refs = first.json()["itemRefs"]
        assert all(re.fullmatch(r"[0-9]+", ref["id"]) for ref in refs)  # decimal: NetNewsWire parses integers
        assert {int(r["id"]) for r in refs} == set(ids.values())
        assert await nnw.ids(s=f"feed/{sub['id'].split('/')[1]}", n=1000) == sorted(ids.values(), reverse=True)
        assert set(await nnw.ids(s=READING_LIST, xt=READ, n=1000)) == set(ids.values())
        assert await nnw.ids(s=STARRED, n=1000) == []
        # a page of one follows the continuation to the end
        assert await nnw.ids(s=READING_LIST, n=1) == sorted(ids.values(), reverse=True)

        # contents by POST, with T and output=json, unpadded long ids
        answer = await nnw.post("/stream/items/contents", params={"output": "json"},
                                data={"T": token, "i": [f"tag:google.com,2005:reader/item/{i:x}" for i in ids.values()]})
        assert answer.status_code == 200
        items = answer.json()["items"]
        assert [item_number(i) for i in items] == list(ids.values())
        assert all(re.fullmatch(r"tag:google\.com,2005:reader/item/[0-9a-f]{16}", i["id"]) for i in items)
        one = items[0]
        assert one["origin"]["streamId"] == sub["id"] and one["canonical"][0]["href"].endswith(".html")
        assert READ not in one["categories"] and "user/-/label/Tech" in one["categories"]
        assert "The feed's own summary" in one["summary"]["content"]  # not cleaned yet

        assert (await nnw.post("/edit-tag", data={"T": token, "i": str(ids["Article a"]), "a": READ})).text == "OK"
        assert await nnw.ids(s=READ, n=1000) == [ids["Article a"]]

        # new articles arrive; the next sync asks only for what came since the Date it was given
        await asyncio.sleep(1.1)
        feed_of(pages, ["a", "b", "c", "d", "e"])
        await refreshed(settings)
        new = await nnw.ids(s=READING_LIST, n=1000, ot=since)
        assert len(new) == 2 and not set(new) & set(ids.values())
        unread = await nnw.ids(s=READING_LIST, xt=READ, n=1000)
        assert set(unread) == set(new) | {ids["Article b"], ids["Article c"]}


async def test_read_you_sends_json_everywhere_a_huge_n_and_asks_read_items_with_it(settings, pages):
    ids = await subscribed(settings, feed_of(pages, ["a", "b", "c"]))
    password = await app_password(settings)
    async with Serve(settings) as server, GReader(server.url) as app:
        answer = await app.login("phone", password, as_json=True)
        assert answer.headers["content-type"] == "application/json" and set(answer.json()) == {"SID", "LSID", "Auth"}
        await app.post("/edit-tag", params={"output": "json"}, data={"output": "json", "i": [str(ids["Article b"])],
                                                                    "a": READ})
        # Read You asks for the read ids as the reading list including read: exactly the read ones
        read_ids = await app.ids(s=READING_LIST, it=READ, n=50_000, output="json")
        assert read_ids == [ids["Article b"]] == await app.ids(s=READ, n=50_000, output="json")
        unread = await app.get("/unread-count", params={"output": "json"})
        counts = {c["id"]: c["count"] for c in unread.json()["unreadcounts"]}
        assert counts[READING_LIST] == 2
        # a huge n is capped at the largest page, not refused
        capped = await app.get("/stream/items/ids", params={"s": READING_LIST, "n": 10**9, "output": "json"})
        assert capped.status_code == 200 and "continuation" not in capped.json()


async def test_fluent_reader_and_feedme_read_the_reading_list_from_stream_contents_without_a_stream(settings, pages):
    ids = await subscribed(settings, feed_of(pages, ["a", "b"]))
    password = await app_password(settings)
    async with Serve(settings) as server, GReader(server.url) as app:
        await app.login("phone", password)
        for path in ("/stream/contents", "/stream/contents/"):
            answer = await app.get(path, params={"n": 50})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            assert {item_number(i) for i in body["items"]} == set(ids.values())
            assert all(i["canonical"] and i["alternate"][0]["type"] == "text/html" for i in body["items"])
        # FeedMe: contents by POST with an empty T; a stream named with ?s= too
        answer = await app.post("/stream/items/contents", data={"T": "", "i": [str(i) for i in ids.values()]})
        assert len(answer.json()["items"]) == 2
        by_s = await app.get("/stream/contents", params={"s": f"feed/{1}", "n": 1})
        assert len(by_s.json()["items"]) == 1 and "continuation" in by_s.json()
        nxt = await app.get("/stream/contents", params={"s": "feed/1", "n": 1, "c": by_s.json()["continuation"]})
        assert {item_number(i) for i in by_s.json()["items"] + nxt.json()["items"]} == set(ids.values())
        assert (await app.post("/edit-tag", data={"T": "", "i": str(ids["Article a"]), "a": STARRED})).text == "OK"
        [starred] = (await app.get(f"/stream/contents/{STARRED}")).json()["items"]
        assert STARRED in starred["categories"]


async def test_reeder_sends_bare_hex_ids_with_t_x_and_liferea_decimal_ones(settings, pages):
    ids = await subscribed(settings, feed_of(pages, ["a", "b"]))
    password = await app_password(settings)
    a, b = ids["Article a"], ids["Article b"]
    async with Serve(settings) as server, GReader(server.url) as app:
        await app.login("phone", password)
        assert (await app.post("/edit-tag", data={"T": "x", "i": f"{a:016x}", "a": READ})).text == "OK"
        # News+: an empty list of ids is nothing to do, not an error; contents of none are none
        assert (await app.post("/edit-tag", data={"T": "x", "a": READ})).text == "OK"
        assert (await app.post("/stream/items/contents", data={"T": "x"})).json()["items"] == []
        assert (await app.post("/edit-tag", data={"i": str(b), "a": STARRED})).text == "OK"  # Liferea
        assert await app.ids(s=READ) == [a] and await app.ids(s=STARRED) == [b]
        items = await app.contents([a, b])
        assert [READ in i["categories"] for i in items] == [True, False]
        # kept-unread means unread; removing read does the same
        await app.post("/edit-tag", data={"i": str(a), "a": "user/-/state/com.google/kept-unread"})
        assert await app.ids(s=READ) == []
        await app.post("/edit-tag", data={"i": str(a), "a": READ})
        await app.post("/edit-tag", data={"i": str(a), "r": READ})
        assert await app.ids(s=READ) == []


async def test_the_queue_label_is_a_tap_and_the_next_sync_carries_the_clean_text_and_its_images(settings, pages):
    pages.add("/img/a.png", png(3), headers={"Content-Type": "image/png"})
    gate = threading.Event()
    link = pages.add("/pictured.html", page_with('<figure><img src="/img/a.png" alt="A"></figure>'), gate=gate)
    other = pages.add_article("plain")
    feed = pages.add("/feed.xml", rss([{"title": "Pictured", "link": link, "summary": '<p>S <img src="http://x.test/y.png"></p>'},
                                       {"title": "Plain", "link": other}]),
                     headers={"Content-Type": "application/rss+xml"})
    ids = await subscribed(settings, feed)
    password = await app_password(settings)
    pictured, plain = ids["Pictured"], ids["Plain"]
    async with Serve(settings) as server, GReader(server.url) as app:
        await app.login("phone", password)
        [before] = await app.contents([pictured])
        assert "<img" not in before["summary"]["content"]  # the feed's image points at its own site: dropped
        assert (await app.post("/edit-tag", data={"i": [str(pictured), str(plain)], "a": QUEUE})).text == "OK"
        await wait_for(lambda: pages.hits["/pictured.html"] >= 1, timeout=30)
        # the line in service order: the gated page is being cleaned, the other waits behind it
        assert await app.ids(s=QUEUE) == [pictured, plain]
        # out of the Queue: an untap while waiting; cleaning started is left to finish
        assert (await app.post("/edit-tag", data={"i": [str(pictured), str(plain)], "r": QUEUE})).text == "OK"
        assert await app.ids(s=QUEUE) == [pictured]
        assert (await app.post("/edit-tag", data={"i": str(plain), "a": QUEUE})).text == "OK"
        assert await app.ids(s=QUEUE) == [pictured, plain]
        gate.set()

        async def ready() -> bool:
            return {pictured, plain} <= set(await app.ids(s=READY))

        await wait_for(ready, timeout=60, interval=0.2)
        assert await app.ids(s=QUEUE) == []
        items = {item_number(i): i for i in await app.contents([pictured, plain])}
        assert "marker-plain" in items[plain]["summary"]["content"]
        assert READY in items[plain]["categories"] and QUEUE not in items[plain]["categories"]
        content = items[pictured]["summary"]["content"]
        assert "Paragraph number 3 carries enough words" in content
        [src] = re.findall(r'<img[^>]*\ssrc="([^"]+)"', content)
        assert src.startswith(f"{server.url}/sync/images/")  # reader's copy, never the original site
        async with httpx.AsyncClient() as bare:  # no cookie, no token: the URL is the capability
            image = await bare.get(src)
            assert image.status_code == 200 and image.content == png(3)
            forged = re.sub(r"/sync/images/([0-9]+)/[0-9a-f]+/", r"/sync/images/\1/" + "0" * 32 + "/", src)
            assert (await bare.get(forged)).status_code == 404
            # an app's web view loads it from another origin: allowed for these images only
            seen = await bare.get(src, headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors",
                                                "Sec-Fetch-Dest": "image"})
            assert seen.status_code == 200
        # read in the app: read, and still on the reading list (read is not done)
        await app.post("/edit-tag", data={"i": str(plain), "a": READ})
        assert plain in await app.ids(s=READ) and plain in await app.ids(s=READY)
        # done with it in the app: off the reading list; put back, it is not done again
        await app.post("/edit-tag", data={"i": str(plain), "r": READY})
        assert plain not in await app.ids(s=READY) and plain in await app.ids(s=READ)
        await app.post("/edit-tag", data={"i": str(plain), "a": READY})
        assert plain in await app.ids(s=READY)


async def test_a_star_from_an_app_queues_once_a_star_on_the_web_never_does(settings, pages):
    ids = await subscribed(settings, feed_of(pages, ["a", "b", "c"]))
    async with app_client(settings.replace(serve_workers=0, extract_processes=0), csrf=False) as client:
        _, password = await sync.add_app_password(client.app.state.reader, "phone")
        token = (await client.post("/accounts/ClientLogin", data={"Email": "phone", "Passwd": password})).text
        auth = {"Authorization": "GoogleLogin auth=" + token.split("Auth=")[1].strip()}
        await client.post(f"{API}/edit-tag", data={"i": str(ids["Article a"]), "a": STARRED}, headers=auth)
        assert (await client.get(f"/api/articles/{ids['Article a']}")).json()["state"] == "queued"
        await client.post(f"/api/articles/{ids['Article b']}/star")
        assert (await client.get(f"/api/articles/{ids['Article b']}")).json()["state"] == "new"
        # a star sent again (an app replaying its changes) does not queue what was taken out
        await client.delete(f"/api/articles/{ids['Article a']}/queue")
        await client.post(f"{API}/edit-tag", data={"i": str(ids["Article a"]), "a": STARRED}, headers=auth)
        assert (await client.get(f"/api/articles/{ids['Article a']}")).json()["state"] == "new"
    async with app_client(settings.replace(serve_workers=0, extract_processes=0, sync_star_queues=False),
                          csrf=False) as client:
        token = (await client.post("/accounts/ClientLogin", data={"Email": "phone", "Passwd": password})).text
        auth = {"Authorization": "GoogleLogin auth=" + token.split("Auth=")[1].strip()}
        await client.post(f"{API}/edit-tag", data={"i": str(ids["Article c"]), "a": STARRED}, headers=auth)
        article = (await client.get(f"/api/articles/{ids['Article c']}")).json()
        assert article["starred"] and article["state"] == "new"


async def test_mark_all_as_read_reads_only_what_arrived_before_its_timestamp(settings, pages):
    older = await subscribed(settings, feed_of(pages, ["a", "b"], path="/one.xml", title="One"))
    await asyncio.sleep(1.1)
    cut = time.time()
    await asyncio.sleep(0.1)
    newer = await subscribed(settings, feed_of(pages, ["c", "d"], path="/two.xml", title="Two"))
    newer = {k: v for k, v in newer.items() if k not in older}
    password = await app_password(settings)
    async with Serve(settings) as server, GReader(server.url) as app:
        await app.login("phone", password)
        # microseconds (16 digits or more) as NetNewsWire sends them
        assert (await app.post("/mark-all-as-read", data={"s": READING_LIST, "ts": str(int(cut * 1e6))})).text == "OK"
        assert set(await app.ids(s=READ, n=100)) == set(older.values())
        # seconds, on one feed
        assert (await app.post("/mark-all-as-read", data={"s": "feed/2", "ts": str(int(time.time()) + 5)})).text == "OK"
        assert set(await app.ids(s=READ, n=100)) == set(older.values()) | set(newer.values())


async def test_subscribe_move_a_feed_between_folders_and_rename_a_folder(settings, pages):
    one = feed_of(pages, ["a"], path="/one.xml", title="One")
    two = feed_of(pages, ["b"], path="/two.xml", title="Two")
    site = pages.add("/site.html", f'<html><head><link rel="alternate" type="application/rss+xml" href="{two}">'
                                   "</head><body>hi</body></html>")
    pages.add("/nothing.html", "<html><body>no feed here</body></html>")
    password = await app_password(settings)
    async with Serve(settings) as server, GReader(server.url) as app:
        await app.login("phone", password)
        answer = await app.post("/subscription/edit", data={"ac": "subscribe", "s": f"feed/{one}", "t": "First",
                                                            "a": "user/-/label/Tech"})
        assert answer.text == "OK"
        # Read You: quickadd in the query and the form; a site's feed is discovered
        added = await app.post("/subscription/quickadd", params={"quickadd": site}, data={"quickadd": site})
        assert added.json()["numResults"] == 1 and added.json()["streamId"].startswith("feed/")
        none = await app.post("/subscription/quickadd", data={"quickadd": pages.url("/nothing.html")})
        assert none.status_code == 200 and none.json()["numResults"] == 0
        subs = {s["title"]: s for s in (await app.get("/subscription/list")).json()["subscriptions"]}
        assert subs["First"]["categories"] == [{"id": "user/-/label/Tech", "label": "Tech"}]
        assert subs["Two"]["categories"] == []
        # NetNewsWire moves a feed: r=<old label>&a=<new label>
        await app.post("/subscription/edit", data={"ac": "edit", "s": subs["First"]["id"], "r": "user/-/label/Tech",
                                                   "a": "user/-/label/News"})
        await app.post("/subscription/edit", data={"ac": "edit", "s": subs["Two"]["id"], "a": "user/-/label/News"})
        subs = {s["title"]: s for s in (await app.get("/subscription/list")).json()["subscriptions"]}
        assert [c["label"] for s in subs.values() for c in s["categories"]] == ["News", "News"]
        assert (await app.post("/rename-tag", data={"s": "user/-/label/News", "dest": "user/-/label/Reading"})).text \
            == "OK"
        tags = [t["id"] for t in (await app.get("/tag/list")).json()["tags"] if t.get("type") == "folder"]
        assert tags == ["user/-/label/Reading"]
        assert len(await app.ids(s="user/-/label/Reading")) == 2
        await app.post("/disable-tag", data={"s": "user/-/label/Reading"})
        assert [t for t in (await app.get("/tag/list")).json()["tags"] if t.get("type") == "folder"] == []
        # into a folder, out of it with r alone, then unsubscribed
        await app.post("/subscription/edit", data={"ac": "edit", "s": subs["Two"]["id"], "a": "user/-/label/X"})
        await app.post("/subscription/edit", data={"ac": "edit", "s": subs["Two"]["id"], "r": "user/-/label/X"})
        await app.post("/subscription/edit", data={"ac": "unsubscribe", "s": subs["First"]["id"]})
        subs = (await app.get("/subscription/list")).json()["subscriptions"]
        assert [(s["title"], s["categories"]) for s in subs] == [("Two", [])]


async def test_tags_are_item_labels_in_and_out(settings, pages):
    ids = await subscribed(settings, feed_of(pages, ["a", "b"]))
    password = await app_password(settings)
    async with Serve(settings) as server, GReader(server.url) as app:
        await app.login("phone", password)
        await app.post("/edit-tag", data={"i": [str(i) for i in ids.values()], "a": "user/-/label/Later"})
        assert {"id": "user/-/label/Later", "type": "tag"} in (await app.get("/tag/list")).json()["tags"]
        assert set(await app.ids(s="user/-/label/Later")) == set(ids.values())
        await app.post("/edit-tag", data={"i": str(ids["Article a"]), "r": "user/-/label/Later"})
        assert await app.ids(s="user/-/label/Later") == [ids["Article b"]]
        [item] = await app.contents([ids["Article b"]])
        assert "user/-/label/Later" in item["categories"]


async def test_bad_input_is_a_4xx_with_a_reason_and_changes_nothing(settings, pages):
    ids = await subscribed(settings, feed_of(pages, ["a", "b"]))
    password = await app_password(settings)
    a = str(ids["Article a"])
    async with Serve(settings) as server, GReader(server.url) as app:
        await app.login("phone", password)
        token = (await app.get("/token")).text
        bad = [
            ("post", "/edit-tag", {"i": ["not-an-id", a], "a": READ}),
            ("post", "/edit-tag", {"i": ["tag:google.com,2005:reader/item/zz"], "a": READ}),
            ("post", "/edit-tag", {"i": ["99999999999999999999"], "a": READ}),
            ("post", "/edit-tag", {"i": [a], "a": "user/-/state/com.google/nonsense"}),
            ("post", "/edit-tag", {"i": [str(n) for n in range(1, 10_002)], "a": READ}),
            ("post", "/edit-tag", {"i": [a], "a": READ, "T": "wrong"}),
            ("post", "/edit-tag", {"i": [a], "a": READ, "T": [token, "other"]}),
            ("post", "/stream/items/contents", {"i": ["x" * 40]}),
            ("get", "/stream/items/ids", {"s": "user/-/state/com.google/nonsense"}),
            ("get", "/stream/items/ids", {"s": "feed/987654"}),
            ("get", "/stream/items/ids", {"s": "user/-/label/Nowhere"}),
            ("get", "/stream/items/ids", {"s": "pop/whatever"}),
            ("get", "/stream/items/ids", {"s": [READING_LIST, READ]}),
            ("get", "/stream/items/ids", {"s": READING_LIST, "n": "many"}),
            ("get", "/stream/items/ids", {"s": READING_LIST, "c": "not-ours"}),
            ("get", "/stream/items/ids", {"s": READING_LIST, "ot": "yesterday"}),
            ("post", "/mark-all-as-read", {"s": READING_LIST, "ts": "soon"}),
            ("post", "/mark-all-as-read", {"s": "feed/987654"}),
            ("post", "/subscription/edit", {"ac": "explode", "s": "feed/1"}),
            ("post", "/rename-tag", {"s": QUEUE, "dest": "user/-/label/Other"}),
            ("get", "/no/such/call", {}),
        ]
        for method, path, data in bad:
            answer = await (app.post(path, data=data) if method == "post" else app.get(path, params=data))
            assert 400 <= answer.status_code < 500, (path, data, answer.status_code, answer.text)
            assert answer.text.strip() and "\n" not in answer.text.strip(), (path, answer.text)
        assert await app.ids(s=READ) == []
        assert (await app.get("/stream/items/ids", params={"s": READING_LIST, "n": 10_000})).status_code == 200


async def test_no_sync_route_answers_without_an_app_password_and_never_to_the_web_password(settings, pages):
    web_password = "correct horse battery staple"
    await subscribed(settings, feed_of(pages, ["a"]))
    calls = ["/token", "/user-info", "/subscription/list", "/tag/list", "/unread-count", "/stream/items/ids",
             "/stream/items/contents", "/stream/contents", f"/stream/contents/{READING_LIST}", "/edit-tag",
             "/mark-all-as-read", "/subscription/quickadd", "/subscription/edit", "/rename-tag", "/disable-tag",
             "/anything/else"]
    async with Serve(settings, READER_PASSWORD=web_password) as server, GReader(server.url) as app:
        for path in calls:
            for send in (app.get, app.post):
                answer = await send(path)
                assert answer.status_code == 401 and answer.headers["google-bad-token"] == "true", path
                assert "reader app-password add NAME" in answer.text
        refused = await app.login("reader", web_password)
        assert refused.status_code == 401 and "app-password add" in refused.text
        # the web password as a bearer token or a session cookie opens no sync route either
        bearer = await app.http.get(API + "/subscription/list", headers={"Authorization": f"Bearer {web_password}"})
        assert bearer.status_code == 401
        password = await app_password(settings)
        assert (await app.login("phone", web_password)).status_code == 401
        assert (await app.login("phone", password)).status_code == 200
        assert (await app.get("/subscription/list")).status_code == 200
        # no CSRF cookie is handed to a sync client
        assert "set-cookie" not in (await app.get("/tag/list")).headers


@pytest.mark.parametrize("shape", ["email", "name"])
async def test_an_app_that_insists_on_an_email_still_signs_in(settings, shape):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0), csrf=False) as client:
        _, password = await sync.add_app_password(client.app.state.reader, "phone")
        email = "me@example.org" if shape == "email" else "PHONE"
        answer = await client.post("/accounts/ClientLogin", data={"Email": email, "Passwd": password})
        assert answer.status_code == 200


async def test_the_google_reader_client_library_against_serve(settings, pages):
    google_reader = pytest.importorskip("google_reader")
    ids = await subscribed(settings, feed_of(pages, ["a", "b"]))
    two = feed_of(pages, ["c"], path="/two.xml", title="Two")
    password = await app_password(settings)
    async with Serve(settings) as server:
        def use() -> None:
            client = google_reader.Client(server.url)
            auth = client.login("phone", password)
            token = client.get_token(auth)
            assert client.get_user_info(auth).user_name == "phone"
            assert [s.url for s in client.list_subscriptions(auth)] == [pages.url("/feed.xml")]
            added = client.quick_add_subscription(auth, token, two)
            assert added.num_results == 1
            refs = client.get_stream_items_ids(auth, stream_id=READING_LIST, limit=1000)
            assert {int(r.id) for r in refs.item_refs} >= set(ids.values())
            contents = client.get_stream_items_contents(auth, token, [str(i) for i in ids.values()])
            assert len(contents.items) == 2
            assert client.edit_tags(auth, token, [str(ids["Article a"])], add_tags=[READ])
            assert client.mark_all_as_read(auth, token, READING_LIST)
            assert {t.id for t in client.list_tags(auth)} >= {STARRED, QUEUE}

        await asyncio.to_thread(use)


async def test_only_the_sync_paths_skip_the_login_and_each_answers_for_itself(settings):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0, password="a long web password"),
                          csrf=False) as client:
        for near in ("/feverx", "/accounts/ClientLoginX", "/reader/api/1/tag/list", "/syncx/images/1"):
            assert (await client.get(near)).status_code == 303, near  # to the login, as any page
        assert (await client.get(f"{API}/whatever")).status_code == 401
        assert (await client.get("/sync/images/1/abc/2/def")).status_code == 404
        assert (await client.get("/fever/anything")).json()["auth"] == 0
        assert (await client.get("/api/fever.php")).json()["auth"] == 0
        # no cookie is involved, and still: a write another site's page makes is refused
        cross = await client.post(f"{API}/edit-tag", data={"i": "1", "a": "user/-/state/com.google/read"},
                                  headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"})
        assert cross.status_code == 403
