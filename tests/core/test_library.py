"""The library: subscribe by a feed's or a site's URL (feed discovery), rename, remove,
unread counts, and saving any link for later (form, API, CLI, bookmarklet). Real SQLite
files, real pages and feeds served on 127.0.0.1, the real CLI in a subprocess."""

from __future__ import annotations

import html
import json
import re

from reader.feeds.discover import feed_links
from reader.store import Store

from ..helpers import app_client, rss, run_cli, wait_for

RSS = {"Content-Type": "application/rss+xml"}
ATOM = {"Content-Type": "application/atom+xml"}


def site_page(links: str = "", title: str = "A site") -> str:
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="/style.css">{links}</head>
<body><h1>{title}</h1><p>Welcome to the site.</p></body></html>"""


def feed_of(pages, slugs: list[str], path: str = "/blog/feed.xml", title: str = "The blog") -> str:
    items = [{"title": f"Post {s}", "link": pages.add_article(s)} for s in slugs]
    return pages.add(path, rss(items, title=title), headers=RSS)



async def feeds_json(client) -> list[dict]:
    return (await client.get("/api/feeds")).json()["feeds"]


# -- discovery ------------------------------------------------------------------------------------


def test_feed_links_resolve_relative_hrefs_and_honour_base():
    page = b"""<html><head>
<link rel="alternate" type="application/json" href="/feed.json">
<link rel="Alternate stylesheet" type="text/css" href="/x.css">
<LINK REL="alternate" TYPE="application/atom+xml" HREF="atom.xml">
<link rel="alternate" type="application/rss+xml; charset=utf-8" href="../rss.xml">
<link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">
<link rel="alternate" type="text/html" href="/other-language/">
</head></html>"""
    assert feed_links(page, "https://example.org/blog/post/") == [
        "https://example.org/blog/post/atom.xml", "https://example.org/blog/rss.xml", "https://example.org/feed.json"]
    based = b'<head><base href="https://cdn.example.net/site/"><link rel="alternate" type="application/rss+xml" href="f.xml">'
    assert feed_links(based, "https://example.org/") == ["https://cdn.example.net/site/f.xml"]
    assert feed_links(b"<html><body>no head at all", "https://example.org/") == []


async def test_subscribing_by_a_sites_url_finds_its_feed_through_a_relative_link(quiet, pages):
    feed_url = feed_of(pages, ["a", "b"])
    site = pages.add("/", site_page('<link rel="alternate" type="application/rss+xml" title="RSS" href="blog/feed.xml">'))
    response = await quiet.post("/feeds", data={"url": site})
    assert (response.status_code, response.headers["location"]) == (303, "/feeds")
    [feed] = await feeds_json(quiet)
    assert feed["url"] == feed_url and feed["title"] == "The blog" and feed["articles"] == 2
    assert feed["error"] is None
    page = (await quiet.get("/feeds")).text
    assert "The blog" in page and "2 articles" in page

    # the API does the same, and a second time it is the same feed, fetched no more
    again = await quiet.post("/api/feeds", json={"url": site})
    assert again.status_code == 200 and again.json()["id"] == feed["id"]
    direct = await quiet.post("/api/feeds", json={"url": feed_url})
    assert direct.status_code == 200 and direct.json()["id"] == feed["id"]
    assert pages.hits["/blog/feed.xml"] == 1


async def test_the_api_discovers_an_atom_feed_from_an_absolute_link(quiet, pages):
    atom = pages.add("/atom.xml", f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom site</title><id>urn:x</id><updated>2026-11-02T10:00:00Z</updated>
<entry><title>Only entry</title><id>urn:e1</id><link href="{pages.add_article('e1')}"/><updated>2026-11-02T10:00:00Z</updated></entry>
</feed>""", headers=ATOM)
    site = pages.add("/home", site_page(f'<link rel="alternate" type="application/atom+xml" href="{atom}">'))
    response = await quiet.post("/api/feeds", json={"url": site})
    assert response.status_code == 201, response.text
    assert response.json()["url"] == atom and response.json()["articles"] == 1


async def test_a_page_without_a_feed_link_is_a_clear_error_and_subscribes_nothing(quiet, pages):
    site = pages.add("/plain", site_page())
    page = await quiet.post("/feeds", data={"url": site})
    assert page.status_code == 422
    assert "no feed found at" in page.text and "links to no RSS, Atom or JSON feed" in page.text
    assert f'value="{html.escape(site)}"' in page.text  # what was typed stays in the box
    api = await quiet.post("/api/feeds", json={"url": site})
    assert api.status_code == 422 and api.json()["error"].startswith(f"no feed found at {site}")
    assert await feeds_json(quiet) == []


