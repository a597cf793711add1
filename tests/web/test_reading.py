"""The reading side over HTTP: the reader view while an article is being cleaned (the
feed's summary, "cleaning…", a poll that swaps in the full text and stops), read/unread
and star through the API and the page forms, and the browse filters. Real SQLite, real
page servers, real extraction; the page an article lives on is held back by a gate."""

from __future__ import annotations

import re
import threading


from ..helpers import app_client, article_html, rss, subscribe_url, wait_for

RSS = {"Content-Type": "application/rss+xml"}
HTMX = {"HX-Request": "true"}


async def subscribe(client, pages, slugs, summaries=None, title="Reading feed", path="/feed.xml"):
    items = [{"title": f"Item {s}", "link": pages.url(f"/{s}.html"), "summary": (summaries or {}).get(s, ""),
              "date": f"Mon, 0{i + 1} Nov 2026 10:00:00 GMT"} for i, s in enumerate(slugs)]
    for s in slugs:
        if f"/{s}.html" not in pages.routes:
            pages.add_article(s)
    return await subscribe_url(client, pages, pages.add(path, rss(items, title=title), headers=RSS), slugs)


async def article(client, article_id):
    return (await client.get(f"/api/articles/{article_id}")).json()


async def test_an_article_being_cleaned_shows_the_summary_then_the_full_text_by_itself(settings, pages):
    gate = threading.Event()
    pages.add("/slow.html", article_html("Slow", "marker-slow"), gate=gate)
    # the production poll interval, rendered as htmx reads it
    async with app_client(settings.replace(serve_workers=0, open_wait=0.2, poll_interval=2.0)) as client:
        _, [slow] = await subscribe(client, pages, ["slow"],
                                    summaries={"slow": "&lt;p&gt;The feed says: &lt;em&gt;summary-slow&lt;/em&gt;&lt;/p&gt;"})
        try:
            page = await client.get(f"/articles/{slow}")  # answers without waiting for the page
            assert page.status_code == 200
            text = page.text
            assert "cleaning…" in text and "<em>summary-slow</em>" in text and "marker-slow" not in text
            assert re.search(rf'id="reading-body"[^>]*hx-get="/articles/{slow}/body" hx-trigger="every 2s"', text)
            assert '<noscript><meta http-equiv="refresh" content="3"></noscript>' in text  # without JavaScript
            # the work goes on after that page was sent: nobody cancelled it
            await wait_for(lambda: pages.hits["/slow.html"] == 1)
            assert (await article(client, slow))["state"] == "cleaning"
            assert (await article(client, slow))["read"] is True  # opening marks read
            polled = await client.get(f"/articles/{slow}/body", headers=HTMX)
            assert polled.status_code == 200 and "<html" not in polled.text
            assert "cleaning…" in polled.text and 'hx-trigger="every 2s"' in polled.text
        finally:
            gate.set()

        async def full_text():
            body = (await client.get(f"/articles/{slow}/body", headers=HTMX)).text
            return body if "marker-slow" in body else None

        body = await wait_for(full_text, timeout=30)
        assert "hx-trigger" not in body and "cleaning…" not in body  # the poll stops itself
        assert re.search(r'<span id="reading-time" hx-swap-oob="true">\d+ min read · </span>', body)
        assert pages.hits["/slow.html"] == 1  # the polls joined the one extraction
        reopened = (await client.get(f"/articles/{slow}")).text
        assert "marker-slow" in reopened and "noscript" not in reopened and "hx-trigger" not in reopened


async def test_a_failed_article_keeps_the_summary_the_reason_and_a_retry_in_the_body(settings, pages):
    pages.add("/gone.html", "gone", status=410)
    async with app_client(settings.replace(serve_workers=0)) as client:
        _, [gone] = await subscribe(client, pages, ["gone"], summaries={"gone": "&lt;p&gt;summary-gone&lt;/p&gt;"})
        await client.get(f"/articles/{gone}")
        body = (await client.get(f"/articles/{gone}/body", headers=HTMX)).text
        assert re.search(r'<p class="failure" role="alert">failed: .*410', body)
        assert "summary-gone" in body and "retry</button>" in body and "hx-trigger" not in body
        assert f'action="/articles/{gone}/queue"' in body
    assert pages.hits["/gone.html"] == 1


