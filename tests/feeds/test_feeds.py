"""Feeds in: RSS, Atom and JSON Feed through the API, conditional GET, broken feeds,
hostile entries, and the offline sample feed. Real SQLite, real HTTP on 127.0.0.1."""

from __future__ import annotations

import html
import json
from datetime import UTC, datetime

import pytest
from lxml import html as lxml_html

from reader.samples import SAMPLE_FEED_URL

from ..helpers import LoopbackServer, app_client, rss, wait_for

RSS = {"Content-Type": "application/rss+xml"}
ATOM = {"Content-Type": "application/atom+xml"}
JSON_FEED = {"Content-Type": "application/feed+json"}

NOV_2 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC).timestamp()
NOV_3 = datetime(2026, 11, 3, 10, 0, tzinfo=UTC).timestamp()

# What a hostile feed puts in a summary: a script, an event handler, a javascript: link.
HOSTILE_SUMMARY = (
    '<p>Hello <b>world</b></p><script>alert("pwned")</script>'
    '<img src="/pic.png" onerror="alert(2)"><a href="javascript:alert(3)">click</a>'
)


# -- feed builders ----------------------------------------------------------------------

def atom(entries: list[dict], title: str = "Atom feed") -> str:
    body = "".join(
        f"""<entry><id>{e['id']}</id><title>{e['title']}</title>
<link rel="alternate" href="{html.escape(e['link'])}"/>
<published>{e['published']}</published><updated>{e['published']}</updated>
<summary type="html">{html.escape(e.get('summary', ''))}</summary></entry>"""
        for e in entries
    )
    return f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>{title}</title><id>urn:test:feed</id>