async def test_adding_the_feed_url_directly_fetches_it_once(quiet, pages):
    feed_url = feed_of(pages, ["a", "b", "c"], path="/feed.xml", title="Direct")
    response = await quiet.post("/api/feeds", json={"url": feed_url})
    assert response.status_code == 201
    assert response.json()["title"] == "Direct" and response.json()["articles"] == 3
    assert pages.hits["/feed.xml"] == 1  # the one fetch both decided it is a feed and read it


async def test_the_cli_subscribes_by_a_sites_url(settings, pages):
    feed_url = feed_of(pages, ["a"])
    site = pages.add("/", site_page('<link rel="alternate" type="application/rss+xml" href="/blog/feed.xml">'))
    code, out, err = await run_cli(settings.db, "add-feed", site)
    assert code == 0, err
    assert "added" in out and f"found on {site}" in out and "1 articles" in out
    plain = pages.add("/plain", site_page())
    code, out, err = await run_cli(settings.db, "add-feed", plain)
    assert code == 1 and "no feed found" in err
    async with await Store.open(settings.db) as store:
        assert [f["url"] for f in await store.list_feeds()] == [feed_url]


# -- rename, remove, unread counts -----------------------------------------------------------------


async def test_rename_sticks_across_refreshes_and_remove_unsubscribes(quiet, pages):
    feed_of(pages, ["a", "b"], path="/feed.xml", title="Original name")
    [feed] = [(await quiet.post("/api/feeds", json={"url": pages.url("/feed.xml")})).json()]
    response = await quiet.post(f"/feeds/{feed['id']}/rename", data={"title": "  My <b>own</b> name "})
    assert (response.status_code, response.headers["location"]) == (303, "/feeds")
    assert (await feeds_json(quiet))[0]["title"] == "My own name"
    await quiet.post("/api/refresh")
    assert (await feeds_json(quiet))[0]["title"] == "My own name"  # a refresh does not undo it
    page = (await quiet.get("/feeds")).text
    assert f'<a href="/?feed={feed["id"]}">My own name</a>' in page

    assert (await quiet.post(f"/feeds/{feed['id']}/rename", data={"title": "   "})).status_code == 422
    assert (await quiet.post("/feeds/999/rename", data={"title": "x"})).status_code == 404

    response = await quiet.post(f"/feeds/{feed['id']}/delete", data={"confirm": "yes"})
    assert response.status_code == 303
    assert await feeds_json(quiet) == []
    assert (await quiet.get("/api/articles")).json()["items"] == []


async def test_the_feeds_page_shows_unread_counts_last_refresh_and_errors(quiet, pages):
    feed_of(pages, ["a", "b", "c"], path="/feed.xml", title="Counted")
    feed = (await quiet.post("/api/feeds", json={"url": pages.url("/feed.xml")})).json()
    pages.add("/gone.xml", rss([], title="Gone soon"), headers=RSS)
    broken = (await quiet.post("/api/feeds", json={"url": pages.url("/gone.xml")})).json()
    pages.add("/gone.xml", "gone", status=404)  # a feed that worked, then broke
    await quiet.post("/refresh", data={"feed": broken["id"], "next": "/feeds"})
    page = (await quiet.get("/feeds")).text
    assert "3 articles · 3 unread · refreshed just now" in page
    assert re.search(r'<p class="failure">the site answered HTTP 404', page)

    async with await Store.open(quiet.app.state.reader.settings.db) as store:
        first = (await store.list_articles(feed_id=feed["id"]))[0]
        await store.mark_read(first["id"])
        counts = {f["id"]: f["unread"] for f in await store.list_feeds()}
    assert counts == {feed["id"]: 2, broken["id"]: 0}
    assert "3 articles · 2 unread" in (await quiet.get("/feeds")).text

    # refresh one feed now, from its own button
    pages.add("/gone.xml", rss([{"title": "Back", "link": pages.add_article("back")}], title="Back again"),
              headers=RSS)
    response = await quiet.post("/refresh", data={"feed": broken["id"], "next": "/feeds"})
    assert response.status_code == 303
    page = (await quiet.get("/feeds")).text
    assert "HTTP 404" not in page and "Gone soon" in page  # the error went; the name it had stays