async def test_read_and_star_through_the_api(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        _, [a, b, c] = await subscribe(client, pages, ["a", "b", "c"])
        assert (await article(client, a))["read"] is False
        marked = await client.post(f"/api/articles/{a}/read")
        assert marked.status_code == 200 and marked.json()["read"] is True and marked.json()["id"] == a
        starred = await client.post(f"/api/articles/{b}/star")
        assert starred.json()["starred"] is True
        assert (await client.post(f"/api/articles/{b}/star")).json()["starred"] is True  # twice is harmless

        async def ids(**params):
            return [i["id"] for i in (await client.get("/api/articles", params=params)).json()["items"]]

        assert await ids(unread=1) == [c, b]
        assert await ids(starred=1) == [b]
        assert await ids(unread=1, starred=1) == [b]
        assert (await client.delete(f"/api/articles/{a}/read")).json()["read"] is False
        assert (await client.delete(f"/api/articles/{b}/star")).json()["starred"] is False
        assert await ids(unread=1) == [c, b, a] and await ids(starred=1) == []
        assert (await client.get("/api/articles", params={"unread": "maybe"})).status_code == 422
        for method in ("post", "delete"):
            for what in ("read", "star"):
                missing = await getattr(client, method)(f"/api/articles/999/{what}")
                assert missing.status_code == 404 and missing.json() == {"error": "no such article"}


async def test_the_page_forms_toggle_read_and_star_with_and_without_htmx(settings, pages):
    async with app_client(settings.replace(serve_workers=0)) as client:
        _, [a, b] = await subscribe(client, pages, ["a", "b"])
        browse = (await client.get("/")).text
        # the cards' star and read are the page's one menu, its action filled per card (app.js)
        assert 'data-do="star"' in browse and 'data-do="read"' in browse and f'id="card-{a}"' in browse
        # without JavaScript: a 303 back to the list
        plain = await client.post(f"/articles/{a}/star", data={"value": "on", "next": "/?starred=1"})
        assert plain.status_code == 303 and plain.headers["location"] == "/?starred=1"
        assert (await article(client, a))["starred"] is True
        # with htmx: the card swapped in place, now offering unstar
        card = await client.post(f"/articles/{a}/star", data={"value": "off"}, headers=HTMX)
        assert card.status_code == 200 and f'id="card-{a}"' in card.text and "data-starred" not in card.text
        assert (await article(client, a))["starred"] is False
        # in the reader view: htmx swaps its tools
        tools = await client.post(f"/articles/{b}/read", data={"value": "on", "view": "article"}, headers=HTMX)
        assert 'id="reading-tools"' in tools.text and ">mark unread</button>" in tools.text
        assert (await article(client, b))["read"] is True
        assert (await client.post("/articles/999/star", data={"value": "on"})).status_code == 404


async def test_browse_filters_unread_starred_state_and_feed(settings, pages):
    pages.add("/gone.html", "gone", status=410)
    async with app_client(settings.replace(serve_workers=0)) as client:
        one, [a, gone] = await subscribe(client, pages, ["a", "gone"], title="One")
        two, [c] = await subscribe(client, pages, ["c"], title="Two", path="/two.xml")
        await client.get(f"/articles/{a}")  # read and ready
        await client.get(f"/articles/{gone}")  # read and failed
        await client.post(f"/api/articles/{c}/star")

        async def cards(query):
            page = await client.get("/" + query)
            assert page.status_code == 200
            return [int(i) for i in re.findall(r'id="card-(\d+)"', page.text)]

        assert set(await cards("")) == {a, gone, c}
        assert await cards("?unread=1") == [c]
        assert await cards("?starred=1") == [c]
        assert await cards("?state=ready") == [a]
        assert await cards("?state=failed") == [gone]
        assert set(await cards(f"?feed={one}")) == {a, gone}
        assert await cards(f"?feed={two}&unread=1") == [c]
        page = (await client.get(f"/?feed={two}")).text
        assert f'<option value={two} selected>Two\n' in page
        assert f'<a href="/?feed={two}&amp;unread=1" >unread <span class="count">1</span></a>' in page  # filters keep the feed


async def test_opening_an_uncleaned_article_paints_at_once_and_the_open_alone_gets_it_cleaned(settings, pages):
    """By default the reader view does not wait for the text: the page comes back with the
    feed's summary and "cleaning…" while the site has not answered yet (it cannot: its gate
    is shut). The open itself starts the direct claim, and the work finishes with no page
    polling for it (the person closed the tab)."""
    from reader.settings import Settings

    default_wait = Settings.from_env({}).open_wait
    assert default_wait == 0  # nothing blank before the first paint
    gate = threading.Event()
    pages.add("/slow.html", article_html("Slow", "marker-slow"), gate=gate)
    async with app_client(settings.replace(serve_workers=0, open_wait=default_wait)) as client:
        store = client.app.state.reader._store
        _, [slow] = await subscribe(client, pages, ["slow"], summaries={"slow": "&lt;p&gt;summary-slow&lt;/p&gt;"})
        try:
            page = await client.get(f"/articles/{slow}")
            assert page.status_code == 200
            assert "cleaning…" in page.text and "summary-slow" in page.text and "marker-slow" not in page.text
            assert '<meta http-equiv="refresh" content="3">' in page.text  # without JavaScript: reloads
            # the open is what authorized the cleaning: a direct run holds the claim, no worker runs
            runs = await wait_for(lambda: store.runs(slow))
            assert [r["lane"] for r in runs] == ["direct"]
            assert await store.claim_holder(slow) is not None
        finally:
            gate.set()
        # nobody polls, nobody reopens: the text still arrives
        assert await wait_for(lambda: store.get_content(slow), timeout=30)
        [run] = await store.runs(slow)
        assert run["outcome"] == "cached"
    assert pages.hits["/slow.html"] == 1


async def test_the_feeds_summary_shows_its_images_alt_text_never_a_remote_image(settings, pages):
    """The page's CSP lets only reader's own images load, so a summary's remote <img> would
    show as a broken picture: it reads as its alt text instead, and nothing asks its host."""
    pages.add("/gone.html", "gone", status=410)
    summary = ('&lt;p&gt;Before &lt;img src="/chart.png" alt="A chart of the tide"&gt; after'
               '&lt;img src="/decor.png"&gt;&lt;/p&gt;')
    async with app_client(settings.replace(serve_workers=0)) as client:
        _, [gone] = await subscribe(client, pages, ["gone"], summaries={"gone": summary})
        page = (await client.get(f"/articles/{gone}")).text
        body = (await client.get(f"/articles/{gone}/body", headers=HTMX)).text
    for html in (page, body):
        assert "A chart of the tide" in html and "Before" in html and "after" in html
        assert "chart.png" not in html and "decor.png" not in html
