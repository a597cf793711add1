"""The HTML side: pages, the tap with and without JavaScript (htmx), reading, feeds and
stats, static files. Security lives with its kind: CSP and hostile markup in
test_xss.py, cross-site writes in test_access.py. Real SQLite files, real page servers."""

from __future__ import annotations

import html
import re
import threading

import pytest

from ..helpers import app_client, assert_strict_csp, card_ids, card_press, rss, serve_feed, state_of, subscribe_slugs, wait_for

HTMX = {"HX-Request": "true"}
OLDER = re.compile(r'<a href="([^"]+)" rel="next">Older headlines</a>')


def form_tag(page: str, action: str) -> str:
    """The opening <form ...> tag whose action is `action` (whitespace-tolerant)."""
    match = re.search(rf'<form\b[^>]*\baction="{re.escape(action)}"[^>]*>', page)
    assert match, f"no form posting to {action}"
    return " ".join(match.group(0).split())


# -- browsing ------------------------------------------------------------------------


async def test_browse_lists_cards_newest_first_each_with_a_queue_form_that_htmx_can_swap(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a", "b", "c"])
    response = await quiet.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    assert card_ids(page) == ids[::-1]
    # htmx swaps the card a button is in: the list gives its cards their target and swap
    assert re.search(r'<section class="cards list"[^>]*\bhx-target:inherited="closest article"'
                     r' hx-swap:inherited="outerHTML" hx-include:inherited="\.pending-id">', page)
    for article_id in ids:
        button = re.search(rf'<button [^>]*formaction="/articles/{article_id}/queue"[^>]*>', page)
        assert button and f'hx-post="/articles/{article_id}/queue"' in button.group(0)
        # without JavaScript: the page's one form, with the token and the way back
        path, fields = card_press(page, article_id, "queue")
        assert path == f"/articles/{article_id}/queue" and fields["csrf"] and fields["next"] == "/"
        # the link names the list it is in (all headlines here), for reading through it
        assert f'<a href="/articles/{article_id}?list=">' in page
    assert page.count(">queue</button>") == 3
    assert "Item c" in page and "Test feed" in page


async def test_an_empty_library_shows_a_hint_linking_to_the_feeds_page(quiet):
    page = (await quiet.get("/")).text
    hint = re.search(r'<p class="empty">(.*?)</p>', page, re.DOTALL)
    assert hint, "no empty-library hint"
    assert '<a href="/feeds">' in hint.group(1)
    assert card_ids(page) == []


async def test_older_headlines_pages_through_every_card_once(settings, pages):
    async with app_client(settings.replace(serve_workers=0, page_size=3)) as client:
        _, ids = await subscribe_slugs(client, pages, [f"s{i}" for i in range(7)])
        url, pages_seen = "/", []
        while url:
            page = (await client.get(url)).text
            pages_seen.append(card_ids(page))
            link = OLDER.search(page)
            url = html.unescape(link.group(1)) if link else None
    assert [len(p) for p in pages_seen] == [3, 3, 1]
    assert [i for p in pages_seen for i in p] == ids[::-1]


async def test_the_state_filter_shows_only_that_state_and_survives_pagination(settings, pages):
    async with app_client(settings.replace(serve_workers=0, page_size=2)) as client:
        _, ids = await subscribe_slugs(client, pages, ["a", "b", "c", "d", "e"])
        for article_id in ids[:3]:
            await client.post(f"/api/articles/{article_id}/queue")
        first = (await client.get("/", params={"state": "queued"})).text
        assert card_ids(first) == [ids[2], ids[1]]
        link = html.unescape(OLDER.search(first).group(1))
        assert "state=queued" in link
        second = (await client.get(link)).text
        assert card_ids(second) == [ids[0]]
        assert OLDER.search(second) is None
        assert card_ids((await client.get("/?state=new")).text) == [ids[4], ids[3]]
        assert card_ids((await client.get("/?state=bogus")).text) == [ids[4], ids[3]]  # ignored


async def test_browse_filters_by_feed(quiet, pages):
    one, one_ids = await subscribe_slugs(quiet, pages, ["a", "b"], path="/one.xml", title="One")
    await subscribe_slugs(quiet, pages, ["c"], path="/two.xml", title="Two")
    assert card_ids((await quiet.get(f"/?feed={one}")).text) == one_ids[::-1]


async def test_a_non_numeric_before_is_a_400_page(quiet):
    response = await quiet.get("/?before=abc")
    assert response.status_code == 400
    assert "<html" in response.text and "must be numbers" in response.text


# -- the tap without JavaScript ----------------------------------------------------------


async def test_a_form_tap_queues_and_redirects_303_to_next(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a"])
    response = await quiet.post(f"/articles/{ids[0]}/queue", data={"next": "/?state=new&before=7"})
    assert response.status_code == 303
    assert response.headers["location"] == "/?state=new&before=7"
    assert await state_of(quiet, ids[0]) == "queued"


@pytest.mark.parametrize(
    "target", ["https://evil.example/", "//evil.example", "//evil.example/path", "/\\evil.example",
               "\\\\evil.example", "javascript:alert(1)", "evil.example", ""],
)
async def test_a_form_tap_only_redirects_to_local_paths(quiet, pages, target):
    _, ids = await subscribe_slugs(quiet, pages, ["a"])
    response = await quiet.post(f"/articles/{ids[0]}/queue", data={"next": target})
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    assert await state_of(quiet, ids[0]) == "queued"


async def test_a_form_tap_without_next_redirects_home(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a"])
    response = await quiet.post(f"/articles/{ids[0]}/queue")
    assert (response.status_code, response.headers["location"]) == (303, "/")


async def test_a_form_unqueue_takes_the_article_out_of_line_and_redirects(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a"])
    await quiet.post(f"/articles/{ids[0]}/queue", data={"next": "/"})
    response = await quiet.post(f"/articles/{ids[0]}/unqueue", data={"next": "/?state=queued"})
    assert (response.status_code, response.headers["location"]) == (303, "/?state=queued")
    assert await state_of(quiet, ids[0]) == "new"


async def test_tapping_an_unknown_article_is_a_404_page(quiet):
    response = await quiet.post("/articles/999/queue", data={"next": "/"})
    assert response.status_code == 404
    assert "<html" in response.text and "no such article" in response.text


# -- the tap with htmx -----------------------------------------------------------------


async def test_an_htmx_tap_answers_with_just_the_card_showing_its_place_in_line(quiet, pages, settings):
    _, ids = await subscribe_slugs(quiet, pages, ["a", "b"])
    response = await quiet.post(f"/articles/{ids[1]}/queue", data={"next": "/"}, headers=HTMX)
    assert response.status_code == 200
    fragment = response.text
    assert fragment.lstrip().startswith("<article")
    assert f'id="card-{ids[1]}"' in fragment
    assert "<html" not in fragment and "<body" not in fragment and "<nav" not in fragment
    assert "#1 in line" in fragment
    # the card joins the page's one poller: its id is collected, and the poller switches on
    assert f'class="pending-id" name="id" value="{ids[1]}"' in fragment
    assert 'id="live"' in fragment and 'hx-swap-oob="true"' in fragment
    # as often as the setting says (the tests' is not the production 2 s)
    assert settings.poll_interval == 0.25
    assert 'hx-get="/live?list=" hx-trigger="every 0.25s" hx-include=".pending-id"' in fragment
    assert f'action="/articles/{ids[1]}/unqueue"' in fragment  # the queue button became unqueue
    second = await quiet.post(f"/articles/{ids[0]}/queue", headers=HTMX)
    assert "#2 in line" in second.text


async def test_one_live_poll_updates_every_pending_card_from_queued_to_cleaning_to_ready(settings, pages):
    gate = threading.Event()
    async with app_client(settings) as client:
        _, ids = await subscribe_slugs(client, pages, ["slow", "later"])
        pages.add_article("slow", gate=gate)
        await client.post(f"/articles/{ids[0]}/queue", headers=HTMX)
        await client.post(f"/articles/{ids[1]}/queue", headers=HTMX)
        seen = {ids[0]: [], ids[1]: []}

        async def poll():
            response = await client.get("/live", params=[("id", ids[0]), ("id", ids[1])], headers=HTMX)
            assert response.status_code == 200 and "<html" not in response.text
            for article_id in ids:
                card = re.search(rf'<article class="card (?:row |roomy )?state-(\w+)[^"]*" id="card-{article_id}"[^>]*>', response.text)
                assert 'hx-swap-oob="true"' in card.group(0)  # swapped in by id, out of band
                if not seen[article_id] or seen[article_id][-1] != card.group(1):
                    seen[article_id].append(card.group(1))
            return response

        await wait_for(lambda: _states_reached(poll, seen, ids[0], "cleaning"))
        assert seen[ids[1]] == ["queued"]
        assert "#1 in line" in (await poll()).text
        gate.set()
        last = await wait_for(lambda: _states_reached(poll, seen, ids[1], "ready"), timeout=30)
    assert seen[ids[0]] == ["cleaning", "ready"]
    assert seen[ids[1]][0] == "queued" and seen[ids[1]][-1] == "ready"
    assert 'hx-trigger' not in last.text  # nothing pending: the poller goes quiet


async def _states_reached(poll, seen, article_id, state):
    response = await poll()
    return response if seen[article_id][-1] == state else None


async def test_an_htmx_unqueue_answers_with_a_new_card_that_does_not_poll(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a"])
    await quiet.post(f"/articles/{ids[0]}/queue", headers=HTMX)
    response = await quiet.post(f"/articles/{ids[0]}/unqueue", headers=HTMX)
    assert response.status_code == 200
    assert "<html" not in response.text and f'id="card-{ids[0]}"' in response.text
    assert "hx-trigger" not in response.text
    assert f'action="/articles/{ids[0]}/queue"' in response.text


async def test_a_tapped_card_turns_ready_with_a_read_link_once_the_worker_cleans_it(settings, pages):
    async with app_client(settings) as client:  # default settings: a worker in process
        _, ids = await subscribe_slugs(client, pages, ["a"])
        tapped = await client.post(f"/articles/{ids[0]}/queue", headers=HTMX)
        assert tapped.status_code == 200 and f'id="card-{ids[0]}"' in tapped.text

        async def ready_card():
            card = await client.get(f"/articles/{ids[0]}/card")
            return card if re.search(r'class="card (row |roomy )?state-ready"', card.text) else None

        card = await wait_for(ready_card, timeout=30)
    assert card.status_code == 200 and "<html" not in card.text
    assert re.search(r'role="status">\s*ready\s*</(p|span)>', card.text)
    assert f'<a class="button" href="/articles/{ids[0]}">read</a>' in card.text
    assert "hx-trigger" not in card.text and "in line" not in card.text


async def test_a_card_being_cleaned_says_so_and_keeps_polling(settings, pages):
    gate = threading.Event()
    async with app_client(settings) as client:
        _, ids = await subscribe_slugs(client, pages, ["slow"])
        pages.add_article("slow", gate=gate)  # the page now answers only once the gate opens
        try:
            await client.post(f"/articles/{ids[0]}/queue", headers=HTMX)
            await wait_for(lambda: _is_cleaning(client, ids[0]))
            card = (await client.get(f"/articles/{ids[0]}/card")).text
            assert "cleaning…" in card
            assert 'class="pending-id"' in card  # still collected by the page's poller
            # nothing to queue or unqueue while it is being cleaned (star, read and tags stay,
            # behind its ⋯: the page's one menu)
            assert "/queue\"" not in card and "/unqueue\"" not in card
            assert "<form" not in card and 'class="more-toggle"' in card
        finally:
            gate.set()
        await wait_for(lambda: _is_ready(client, ids[0]), timeout=30)


async def _is_cleaning(client, article_id):
    return await state_of(client, article_id) == "cleaning"


async def _is_ready(client, article_id):
    return await state_of(client, article_id) == "ready"


async def test_the_card_of_an_unknown_article_is_404(quiet):
    response = await quiet.get("/articles/999/card")
    assert response.status_code == 404 and "no such article" in response.text


# -- reading ---------------------------------------------------------------------------


async def test_opening_an_uncached_article_extracts_it_now_and_shows_only_the_clean_text(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a"])
    response = await quiet.get(f"/articles/{ids[0]}")
    assert response.status_code == 200
    page = response.text
    assert "marker-a" in page
    assert "<h1>Article a</h1>" in page
    assert "Copyright footer text" not in page  # the page's footer
    assert "Section 3" not in page and "Related" not in page  # its navigation and sidebar
    assert "failed:" not in page
    assert await state_of(quiet, ids[0]) == "ready"
    again = await quiet.get(f"/articles/{ids[0]}")
    assert "marker-a" in again.text
    assert pages.hits["/a.html"] == 1  # the second open read the cache


async def test_a_failed_article_shows_why_a_retry_form_and_the_feed_summary(quiet, pages):
    summary = "&lt;p&gt;The feed says: &lt;em&gt;summary-gone&lt;/em&gt;&lt;/p&gt;"
    _, ids = await subscribe_slugs(quiet, pages, ["gone"], summaries={"gone": summary})
    pages.add("/gone.html", "gone for good", status=410)
    first = await quiet.get(f"/articles/{ids[0]}")  # tries now, fails
    assert first.status_code == 200
    assert await state_of(quiet, ids[0]) == "failed"
    page = (await quiet.get(f"/articles/{ids[0]}")).text  # a failed article: shown, not retried
    assert pages.hits["/gone.html"] == 1
    failure = re.search(r'<p class="failure" role="alert">failed: (.+?)</p>', page)
    assert failure and "410" in failure.group(1)
    tag = form_tag(page, f"/articles/{ids[0]}/queue")
    assert 'method="post"' in tag
    assert "retry</button>" in page
    assert "<em>summary-gone</em>" in page
    # the retry form is the ordinary tap
    retried = await quiet.post(f"/articles/{ids[0]}/queue", data={"next": "/"})
    assert retried.status_code == 303 and await state_of(quiet, ids[0]) == "queued"


async def test_opening_an_unknown_article_is_a_404_html_page(quiet):
    response = await quiet.get("/articles/4242")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "<html" in response.text and "no such article" in response.text


@pytest.mark.parametrize(
    "method, path, status",
    [("GET", "/articles/99999999999999999999", 404), ("GET", f"/articles/{2**63}/card", 404),
     ("POST", "/articles/99999999999999999999/queue", 404), ("POST", "/articles/99999999999999999999/unqueue", 404),
     ("POST", f"/feeds/{2**64}/delete", 404), ("GET", f"/?before={2**63}", 400), ("GET", f"/?feed={2**70}", 400)],
)
async def test_ids_too_large_for_sqlite_get_an_error_page_not_a_crash(quiet, method, path, status):
    response = await quiet.request(method, path)
    assert response.status_code == status
    assert "<html" in response.text
    assert_strict_csp(response)


async def test_an_unknown_page_is_a_404_html_page(quiet):
    response = await quiet.get("/no/such/page")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "<html" in response.text and "Back to the headlines" in response.text


# -- feeds and stats ------------------------------------------------------------------


async def test_subscribing_through_the_form_redirects_to_feeds_which_lists_it_with_its_count(quiet, pages):
    url = serve_feed(pages, ["a", "b", "c"], title="Form feed")
    response = await quiet.post("/feeds", data={"url": url})
    assert (response.status_code, response.headers["location"]) == (303, "/feeds")
    page = (await quiet.get("/feeds")).text
    feed_id = (await quiet.get("/api/feeds")).json()["feeds"][0]["id"]
    assert f'<a href="/?feed={feed_id}">Form feed</a>' in page
    assert "3 articles" in page
    assert len(card_ids((await quiet.get("/")).text)) == 3


@pytest.mark.parametrize(
    "value, message",
    [("not a url", "not an http or https URL: &#39;not a url&#39;"), ("", "url is required"),
     ("ftp://example.org/feed", "not an http or https URL")],
)
async def test_subscribing_to_an_invalid_url_is_a_422_page_with_the_message(quiet, value, message):
    response = await quiet.post("/feeds", data={"url": value})
    assert response.status_code == 422
    assert "<html" in response.text
    assert message in response.text
    if value:
        assert f'value="{html.escape(value)}"' in response.text  # what was typed stays in the box
    assert (await quiet.get("/api/feeds")).json() == {"feeds": []}


async def test_a_feed_that_fails_is_listed_with_its_error(quiet, pages):
    pages.add("/missing.xml", rss([]), headers={"Content-Type": "application/rss+xml"})
    response = await quiet.post("/feeds", data={"url": pages.url("/missing.xml")})
    assert response.status_code == 303
    pages.add("/missing.xml", "gone", status=404)  # it worked once, then broke
    feed_id = (await quiet.get("/api/feeds")).json()["feeds"][0]["id"]
    await quiet.post("/refresh", data={"feed": feed_id, "next": "/feeds"})
    page = (await quiet.get("/feeds")).text
    assert re.search(r'<p class="failure">[^<]*404', page)
    assert "0 articles" in page


async def test_unsubscribing_through_the_form_removes_the_feed_and_its_cards(quiet, pages):
    feed_id, _ = await subscribe_slugs(quiet, pages, ["a"])
    page = (await quiet.get("/feeds")).text
    assert form_tag(page, f"/feeds/{feed_id}/delete")
    asked = await quiet.post(f"/feeds/{feed_id}/delete")
    assert asked.status_code == 200 and "1 other article will be removed" in asked.text
    assert feed_id in [f["id"] for f in (await quiet.get("/api/feeds")).json()["feeds"]]  # asking removes nothing
    response = await quiet.post(f"/feeds/{feed_id}/delete", data={"confirm": "yes"})
    assert (response.status_code, response.headers["location"]) == (303, "/feeds")
    assert "No feeds yet." in (await quiet.get("/feeds")).text
    assert card_ids((await quiet.get("/")).text) == []


async def test_refresh_all_through_the_form_brings_in_new_headlines(quiet, pages):
    await subscribe_slugs(quiet, pages, ["a"])
    serve_feed(pages, ["a", "b"])  # the feed gained an item
    response = await quiet.post("/refresh", data={"next": "/feeds"})
    assert (response.status_code, response.headers["location"]) == (303, "/feeds")
    assert "2 articles" in (await quiet.get("/feeds")).text
    assert pages.hits["/feed.xml"] == 2


async def test_refreshing_one_feed_fetches_only_that_feed(quiet, pages):
    one, _ = await subscribe_slugs(quiet, pages, ["a"], path="/one.xml", title="One")
    await subscribe_slugs(quiet, pages, ["b"], path="/two.xml", title="Two")
    response = await quiet.post("/refresh", data={"feed": str(one), "next": "//evil.example"})
    assert (response.status_code, response.headers["location"]) == (303, "/")
    assert (pages.hits["/one.xml"], pages.hits["/two.xml"]) == (2, 1)


async def test_the_stats_page_shows_the_ledger_counts(quiet, pages):
    _, ids = await subscribe_slugs(quiet, pages, ["a", "bad", "c"])
    pages.add("/bad.html", "nope", status=404)
    await quiet.get(f"/articles/{ids[0]}")  # cached
    await quiet.get(f"/articles/{ids[1]}")  # failed
    await quiet.post(f"/articles/{ids[2]}/queue")  # queued
    response = await quiet.get("/stats")
    assert response.status_code == 200
    shown = dict(re.findall(r"<dt>(\w+)</dt><dd>(\d+)</dd>", response.text))
    assert shown == {"started": "2", "cached": "1", "failed": "1", "abandoned": "0", "running": "0", "queued": "1",
                     "imported": "0"}
    # the latest runs, newest first, by their articles' titles (linked), not numbers
    runs = re.findall(r'<tr><td><a href="/articles/(\d+)">([^<]*)</a></td><td>(\w+)</td><td>(\w+)</td>', response.text)
    titles = {a["id"]: a["title"] for a in (await quiet.get("/api/articles")).json()["items"]}
    assert [(int(i), t, outcome) for i, t, _, outcome in runs] == [
        (ids[1], titles[ids[1]], "failed"), (ids[0], titles[ids[0]], "cached")]
    assert all(t and not t.isdigit() for t in titles.values())
    # an article gone from the library keeps its line in the ledger, by number (unsubscribing
    # removes the failed one; the one read with its cleaned text is kept, by title)
    store = quiet.app.state.reader._store
    feed_id = (await quiet.get("/api/feeds")).json()["feeds"][0]["id"]
    await store.delete_feed(feed_id)
    page = (await quiet.get("/stats")).text
    assert f"article {ids[1]} (removed)" in page and f"article {ids[0]} (removed)" not in page


# -- static files --------------------------------------------------------------------------


async def test_the_vendored_htmx_is_served(quiet):
    response = await quiet.get("/static/vendor/htmx-4.0.1/htmx.min.js")
    assert response.status_code == 200
    assert "javascript" in response.headers["content-type"]
    assert response.text.startswith("var htmx=")
    assert '"HX-Request":"true"' in response.text  # the header the views look for
    assert (await quiet.get("/static/style.css")).status_code == 200


async def test_pages_are_not_kept_by_the_browser_so_back_shows_the_line_as_it_is(client):
    for path in ("/", "/queue", "/feeds", "/stats"):
        response = await client.get(path)
        assert response.headers["cache-control"] == "no-store", path
    assert "no-store" not in (await client.get("/static/style.css")).headers.get("cache-control", "")