# -- saving links ------------------------------------------------------------------------------------


async def test_saving_a_link_through_the_browse_page_form(quiet, pages):
    url = pages.add_article("saved-one", "The real page title")
    browse = (await quiet.get("/")).text
    assert 'action="/save"' in browse and 'name="url"' in browse
    response = await quiet.post("/save", data={"url": url, "next": "/"})
    assert (response.status_code, response.headers["location"]) == (303, "/")
    again = await quiet.post("/save", data={"url": url, "next": "/"})
    assert again.status_code == 303
    [item] = (await quiet.get("/api/articles")).json()["items"]
    assert item["url"] == url and item["feed_id"] is None and item["state"] == "new"
    browse = (await quiet.get("/")).text
    assert f'id="card-{item["id"]}"' in browse and '</span></span>saved</p>' in browse  # unread, its source "saved"
    assert (await quiet.get("/api/queue")).json()["items"] == []  # saving is not a tap
    assert pages.hits["/saved-one.html"] == 0  # and fetches nothing

    bad = await quiet.post("/save", data={"url": "javascript:alert(1)", "next": "/"})
    assert bad.status_code == 422 and "not an http or https URL" in bad.text


async def test_saving_through_the_api_201_then_200_and_422_for_a_bad_url(quiet, pages):
    url = pages.add_article("api-saved")
    first = await quiet.post("/api/articles", json={"url": url, "title": "Given <i>title</i>"})
    assert first.status_code == 201
    body = first.json()
    assert body["url"] == url and body["title"] == "Given title" and body["feed_id"] is None
    assert body["state"] == "new" and body["feed_title"] is None
    second = await quiet.post("/api/articles", json={"url": url})
    assert second.status_code == 200 and second.json()["id"] == body["id"]
    for bad in ({}, {"url": "ftp://x/y"}, {"url": "not a url"}, {"url": 3}, {"url": url, "title": 5}):
        response = await quiet.post("/api/articles", json=bad)
        assert response.status_code == 422 and response.json()["error"], bad
    assert len((await quiet.get("/api/articles")).json()["items"]) == 1


async def test_a_saved_link_is_tapped_cleaned_and_takes_the_pages_title(settings, pages):
    url = pages.add_article("to-clean", "Title from the page itself")
    async with app_client(settings) as client:  # with its worker
        saved = (await client.post("/api/articles", json={"url": url})).json()
        assert saved["title"] == url  # a saved link knows only its URL until it is read
        tap = await client.post(f"/api/articles/{saved['id']}/queue")
        assert tap.status_code == 200

        async def ready():
            return (await client.get(f"/api/articles/{saved['id']}")).json()["state"] == "ready"

        await wait_for(ready)
        article = (await client.get(f"/api/articles/{saved['id']}")).json()
        assert article["title"] == "Title from the page itself"
        content = (await client.get(f"/api/articles/{saved['id']}/content")).json()
        assert "marker-to-clean" in content["text"]
        assert pages.hits["/to-clean.html"] == 1


async def test_saving_from_the_cli_twice_is_one_article(settings, pages):
    url = pages.add_article("cli-saved")
    code, out, err = await run_cli(settings.db, "save", url, "--title", "From the shell")
    assert code == 0, err
    assert re.fullmatch(r"article \d+: saved\n", out)
    code, out, err = await run_cli(settings.db, "save", url)
    assert code == 0 and out.endswith("already saved\n")
    code, out, err = await run_cli(settings.db, "save", "file:///etc/passwd")
    assert code == 2 and "not an http or https URL" in err
    async with await Store.open(settings.db) as store:
        [article] = await store.list_articles()
        assert (article["url"], article["title"], article["feed_id"]) == (url, "From the shell", None)
        assert await store.waiting() == []
    assert pages.hits["/cli-saved.html"] == 0


async def test_reader_stats_prints_the_ledger_the_api_shows(settings, pages):
    url = pages.add_article("counted")
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        saved = (await client.post("/api/articles", json={"url": url})).json()
        assert (await client.get(f"/api/articles/{saved['id']}/content")).status_code == 200
        other = (await client.post("/api/articles", json={"url": pages.add_article("waiting")})).json()
        assert (await client.post(f"/api/articles/{other['id']}/queue", json={})).status_code == 200
        api = (await client.get("/api/stats")).json()
    code, out, err = await run_cli(settings.db, "stats")
    assert code == 0, err
    assert json.loads(out) == api
    assert (api["started"], api["cached"], api["queued"]) == (1, 1, 1)


