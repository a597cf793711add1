"""The JSON API contract: every route, its status codes and its JSON shapes, against a
real SQLite file and real feeds and pages served on 127.0.0.1."""

from __future__ import annotations

import datetime
import threading
from email.utils import format_datetime

import pytest

from ..helpers import app_client, rss, wait_for

FEED_KEYS = {"id", "url", "title", "site_url", "refreshed_at", "error", "note", "articles", "unread", "folder",
             "paused_until"}
ARTICLE_KEYS = {"id", "title", "url", "feed_id", "feed_title", "published", "state", "position", "lane", "wait_seconds", "error",
                "read", "starred", "added_at", "tags"}
QUEUE_KEYS = {"id", "position", "lane", "title", "url", "wait_seconds"}
LEDGER_KEYS = ("started", "cached", "failed", "abandoned", "running", "queued")
STATS_KEYS = {*LEDGER_KEYS, "bytes", "kinds", "images", "image_bytes", "raw_pages", "raw_page_bytes", "imported"}
KIND_KEYS = {"started", "cached", "failed", "abandoned", "running", "bytes"}


def ledger(stats: dict) -> dict:
    """The ledger's counts over every kind of run (the answer also has bytes and kinds)."""
    return {key: stats[key] for key in LEDGER_KEYS}
CONTENT_KEYS = {"id", "title", "author", "published", "lead", "html", "text", "figures", "words", "partial"}
RSS = {"Content-Type": "application/rss+xml"}
EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def date(hours: float) -> str:
    return format_datetime(EPOCH + datetime.timedelta(hours=hours), usegmt=True)


def serve_feed(pages, slugs, path="/feed.xml", title="Test feed", hours=None) -> str:
    """A feed of real article pages, item i published `hours[i]` hours after EPOCH."""
    hours = hours if hours is not None else list(range(len(slugs)))
    items = [
        {"title": f"Item {slug}", "link": pages.add_article(slug), "date": date(h)}
        for slug, h in zip(slugs, hours)
    ]
    return pages.add(path, rss(items, title=title), headers=RSS)


async def subscribe(client, pages, slugs, **kwargs) -> tuple[dict, list[int]]:
    """Subscribe to a fresh feed; returns the feed JSON and the article ids in `slugs` order."""
    response = await client.post("/api/feeds", json={"url": serve_feed(pages, slugs, **kwargs)})
    assert response.status_code == 201, response.text
    feed = response.json()
    items = (await client.get("/api/articles", params={"feed": feed["id"], "limit": 500})).json()["items"]
    by_url = {item["url"]: item["id"] for item in items}
    return feed, [by_url[pages.url(f"/{slug}.html")] for slug in slugs]


async def article(client, article_id) -> dict:
    response = await client.get(f"/api/articles/{article_id}")
    assert response.status_code == 200, response.text
    return response.json()


# -- feeds ---------------------------------------------------------------------------


async def test_feed_list_is_empty_before_any_subscription(quiet):
    response = await quiet.get("/api/feeds")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == {"feeds": []}


async def test_subscribing_returns_201_with_the_feed_refreshed_and_counted(quiet, pages):
    url = serve_feed(pages, ["a", "b", "c"], title="Lovely feed")
    response = await quiet.post("/api/feeds", json={"url": url})
    assert response.status_code == 201
    feed = response.json()
    assert set(feed) == FEED_KEYS
    assert feed["url"] == url and feed["title"] == "Lovely feed"
    assert feed["articles"] == 3 and feed["error"] is None and feed["refreshed_at"] is not None
    assert feed["site_url"] == "http://127.0.0.1/"
    listed = (await quiet.get("/api/feeds")).json()["feeds"]
    assert listed == [feed]


async def test_subscribing_twice_returns_200_and_the_same_feed_without_refetching(quiet, pages):
    url = serve_feed(pages, ["a"])
    first = await quiet.post("/api/feeds", json={"url": url})
    second = await quiet.post("/api/feeds", json={"url": url})
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json()["id"] == first.json()["id"]
    assert set(second.json()) == FEED_KEYS
    assert len((await quiet.get("/api/feeds")).json()["feeds"]) == 1
    assert pages.hits["/feed.xml"] == 1


async def test_subscribing_to_a_broken_feed_saves_nothing_and_says_why(quiet, pages):
    url = pages.url("/missing.xml")  # the page server answers 404
    response = await quiet.post("/api/feeds", json={"url": url})
    assert response.status_code == 422
    assert set(response.json()) == {"error"} and "404" in response.json()["error"]
    assert (await quiet.get("/api/feeds")).json() == {"feeds": []}