<updated>2026-11-03T10:00:00Z</updated><link rel="alternate" href="http://127.0.0.1/"/>{body}</feed>"""


def json_feed(items: list[dict], title: str = "JSON feed") -> str:
    return json.dumps({
        "version": "https://jsonfeed.org/version/1.1",
        "title": title,
        "home_page_url": "http://127.0.0.1/",
        "items": items,
    })


def three_formats(pages: LoopbackServer) -> dict[str, tuple[str, dict, str, list[tuple[str, str, float]]]]:
    """The same two headlines as RSS 2.0, Atom 1.0 and JSON Feed 1.1:
    name -> (body, headers, feed title, [(title, url, published)])."""
    first, second = pages.url("/posts/first.html"), pages.url("/posts/second.html")
    expected = [("First post", first, NOV_2), ("Second post", second, NOV_3)]
    return {
        "rss": (
            rss([
                {"title": "First post", "link": first, "summary": html.escape(HOSTILE_SUMMARY),
                 "date": "Mon, 02 Nov 2026 10:00:00 GMT"},
                {"title": "Second post", "link": second, "summary": "plain",
                 "date": "Tue, 03 Nov 2026 10:00:00 GMT"},
            ], title="An RSS feed"),
            RSS, "An RSS feed", expected,
        ),
        "atom": (
            atom([
                {"id": "urn:test:1", "title": "First post", "link": first, "summary": HOSTILE_SUMMARY,
                 "published": "2026-11-02T10:00:00Z"},
                {"id": "urn:test:2", "title": "Second post", "link": second, "summary": "plain",
                 "published": "2026-11-03T10:00:00Z"},
            ], title="An Atom feed"),
            ATOM, "An Atom feed", expected,
        ),
        "json": (
            json_feed([
                {"id": "1", "url": first, "title": "First post", "content_html": HOSTILE_SUMMARY,
                 "date_published": "2026-11-02T10:00:00Z", "authors": [{"name": "Ann"}]},
                {"id": "2", "url": second, "title": "Second post", "content_text": "plain",
                 "date_published": "2026-11-03T10:00:00Z"},
            ], title="A JSON feed"),
            JSON_FEED, "A JSON feed", expected,
        ),
    }


# -- helpers -------------------------------------------------------------------------------

async def subscribe(client, url: str) -> dict:
    response = await client.post("/api/feeds", json={"url": url})
    assert response.status_code == 201, response.text
    return response.json()


async def articles_of(client, feed_id: int) -> list[dict]:
    response = await client.get("/api/articles", params={"feed": feed_id, "limit": 500})
    assert response.status_code == 200
    return response.json()["items"]


async def feed_row(client, feed_id: int) -> dict:
    feeds = (await client.get("/api/feeds")).json()["feeds"]
    return next(f for f in feeds if f["id"] == feed_id)


async def refresh(client) -> dict[int, dict]:
    response = await client.post("/api/refresh")
    assert response.status_code == 200
    return {r["id"]: r for r in response.json()["feeds"]}


def header(headers: dict[str, str], name: str) -> str | None:
    """A request header as the page server saw it, whatever its spelling."""
    return next((v for k, v in headers.items() if k.lower() == name.lower()), None)


def requests_for(pages: LoopbackServer, path: str) -> list[dict[str, str]]:
    return [h for p, h in list(pages.requests) if p == path]


# -- 1. the three formats ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["rss", "atom", "json"])
async def test_each_feed_format_subscribes_with_headlines_and_sanitized_summaries(client, pages, kind):
    body, headers, feed_title, expected = three_formats(pages)[kind]
    url = pages.add(f"/feed.{kind}", body, headers=headers)

    feed = await subscribe(client, url)

    assert feed["title"] == feed_title
    assert feed["error"] is None and feed["articles"] == 2
    items = await articles_of(client, feed["id"])
    assert sorted((a["title"], a["url"], a["published"]) for a in items) == expected
    assert {a["feed_id"] for a in items} == {feed["id"]}
    assert {a["state"] for a in items} == {"new"}

    store = client.app.state.reader._store
    first = next(a for a in items if a["title"] == "First post")
    summary = (await store.get_article(first["id"]))["summary"]
    assert "<b>world</b>" in summary  # harmless markup survives
    for poison in ("<script", "alert", "onerror", "javascript:"):
        assert poison not in summary
    assert f'src="{pages.url("/pic.png")}"' in summary  # relative image made absolute
    page = (await client.get("/")).text
    assert "First post" in page and "alert(" not in page


async def test_json_feed_is_read_by_sniffing_even_when_served_as_text_plain(client, pages):
    body, _, _, expected = three_formats(pages)["json"]
    feed = await subscribe(client, pages.add("/feed.txt", body, headers={"Content-Type": "text/plain"}))
    items = await articles_of(client, feed["id"])
    assert sorted((a["title"], a["url"], a["published"]) for a in items) == expected


async def test_an_empty_but_valid_feed_subscribes_without_an_error(client, pages):
    # A new blog has a channel and no items yet: that is a feed, not a broken one.
    path = "/empty.xml"
    url = pages.add(path, rss([], title="Brand new blog"), headers=RSS)
    feed = await subscribe(client, url)
    assert feed["error"] is None
    assert feed["title"] == "Brand new blog" and feed["articles"] == 0

    pages.add(path, rss([{"title": "Hello world", "link": pages.url("/hello.html")}], title="Brand new blog"),
              headers=RSS)
    assert (await refresh(client))[feed["id"]]["new"] == 1
    assert [a["title"] for a in await articles_of(client, feed["id"])] == ["Hello world"]


# -- 2. conditional GET -------------------------------------------------------------------------

async def test_a_refresh_sends_etag_and_last_modified_back_and_a_304_changes_nothing(client, pages):
    path = "/conditional.xml"
    version = {"etag": '"v1"', "modified": "Mon, 02 Nov 2026 10:00:00 GMT",
               "items": [{"title": "Old news", "link": pages.url("/old.html")}]}

    def answer(sent: dict[str, str]):
        # A real conditional server: 304 only when the client proves it holds this version.
        if header(sent, "If-None-Match") == version["etag"]:
            return 304, {"ETag": version["etag"]}, b""
        return 200, {"Content-Type": "application/rss+xml", "ETag": version["etag"],
                     "Last-Modified": version["modified"]}, rss(version["items"]).encode()

    feed = await subscribe(client, pages.add(path, answer))
    before = await articles_of(client, feed["id"])
    assert [a["title"] for a in before] == ["Old news"]
    first_request = requests_for(pages, path)[0]
    assert header(first_request, "If-None-Match") is None and header(first_request, "If-Modified-Since") is None

    result = (await refresh(client))[feed["id"]]

    second_request = requests_for(pages, path)[1]
    assert header(second_request, "If-None-Match") == '"v1"'
    assert header(second_request, "If-Modified-Since") == "Mon, 02 Nov 2026 10:00:00 GMT"
    assert result["not_modified"] is True and result["new"] == 0 and result["error"] is None
    assert await articles_of(client, feed["id"]) == before
    row = await feed_row(client, feed["id"])
    assert row["error"] is None and row["articles"] == 1

    # After a 304 the validators are still held; a new version arrives whole.
    version.update(etag='"v2"', modified="Tue, 03 Nov 2026 10:00:00 GMT",
                   items=[{"title": "Fresh news", "link": pages.url("/fresh.html")}, *version["items"]])
    result = (await refresh(client))[feed["id"]]
    assert header(requests_for(pages, path)[2], "If-None-Match") == '"v1"'
    assert result["not_modified"] is False and result["new"] == 1
    assert sorted(a["title"] for a in await articles_of(client, feed["id"])) == ["Fresh news", "Old news"]

    await refresh(client)
    last = requests_for(pages, path)[3]
    assert header(last, "If-None-Match") == '"v2"'
    assert header(last, "If-Modified-Since") == "Tue, 03 Nov 2026 10:00:00 GMT"


# -- 3. broken feeds ----------------------------------------------------------------------------

GOOD_ITEMS = [{"title": "Kept one", "guid": "k1"}, {"title": "Kept two", "guid": "k2"}]

BREAKAGES = {
    # name: (how to break the route, expected start of the error)
    "malformed-xml": (lambda pages, path: pages.add(path, b"<?xml version='1.0'?><rss><channel><<<\x00 garbage",
                                                    headers=RSS), "not a feed"),
    "html-page": (lambda pages, path: pages.add(
        path, "<!doctype html><html><head><title>Welcome</title></head><body><p>Our new site!</p></body></html>"),
        "not a feed"),
    "http-500": (lambda pages, path: pages.add(path, "oops", status=500, headers={"Content-Type": "text/plain"}),
                 "the site answered HTTP 500"),
    "dead-host": (lambda pages, path: pages.stop(), "could not connect to 127.0.0.1"),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
async def test_a_broken_feed_keeps_its_old_articles_and_shows_its_error(client, breakage):
    origin = LoopbackServer().start()  # a server of its own, so "dead host" can really die
    try:
        path = "/feed.xml"
        items = [dict(i, link=origin.url(f"/{i['guid']}.html")) for i in GOOD_ITEMS]
        good = rss(items, title="Sometimes broken")
        # Connection: close, so no kept-alive socket outlives the server in the dead-host case.
        url = origin.add(path, good, headers={**RSS, "Connection": "close"})
        feed = await subscribe(client, url)
        before = await articles_of(client, feed["id"])
        assert sorted(a["title"] for a in before) == ["Kept one", "Kept two"]

        breaker, expected_error = BREAKAGES[breakage]
        breaker(origin, path)
        result = (await refresh(client))[feed["id"]]

        assert result["error"].startswith(expected_error), result["error"]
        row = await feed_row(client, feed["id"])
        assert row["error"] == result["error"]
        assert row["title"] == "Sometimes broken" and row["articles"] == 2
        assert await articles_of(client, feed["id"]) == before

        if breakage == "dead-host":
            origin.restart()  # the dead host comes back on the same port
        origin.add(path, good, headers={**RSS, "Connection": "close"})
        result = (await refresh(client))[feed["id"]]
        assert result["error"] is None and result["new"] == 0
        assert (await feed_row(client, feed["id"]))["error"] is None
        assert await articles_of(client, feed["id"]) == before
    finally:
        origin.stop()


async def test_a_feed_that_fails_at_subscription_is_refused_and_not_saved(client, pages):
    url = pages.add("/nope.xml", "gone", status=404, headers={"Content-Type": "text/plain"})
    response = await client.post("/api/feeds", json={"url": url})
    assert response.status_code == 422
    assert response.json()["error"] == f"{url} was not subscribed: the site answered HTTP 404 Not Found."
    assert (await client.get("/api/feeds")).json() == {"feeds": []}


# -- 4. refreshing never queues -------------------------------------------------------------------

async def test_refreshing_with_the_worker_running_queues_and_cleans_nothing(client, pages):
    links = [pages.add_article(f"r{i}") for i in range(5)]
    path = "/feed.xml"
    pages.add(path, rss([{"title": f"Story {i}", "link": link} for i, link in enumerate(links[:4])]), headers=RSS)
    feed = await subscribe(client, pages.url(path))
    assert client.app.state.reader._worker is not None  # the worker is there to misbehave

    await refresh(client)  # the same items again
    pages.add(path, rss([{"title": f"Story {i}", "link": link} for i, link in enumerate(links)]), headers=RSS)
    assert (await refresh(client))[feed["id"]]["new"] == 1

    stats = (await client.get("/api/stats")).json()
    assert stats["queued"] == 0 and stats["started"] == 0
    assert (await client.get("/api/queue")).json()["items"] == []
    items = await articles_of(client, feed["id"])
    assert len(items) == 5 and {a["state"] for a in items} == {"new"}

    # Prove the worker was live all along: a real tap is served, and it is the only run.
    canary = next(a for a in items if a["url"] == links[0])
    assert (await client.post(f"/api/articles/{canary['id']}/queue")).status_code == 200

    async def canary_ready():
        return (await client.get(f"/api/articles/{canary['id']}")).json()["state"] == "ready"

    await wait_for(canary_ready, timeout=30)
    stats = (await client.get("/api/stats")).json()
    assert stats["started"] == 1 and stats["cached"] == 1 and stats["queued"] == 0
    assert [r["article_id"] for r in await client.app.state.reader._store.runs()] == [canary["id"]]
    assert [pages.hits[f"/r{i}.html"] for i in range(5)] == [1, 0, 0, 0, 0]


# -- 5. odd and hostile entries --------------------------------------------------------------------

async def test_duplicate_guids_within_one_feed_make_one_article(client, pages):
    items = [
        {"title": "Take one", "link": pages.url("/one.html"), "guid": "same-guid"},
        {"title": "Take two", "link": pages.url("/two.html"), "guid": "same-guid"},
        {"title": "Other", "link": pages.url("/other.html"), "guid": "other-guid"},
    ]
    feed = await subscribe(client, pages.add("/dups.xml", rss(items), headers=RSS))
    found = await articles_of(client, feed["id"])
    assert len(found) == 2 and feed["articles"] == 2
    assert "Other" in {a["title"] for a in found}
    # Refreshing the same feed adds nothing.
    assert (await refresh(client))[feed["id"]]["new"] == 0
    assert len(await articles_of(client, feed["id"])) == 2


@pytest.mark.parametrize("kind", ["rss", "atom", "json"])
async def test_relative_links_resolve_against_the_feed_url(client, pages, kind):
    entries = [("Sibling", "sibling.html"), ("Rooted", "/rooted/page.html"), ("Parent", "../up.html")]
    if kind == "rss":
        body, headers = rss([{"title": t, "link": link, "guid": t} for t, link in entries]), RSS
    elif kind == "atom":
        body, headers = atom([{"id": f"urn:{t}", "title": t, "link": link, "published": "2026-11-02T10:00:00Z"}
                              for t, link in entries]), ATOM
    else:
        body, headers = json_feed([{"id": t, "title": t, "url": link} for t, link in entries]), JSON_FEED
    feed = await subscribe(client, pages.add(f"/feeds/deep/{kind}", body, headers=headers))

    urls = {a["title"]: a["url"] for a in await articles_of(client, feed["id"])}
    assert urls == {
        "Sibling": pages.url("/feeds/deep/sibling.html"),
        "Rooted": pages.url("/rooted/page.html"),
        "Parent": pages.url("/feeds/up.html"),
    }


@pytest.mark.parametrize("kind", ["rss", "atom", "json"])
async def test_a_javascript_link_never_becomes_an_article_url(client, pages, kind):
    hostile = ["javascript:alert(1)", "JavaScript:alert(2)", " javascript:alert(3)", "data:text/html,<b>x</b>"]
    good = pages.url("/fine.html")
    if kind == "rss":
        body = rss([{"title": f"Bad {i}", "link": html.escape(link), "guid": f"bad-{i}"}
                    for i, link in enumerate(hostile)] + [{"title": "Fine", "link": good}])
        headers = RSS
    elif kind == "atom":
        body = atom([{"id": f"urn:bad:{i}", "title": f"Bad {i}", "link": link, "published": "2026-11-02T10:00:00Z"}
                     for i, link in enumerate(hostile)]
                    + [{"id": "urn:fine", "title": "Fine", "link": good, "published": "2026-11-02T10:00:00Z"}])
        headers = ATOM
    else:
        body = json_feed([{"id": f"bad-{i}", "title": f"Bad {i}", "url": link} for i, link in enumerate(hostile)]
                         + [{"id": "fine", "title": "Fine", "url": good}])
        headers = JSON_FEED
    url = pages.add(f"/hostile.{kind}", body, headers=headers)
    feed = await subscribe(client, url)

    items = await articles_of(client, feed["id"])
    assert len(items) == len(hostile) + 1
    urls = {a["title"]: a["url"] for a in items}
    assert urls.pop("Fine") == good
    # What exists: a link that is not http(s) falls back to the feed's own URL.
    assert set(urls.values()) == {url}
    page = (await client.get("/")).text
    assert "javascript:" not in page.lower() and "data:text" not in page


async def test_a_malformed_link_costs_only_its_own_entry_link_not_the_whole_feed(client, pages):
    # urljoin raises ValueError on "http://[::1/..."; that used to fail every headline.
    items = [{"id": "bad", "title": "Bad link", "url": "http://[::1/oops"},
             {"id": "good", "title": "Good link", "url": pages.url("/good.html")}]
    url = pages.add("/malformed.json", json_feed(items), headers=JSON_FEED)
    feed = await subscribe(client, url)
    assert feed["error"] is None
    urls = {a["title"]: a["url"] for a in await articles_of(client, feed["id"])}
    assert urls == {"Bad link": url, "Good link": pages.url("/good.html")}


@pytest.mark.parametrize("kind", ["rss", "json"])
async def test_a_link_with_an_upper_case_scheme_is_kept(client, pages, kind):
    # Schemes are case-insensitive; an https link in an http feed used to fall back to the feed URL.
    link = "HTTPS://example.org/Upper-Case-Scheme"
    if kind == "rss":
        body, headers = rss([{"title": "Shouty", "link": link}]), RSS
    else:
        body, headers = json_feed([{"id": "1", "title": "Shouty", "url": link}]), JSON_FEED
    feed = await subscribe(client, pages.add(f"/shouty.{kind}", body, headers=headers))
    [item] = await articles_of(client, feed["id"])
    assert item["url"].lower() == link.lower()


async def test_script_in_a_title_comes_out_as_plain_text(client, pages):
    items = [
        # Markup in the title: the script and its text go, the words stay.
        {"title": html.escape("<script>alert('t1')</script>Breaking <b>news</b>"), "link": pages.url("/a.html")},
        # Text that merely looks like a tag (double-escaped): kept as text, shown escaped.
        {"title": html.escape(html.escape("Why <script> tags matter")), "link": pages.url("/b.html")},
    ]
    json_items = [{"id": "j", "title": "<script>alert('t2')</script>JSON headline", "url": pages.url("/c.html")}]
    rss_feed = await subscribe(client, pages.add("/titles.xml", rss(items), headers=RSS))
    json_feed_ = await subscribe(client, pages.add("/titles.json", json_feed(json_items), headers=JSON_FEED))

    titles = {a["url"]: a["title"] for a in await articles_of(client, rss_feed["id"])}
    titles.update({a["url"]: a["title"] for a in await articles_of(client, json_feed_["id"])})
    assert titles == {
        pages.url("/a.html"): "Breaking news",
        pages.url("/b.html"): "Why <script> tags matter",
        pages.url("/c.html"): "JSON headline",
    }
    page = (await client.get("/")).text
    assert "alert(" not in page
    tree = lxml_html.fromstring(page)
    assert [s.get("src") for s in tree.iter("script")] == [
        "/static/app.js", "/static/vendor/htmx-4.0.1/htmx.min.js", "/static/offline.js"]
    assert "Why &lt;script&gt; tags matter" in page
    assert "Why <script> tags matter" in [h.text_content().strip() for h in tree.iter("h2")]


# -- 6. the sample feed -----------------------------------------------------------------------------

async def test_the_embedded_sample_feed_subscribes_offline_with_private_urls_refused(settings):
    async with app_client(settings.replace(allow_private_urls=False)) as client:
        feed = await subscribe(client, SAMPLE_FEED_URL)
        assert feed["error"] is None and feed["title"] == "reader samples"
        items = await articles_of(client, feed["id"])
        assert len(items) == 8
        assert all(a["url"].startswith("https://samples.reader.invalid/articles/") for a in items)
        assert all(a["title"] and a["published"] for a in items)
        # And an article of it is cleaned offline too.
        article = items[0]
        response = await client.get(f"/api/articles/{article['id']}/content")
        assert response.status_code == 200 and response.json()["words"] > 50