async def test_the_bookmarklet_is_on_the_feeds_page_and_its_confirmation_saves_with_csrf(quiet, pages):
    page = (await quiet.get("/feeds")).text
    hrefs = re.findall(r'href="(javascript:[^"]*)"', page)
    assert len(hrefs) == 1
    assert html.unescape(hrefs[0]) == (
        "javascript:(function(){var o=\"http://reader.test\",u=\"http://reader.test/save?url=\""
        "+encodeURIComponent(location.href)+'&title='+encodeURIComponent(document.title),"
        "w=window.open(u+'&page=1');if(!w){location.href=u;return;}"
        "window.addEventListener('message',function(e){if(e.origin===o&&e.source===w&&e.data==='reader:ready')"
        "w.postMessage({reader:'page',url:location.href,html:document.documentElement.outerHTML},o);});})()")

    url = pages.add_article("bookmarked")
    confirm = await quiet.get("/save", params={"url": url, "title": 'A "quoted" <title>'})
    assert confirm.status_code == 200
    assert f'value="{html.escape(url)}"' in confirm.text
    assert 'value="A &#34;quoted&#34; &lt;title&gt;"' in confirm.text
    token = re.search(r'name="csrf" value="([^"]+)"', confirm.text).group(1)
    assert (await quiet.get("/api/articles")).json()["items"] == []  # showing the form saves nothing

    # without the token (a page elsewhere posting the form) nothing is saved
    async with app_client(quiet.app.state.reader.settings, csrf=False) as bare:
        refused = await bare.post("/save", data={"url": url})
        assert refused.status_code == 403

    saved = await quiet.post("/save", data={"csrf": token, "url": url, "title": "Bookmarked page"})
    assert saved.status_code == 200 and "Saved" in saved.text and "Bookmarked page" in saved.text
    [item] = (await quiet.get("/api/articles")).json()["items"]
    assert (item["url"], item["title"]) == (url, "Bookmarked page")
    again = await quiet.post("/save", data={"csrf": token, "url": url})
    assert "Already saved" in again.text
    assert len((await quiet.get("/api/articles")).json()["items"]) == 1

    nonsense = await quiet.get("/save", params={"url": "javascript:alert(1)"})
    assert nonsense.status_code == 422 and "not an http or https URL" in nonsense.text
    assert 'href="javascript:' not in nonsense.text


# -- refused subscriptions ----------------------------------------------------------------------


async def test_a_refused_subscription_is_not_saved_and_says_why_in_one_plain_sentence(settings, pages):
    """A private address, a 404 and something that is not a feed: each answers the form with
    one sentence (no "blocked: … resolves to … is …"), keeps what was typed, saves nothing."""
    gone = pages.url("/gone.xml")  # the page server answers 404
    text = pages.add("/notes.txt", "just some words", content_type="text/plain")
    async with app_client(settings.replace(allow_private_urls=False)) as strict:
        page = await strict.post("/feeds", data={"url": "http://127.0.0.1:9/feed.xml"})
        assert page.status_code == 422
        [message] = re.findall(r'<p class="failure" role="alert">(.*?)</p>', page.text)
        assert html.unescape(message) == ("http://127.0.0.1:9/feed.xml was not subscribed: 127.0.0.1 is a"
                                          " loopback address (set READER_ALLOW_PRIVATE_URLS to allow).")
        named = await strict.post("/api/feeds", json={"url": "http://localhost:9/feed.xml"})
        assert named.status_code == 422
        assert "localhost resolves to 127.0.0.1, which is a loopback address" in named.json()["error"]
        assert (await strict.get("/api/feeds")).json() == {"feeds": []}
    async with app_client(settings) as client:
        for url, reason in ((gone, "the site answered HTTP 404 Not Found."), (text, "it is not a feed")):
            page = await client.post("/feeds", data={"url": url})
            assert page.status_code == 422
            [message] = re.findall(r'<p class="failure" role="alert">(.*?)</p>', page.text)
            assert html.unescape(message).startswith(f"{url} was not subscribed: {reason}")
            assert f'value="{html.escape(url)}"' in page.text  # what was typed stays in the box
        assert (await client.get("/api/feeds")).json() == {"feeds": []}
        assert "0 articles" not in (await client.get("/feeds")).text