@pytest.mark.parametrize(
    "body",
    [{}, {"url": ""}, {"url": "   "}, {"url": 5}, {"url": None}, {"url": "not a url"},
     {"url": "ftp://example.org/feed"}, {"url": "javascript:alert(1)"}, {"url": "http://"}],
)
async def test_subscribing_without_an_http_url_is_422(quiet, body):
    response = await quiet.post("/api/feeds", json=body)
    assert response.status_code == 422
    assert set(response.json()) == {"error"} and response.json()["error"]
    assert (await quiet.get("/api/feeds")).json() == {"feeds": []}


@pytest.mark.parametrize("raw", [b"{", b"{'url': 'http://x'}", b"[1, 2]", b"null", b'"http://x/"'])
async def test_a_body_that_is_not_a_json_object_is_400(quiet, raw):
    response = await quiet.post("/api/feeds", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert set(response.json()) == {"error"} and response.json()["error"]


async def test_deleting_a_feed_takes_its_unkept_articles_along_and_says_so(quiet, pages):
    feed, ids = await subscribe(quiet, pages, ["a", "b"])
    await quiet.post(f"/api/articles/{ids[0]}/queue")
    response = await quiet.delete(f"/api/feeds/{feed['id']}")
    assert response.status_code == 200 and response.json() == {"kept": 0, "removed": 2}
    assert (await quiet.get("/api/feeds")).json() == {"feeds": []}
    assert (await quiet.get("/api/articles")).json() == {"items": []}
    assert (await quiet.get("/api/queue")).json() == {"items": []}
    assert (await quiet.get(f"/api/articles/{ids[0]}")).status_code == 404


async def test_deleting_an_unknown_feed_is_404(quiet, pages):
    feed, _ = await subscribe(quiet, pages, ["a"])
    assert (await quiet.delete(f"/api/feeds/{feed['id']}")).status_code == 200
    again = await quiet.delete(f"/api/feeds/{feed['id']}")
    assert again.status_code == 404 and set(again.json()) == {"error"}
    assert (await quiet.delete("/api/feeds/999999")).status_code == 404


async def test_refresh_reports_new_headlines_per_feed(quiet, pages):
    feed, _ = await subscribe(quiet, pages, ["a", "b"])
    serve_feed(pages, ["a", "b", "c"])  # the feed gained one item
    response = await quiet.post("/api/refresh")
    assert response.status_code == 200
    assert response.json() == {"feeds": [
        {"id": feed["id"], "url": feed["url"], "new": 1, "not_modified": False, "error": None}
    ]}
    assert (await quiet.get("/api/feeds")).json()["feeds"][0]["articles"] == 3


async def test_refresh_reports_not_modified_when_the_feed_answers_304(quiet, pages):
    body = rss([{"title": "Only", "link": pages.add_article("only")}]).encode()

    def conditional(headers: dict[str, str]):  # this request's headers
        if headers.get("If-None-Match") == '"v1"':
            return 304, {"ETag": '"v1"'}, b""
        return 200, {"Content-Type": "application/rss+xml", "ETag": '"v1"'}, body

    url = pages.add("/etag.xml", conditional)
    assert (await quiet.post("/api/feeds", json={"url": url})).status_code == 201
    result = (await quiet.post("/api/refresh")).json()["feeds"]
    assert [(r["url"], r["new"], r["not_modified"], r["error"]) for r in result] == [(url, 0, True, None)]


async def test_refresh_reports_a_failing_feed_and_keeps_its_articles(quiet, pages):
    good, _ = await subscribe(quiet, pages, ["a"], path="/good.xml", title="Good")
    bad, _ = await subscribe(quiet, pages, ["b", "c"], path="/bad.xml", title="Bad")
    pages.add("/bad.xml", "oops", status=500)
    results = {r["id"]: r for r in (await quiet.post("/api/refresh")).json()["feeds"]}
    assert set(results) == {good["id"], bad["id"]}
    assert results[good["id"]]["error"] is None
    assert "500" in results[bad["id"]]["error"] and results[bad["id"]]["new"] == 0
    feeds = {f["id"]: f for f in (await quiet.get("/api/feeds")).json()["feeds"]}
    assert feeds[bad["id"]]["articles"] == 2 and "500" in feeds[bad["id"]]["error"]


async def test_refresh_with_no_feeds_reports_an_empty_list(quiet):
    response = await quiet.post("/api/refresh")
    assert (response.status_code, response.json()) == (200, {"feeds": []})


# -- articles ------------------------------------------------------------------------


async def test_articles_have_the_documented_shape(quiet, pages):
    feed, ids = await subscribe(quiet, pages, ["a"], title="Shapes")
    items = (await quiet.get("/api/articles")).json()["items"]
    assert items == [{
        "id": ids[0], "title": "Item a", "url": pages.url("/a.html"), "feed_id": feed["id"],
        "feed_title": "Shapes", "also_in": [], "published": EPOCH.timestamp(), "state": "new", "position": None,
        "lane": None, "wait_seconds": None, "error": None, "read": False, "starred": False,
        "added_at": items[0]["added_at"], "tags": [], "read_position": None, "done": False, "done_at": None,
        "partial": None,
    }]
    assert isinstance(items[0]["added_at"], float)
    assert await article(quiet, ids[0]) == items[0]


async def test_articles_are_newest_first_by_published_then_id(quiet, pages):
    # published out of feed order, with ties that only the id can break
    hours = [5, 1, 5, 3, 1, 9]
    slugs = [f"s{i}" for i in range(len(hours))]
    _, ids = await subscribe(quiet, pages, slugs, hours=hours)
    items = (await quiet.get("/api/articles")).json()["items"]
    expected = sorted(zip(hours, ids), key=lambda pair: (pair[0], pair[1]), reverse=True)
    assert [i["id"] for i in items] == [article_id for _, article_id in expected]
    assert [i["published"] for i in items] == [EPOCH.timestamp() + h * 3600 for h, _ in expected]


async def test_keyset_pagination_walks_120_articles_in_pages_of_50_50_20_without_overlap_or_gap(quiet, pages):
    hours = [i // 3 for i in range(120)]  # groups of three share a published time
    items = [{"title": f"Headline {i}", "link": pages.url(f"/p{i}.html"), "date": date(h)}
             for i, h in enumerate(hours)]
    url = pages.add("/big.xml", rss(items), headers=RSS)
    assert (await quiet.post("/api/feeds", json={"url": url})).status_code == 201
    everything = (await quiet.get("/api/articles", params={"limit": 500})).json()["items"]
    assert len(everything) == 120

    seen, sizes, before = [], [], None
    while True:
        params = {"limit": 50} | ({"before": before} if before else {})
        page = (await quiet.get("/api/articles", params=params)).json()["items"]
        if not page:
            break
        sizes.append(len(page))
        seen += [i["id"] for i in page]
        before = page[-1]["id"]
    assert sizes == [50, 50, 20]
    assert seen == [i["id"] for i in everything]  # the same order, each id once
    assert len(set(seen)) == 120
    keys = [(i["published"], i["id"]) for i in everything]
    assert keys == sorted(keys, reverse=True)


async def test_limit_caps_the_page(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a", "b", "c"])
    items = (await quiet.get("/api/articles", params={"limit": 2})).json()["items"]
    assert [i["id"] for i in items] == [ids[2], ids[1]]


async def test_articles_filter_by_feed(quiet, pages):
    one, one_ids = await subscribe(quiet, pages, ["a", "b"], path="/one.xml", title="One")
    two, two_ids = await subscribe(quiet, pages, ["c"], path="/two.xml", title="Two")
    first = (await quiet.get("/api/articles", params={"feed": one["id"]})).json()["items"]
    second = (await quiet.get("/api/articles", params={"feed": two["id"]})).json()["items"]
    assert sorted(i["id"] for i in first) == sorted(one_ids)
    assert {i["feed_title"] for i in first} == {"One"}
    assert [i["id"] for i in second] == two_ids
    assert (await quiet.get("/api/articles", params={"feed": 999999})).json() == {"items": []}


async def test_articles_filter_by_state(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a", "b", "c"])
    await quiet.post(f"/api/articles/{ids[1]}/queue", json={"lane": "next"})
    queued = (await quiet.get("/api/articles", params={"state": "queued"})).json()["items"]
    assert [(i["id"], i["state"], i["position"], i["lane"]) for i in queued] == [(ids[1], "queued", 1, "next")]
    new = (await quiet.get("/api/articles", params={"state": "new"})).json()["items"]
    assert [i["id"] for i in new] == [ids[2], ids[0]]
    for state in ("cleaning", "ready", "failed"):
        assert (await quiet.get("/api/articles", params={"state": state})).json() == {"items": []}


@pytest.mark.parametrize(
    "params",
    [{"state": "bogus"}, {"state": "NEW"}, {"limit": "0"}, {"limit": "501"}, {"limit": "ten"},
     {"limit": "-1"}, {"before": "abc"}, {"before": "0"}, {"feed": "x"}, {"feed": "1.5"},
     # past SQLite's 64-bit integers: once an OverflowError, a bare 500
     {"before": str(2**63)}, {"feed": "99999999999999999999"}],
)
async def test_bad_article_list_parameters_are_422(quiet, params):
    response = await quiet.get("/api/articles", params=params)
    assert response.status_code == 422
    assert set(response.json()) == {"error"} and response.json()["error"]


async def test_an_unknown_article_is_404(quiet):
    for method, path in [("GET", "/api/articles/4242"), ("POST", "/api/articles/4242/queue"),
                         ("DELETE", "/api/articles/4242/queue"), ("GET", "/api/articles/4242/content")]:
        response = await quiet.request(method, path)
        assert response.status_code == 404, (method, path)
        assert response.json() == {"error": "no such article"}


@pytest.mark.parametrize(
    "method, path",
    [("GET", "/api/articles/99999999999999999999"), ("POST", "/api/articles/99999999999999999999/queue"),
     ("DELETE", "/api/articles/99999999999999999999/queue"), ("GET", f"/api/articles/{2**63}/content"),
     ("DELETE", f"/api/feeds/{2**64}")],
)
async def test_an_id_too_large_for_sqlite_is_a_404_json_not_a_crash(quiet, method, path):
    response = await quiet.request(method, path)
    assert response.status_code == 404
    assert set(response.json()) == {"error"}


# -- the tap ---------------------------------------------------------------------------


async def test_queueing_reports_state_and_position_in_line(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a", "b"])
    first = await quiet.post(f"/api/articles/{ids[1]}/queue")
    second = await quiet.post(f"/api/articles/{ids[0]}/queue", json={"lane": "normal"})
    assert (first.status_code, second.status_code) == (200, 200)
    assert first.json() == {"id": ids[1], "state": "queued", "position": 1, "lane": "normal", "wait_seconds": None}
    assert second.json() == {"id": ids[0], "state": "queued", "position": 2, "lane": "normal", "wait_seconds": None}
    got = await article(quiet, ids[0])
    assert (got["state"], got["position"], got["lane"]) == ("queued", 2, "normal")


async def test_tapping_twice_is_harmless(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a", "b"])
    await quiet.post(f"/api/articles/{ids[0]}/queue")
    once = (await quiet.post(f"/api/articles/{ids[1]}/queue")).json()
    twice = (await quiet.post(f"/api/articles/{ids[1]}/queue")).json()
    assert once == twice == {"id": ids[1], "state": "queued", "position": 2, "lane": "normal", "wait_seconds": None}
    line = (await quiet.get("/api/queue")).json()["items"]
    assert [i["id"] for i in line] == [ids[0], ids[1]]
    assert (await quiet.get("/api/stats")).json()["queued"] == 2


async def test_the_next_lane_is_recorded(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a"])
    response = await quiet.post(f"/api/articles/{ids[0]}/queue", json={"lane": "next"})
    assert response.status_code == 200
    assert [(i["id"], i["lane"]) for i in (await quiet.get("/api/queue")).json()["items"]] == [(ids[0], "next")]


@pytest.mark.parametrize("lane", ["fast", "", None, 1, ["next"]])
async def test_an_unknown_lane_is_422_and_queues_nothing(quiet, pages, lane):
    _, ids = await subscribe(quiet, pages, ["a"])
    response = await quiet.post(f"/api/articles/{ids[0]}/queue", json={"lane": lane})
    assert response.status_code == 422 and "lane" in response.json()["error"]
    assert (await article(quiet, ids[0]))["state"] == "new"


async def test_queueing_with_a_malformed_body_is_400_and_queues_nothing(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a"])
    response = await quiet.post(f"/api/articles/{ids[0]}/queue", content=b"{lane: next}")
    assert response.status_code == 400 and set(response.json()) == {"error"}
    assert (await article(quiet, ids[0]))["state"] == "new"


async def test_unqueueing_puts_the_article_back_to_new_and_closes_the_gap(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a", "b", "c"])
    for i in ids:
        await quiet.post(f"/api/articles/{i}/queue")
    response = await quiet.delete(f"/api/articles/{ids[1]}/queue")
    assert response.status_code == 200
    assert response.json() == {"id": ids[1], "state": "new", "position": None, "lane": None, "wait_seconds": None}
    line = (await quiet.get("/api/queue")).json()["items"]
    assert [(i["id"], i["position"]) for i in line] == [(ids[0], 1), (ids[2], 2)]
    again = await quiet.delete(f"/api/articles/{ids[1]}/queue")  # not queued: still harmless
    assert again.status_code == 200 and again.json()["state"] == "new"


async def test_the_queue_lists_taps_in_service_order_with_titles_and_urls(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a", "b", "c"])
    order = [ids[2], ids[0], ids[1]]
    for i in order:
        await quiet.post(f"/api/articles/{i}/queue")
    response = await quiet.get("/api/queue")
    assert response.status_code == 200
    items = response.json()["items"]
    assert all(set(i) == QUEUE_KEYS for i in items)
    slug = {ids[0]: "a", ids[1]: "b", ids[2]: "c"}
    assert items == [
        {"id": i, "position": n, "lane": "normal", "title": f"Item {slug[i]}", "url": pages.url(f"/{slug[i]}.html"),
         "wait_seconds": None}
        for n, i in enumerate(order, start=1)
    ]


async def test_the_worker_cleans_a_tapped_article_and_it_leaves_the_queue(settings, pages):
    async with app_client(settings) as client:  # default settings: one worker in process
        _, ids = await subscribe(client, pages, ["a"])
        await client.post(f"/api/articles/{ids[0]}/queue")
        await wait_for(lambda: _state_is(client, ids[0], "ready"), timeout=30)
        assert (await client.get("/api/queue")).json() == {"items": []}
        ready = (await client.get("/api/articles", params={"state": "ready"})).json()["items"]
        assert [(i["id"], i["position"], i["error"]) for i in ready] == [(ids[0], None, None)]
        content = (await client.get(f"/api/articles/{ids[0]}/content")).json()
        assert "marker-a" in content["text"]
        # tapping a ready article queues nothing and reports it ready
        again = (await client.post(f"/api/articles/{ids[0]}/queue")).json()
        assert again == {"id": ids[0], "state": "ready", "position": None, "lane": None, "wait_seconds": None}
        stats = (await client.get("/api/stats")).json()
    assert pages.hits["/a.html"] == 1
    assert ledger(stats) == {"started": 1, "cached": 1, "failed": 0, "abandoned": 0, "running": 0, "queued": 0}


async def _state_is(client, article_id, state):
    return (await client.get(f"/api/articles/{article_id}")).json()["state"] == state


async def test_an_article_being_cleaned_is_listed_as_cleaning_and_not_in_line(settings, pages):
    gate = threading.Event()
    async with app_client(settings) as client:
        _, ids = await subscribe(client, pages, ["slow"])
        pages.add_article("slow", title="Item slow", gate=gate)  # the page now waits for the gate
        try:
            await client.post(f"/api/articles/{ids[0]}/queue")
            await wait_for(lambda: _state_is(client, ids[0], "cleaning"))
            cleaning = (await client.get("/api/articles", params={"state": "cleaning"})).json()["items"]
            assert [(i["id"], i["position"]) for i in cleaning] == [(ids[0], None)]
            assert (await client.get("/api/queue")).json() == {"items": []}
            assert (await client.get("/api/stats")).json()["running"] == 1
        finally:
            gate.set()
        await wait_for(lambda: _state_is(client, ids[0], "ready"), timeout=30)


# -- content: the direct lane -----------------------------------------------------------


async def test_content_is_extracted_on_first_request_and_served_from_cache_after(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a"])
    first = await quiet.get(f"/api/articles/{ids[0]}/content")
    assert first.status_code == 200
    content = first.json()
    assert set(content) == CONTENT_KEYS
    assert content["id"] == ids[0] and content["title"] == "Article a"
    assert content["author"] == "Test Author"
    assert "marker-a" in content["text"] and "marker-a" in content["html"]
    assert "Copyright footer" not in content["text"] and "Section 3" not in content["text"]
    assert content["words"] == len(content["text"].split()) > 100
    second = await quiet.get(f"/api/articles/{ids[0]}/content")
    assert second.json() == content
    assert pages.hits["/a.html"] == 1
    runs = await quiet.app.state.reader._store.runs()
    assert [(r["article_id"], r["lane"], r["outcome"]) for r in runs] == [(ids[0], "direct", "cached")]
    assert (await article(quiet, ids[0]))["state"] == "ready"


async def test_content_names_the_lead_and_the_figures_and_its_text_is_the_body(quiet, pages):
    lead = "The harbour reopens next spring after two years of works, and the fleet returns to its moorings."
    caption = "The harbour at dawn, seen from the lighthouse on the northern pier"
    prose = [f"Paragraph {i} of the harbour report carries enough ordinary words to read as prose, with "
             f"clauses, commas and a full stop at the end of it." for i in range(8)]
    body = "".join(f"<p>{p}</p>" for p in prose[:4]) + (
        f'<figure><img src="/dawn.jpg" alt="The harbour"><figcaption>{caption}</figcaption></figure>') + "".join(
        f"<p>{p}</p>" for p in prose[4:])
    _, ids = await subscribe(quiet, pages, ["dek"])
    pages.add("/dek.html", f"""<!doctype html><html><head><meta charset="utf-8"><title>The harbour report</title>
</head><body><div class="article-header"><h1>The harbour report</h1><p class="standfirst">{lead}</p></div>
<div class="row"><div class="article-body">{body}</div><div class="side"><p>Sidebar</p></div></div></body></html>""")
    content = (await quiet.get(f"/api/articles/{ids[0]}/content")).json()
    assert content["lead"] == lead
    assert [f["caption"] for f in content["figures"]] == [caption]
    assert lead in content["html"] and caption in content["html"]
    assert lead not in content["text"] and caption not in content["text"]
    assert all(p in content["text"] for p in prose)
    assert content["words"] == len(content["text"].split())


async def test_content_of_a_page_that_cannot_be_fetched_is_502_and_marks_the_article_failed(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["gone"])
    pages.add("/gone.html", "gone", status=410)
    response = await quiet.get(f"/api/articles/{ids[0]}/content")
    assert response.status_code == 502
    assert set(response.json()) == {"error"} and "410" in response.json()["error"]
    failed = await article(quiet, ids[0])
    assert failed["state"] == "failed" and "410" in failed["error"]
    listed = (await quiet.get("/api/articles", params={"state": "failed"})).json()["items"]
    assert [(i["id"], i["error"]) for i in listed] == [(ids[0], failed["error"])]


# -- the ledger -------------------------------------------------------------------------


async def test_stats_start_at_zero(quiet):
    response = await quiet.get("/api/stats")
    assert response.status_code == 200
    assert ledger(response.json()) == {"started": 0, "cached": 0, "failed": 0, "abandoned": 0, "running": 0, "queued": 0}
    assert response.json()["bytes"] == 0 and set(response.json()["kinds"]) == {"fetch", "reclean", "browser"}
    assert response.json()["imported"] == 0


async def test_stats_count_every_extraction_and_the_line(quiet, pages):
    _, ids = await subscribe(quiet, pages, ["a", "bad", "c"])
    pages.add("/bad.html", "nope", status=404)
    assert (await quiet.get(f"/api/articles/{ids[0]}/content")).status_code == 200
    assert (await quiet.get(f"/api/articles/{ids[1]}/content")).status_code == 502
    await quiet.post(f"/api/articles/{ids[2]}/queue")
    stats = (await quiet.get("/api/stats")).json()
    assert set(stats) == STATS_KEYS
    assert ledger(stats) == {"started": 2, "cached": 1, "failed": 1, "abandoned": 0, "running": 0, "queued": 1}
    fetches = stats["kinds"]["fetch"]
    assert set(fetches) == KIND_KEYS and (fetches["started"], fetches["cached"], fetches["failed"]) == (2, 1, 1)
    assert fetches["bytes"] == stats["bytes"] > 0


# -- errors -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/nope", "/api/articles/abc", "/api/feeds/1/articles", "/api/articles/1/bogus"])
async def test_unknown_api_paths_are_404_json(quiet, path):
    response = await quiet.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
    assert set(response.json()) == {"error"} and response.json()["error"]


@pytest.mark.parametrize(
    "method, path",
    [("PUT", "/api/feeds"), ("DELETE", "/api/feeds"), ("GET", "/api/feeds/1"), ("GET", "/api/refresh"),
     ("PUT", "/api/articles"), ("DELETE", "/api/articles/1"), ("GET", "/api/articles/1/queue"),
     ("POST", "/api/articles/1/content"), ("POST", "/api/queue"), ("DELETE", "/api/stats")],
)
async def test_a_wrong_method_is_405_json_naming_the_allowed_ones(quiet, method, path):
    response = await quiet.request(method, path)
    assert response.status_code == 405
    assert response.headers["content-type"].startswith("application/json")
    assert set(response.json()) == {"error"} and response.json()["error"]
    assert response.headers.get("allow")
