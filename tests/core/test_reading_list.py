"""The reading list (ready and not done, read or not, in tap order), filters that combine, bulk triage
(read, done) with its undo, and unread counts: through the JSON API and the pages, against a real
SQLite file and real pages served on 127.0.0.1."""

from __future__ import annotations

import html
import re

from ..helpers import card_ids, subscribe_slugs

SLUGS = ["alpha", "beta", "gamma", "delta", "epsilon"]


async def ids_of(client, **params) -> list[int]:
    response = await client.get("/api/articles", params=params)
    assert response.status_code == 200, response.text
    return [item["id"] for item in response.json()["items"]]


async def tap_and_clean(client, ids: list[int]) -> None:
    """Tap each in this order, then open each (the direct lane cleans it now)."""
    for article_id in ids:
        assert (await client.post(f"/api/articles/{article_id}/queue", json={})).status_code == 200
    for article_id in ids:
        assert (await client.get(f"/api/articles/{article_id}/content")).status_code == 200
    # opening through the API does not mark read: these are all unread and ready


async def test_the_reading_list_is_ready_and_not_done_in_tap_order(quiet, pages):
    _, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await tap_and_clean(quiet, [c, a, e, b])  # tapped out of publication order
    assert await ids_of(quiet, state="ready", unread=1) == [c, a, e, b]
    assert await ids_of(quiet, state="ready") == [c, a, e, b]
    assert (await quiet.post(f"/api/articles/{a}/read")).status_code == 200
    assert await ids_of(quiet, state="ready", unread=1) == [c, a, e, b]  # read is not done
    assert (await quiet.post(f"/api/articles/{a}/done")).status_code == 200
    assert await ids_of(quiet, state="ready", unread=1) == [c, e, b]
    assert await ids_of(quiet, state="ready") == [c, a, e, b]  # done ones stay in the ready list
    # keyset pages follow the tap order too
    assert await ids_of(quiet, state="ready", unread=1, limit=2) == [c, e]
    assert await ids_of(quiet, state="ready", unread=1, limit=2, before=e) == [b]
    # a later tap does not move an article up, a retap does not move it back
    assert (await quiet.post(f"/api/articles/{c}/queue", json={"lane": "next"})).status_code == 200
    assert await ids_of(quiet, state="ready", unread=1) == [c, e, b]
    # the others, never tapped, are not in it; newest first is still the default order
    assert await ids_of(quiet) == [e, d, c, b, a]


async def test_every_filter_combines_with_search(quiet, pages):
    feed_id, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    other_feed, (x,) = await subscribe_slugs(quiet, pages, ["zeta"], path="/other.xml", title="Other")
    await tap_and_clean(quiet, [a, b, x])
    await quiet.post(f"/api/articles/{b}/read")
    await quiet.post(f"/api/articles/{b}/done")
    await quiet.post(f"/api/articles/{a}/star")
    # every test page has the word "Paragraph" in its cleaned text (summaries are empty)
    assert set(await ids_of(quiet, q="paragraph")) == {a, b, x}
    assert await ids_of(quiet, q="paragraph", state="ready", unread=1) in ([a, x], [x, a])
    assert await ids_of(quiet, q="paragraph", state="ready", unread=1, feed=feed_id) == [a]
    assert await ids_of(quiet, q="paragraph", starred=1) == [a]
    assert await ids_of(quiet, q="marker-beta", unread=1) == []
    assert await ids_of(quiet, q="marker-beta") == [b]
    assert await ids_of(quiet, state="ready", feed=other_feed) == [x]
    assert await ids_of(quiet, unread=1, starred=1) == [a]
    bad = await quiet.get("/api/articles", params={"q": "paragraph", "state": "nope"})
    assert bad.status_code == 422 and "state" in bad.json()["error"]


async def test_mark_these_read_and_undo_restores_exactly_them(quiet, pages):
    _, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await quiet.post(f"/api/articles/{b}/read")  # read before: not changed by the bulk read
    response = await quiet.post("/api/articles/read", json={"ids": [a, b, c]})
    assert response.status_code == 200, response.text
    assert response.json() == {"changed": 2, "ids": sorted([a, c])}
    assert await ids_of(quiet, unread=1) == [e, d]
    again = await quiet.post("/api/articles/read", json={"ids": [a, b, c]})
    assert again.json()["changed"] == 0
    undo = await quiet.request("DELETE", "/api/articles/read", json={"ids": response.json()["ids"]})
    assert undo.status_code == 200 and undo.json()["changed"] == 2
    assert await ids_of(quiet, unread=1) == [e, d, c, a]  # b stays read, as it was


async def test_mark_all_read_stops_at_until(quiet, pages):
    feed_id, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    until = max(await ids_of(quiet))
    # an article arrives after the page was shown: a saved link, newer than `until`
    saved = await quiet.post("/api/articles", json={"url": pages.url("/later.html")})
    late = saved.json()["id"]
    assert late > until
    response = await quiet.post("/api/articles/read", json={"unread": 1, "until": until})
    assert response.json()["changed"] == 5
    assert await ids_of(quiet, unread=1) == [late]
    # the filter narrows it: unread again only the feed's articles from the delta on
    await quiet.request("DELETE", "/api/articles/read", json={"ids": [a, b, c, d, e]})
    response = await quiet.post("/api/articles/read", json={"feed": feed_id, "q": "delta", "until": until})
    assert response.json() == {"changed": 1, "ids": [d]}


async def test_bulk_read_refuses_what_it_cannot_read(quiet, pages):
    await subscribe_slugs(quiet, pages, SLUGS[:1])
    for body in ({}, {"ids": "1,2"}, {"ids": ["x"]}, {"unread": 1}, {"until": "soon"}, {"until": 5, "state": "odd"},
                 {"until": 5, "q": "!!!"}):
        response = await quiet.post("/api/articles/read", json=body)
        assert response.status_code == 422, (body, response.text)
        assert "error" in response.json()
    assert await ids_of(quiet, unread=1) != []  # nothing was marked
    malformed = await quiet.post("/api/articles/read", content=b"[1, 2]")
    assert malformed.status_code == 400


async def test_feeds_carry_their_unread_count(quiet, pages):
    feed_id, (a, b, c) = await subscribe_slugs(quiet, pages, SLUGS[:3])
    await quiet.post(f"/api/articles/{a}/read")
    [feed] = (await quiet.get("/api/feeds")).json()["feeds"]
    assert (feed["id"], feed["articles"], feed["unread"]) == (feed_id, 3, 2)


async def test_an_article_opened_or_read_stays_on_the_reading_list_until_its_end_or_done(quiet, pages):
    feed_id, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await tap_and_clean(quiet, [a, b, c, d, e])

    async def place(article_id: int, fraction: float, **more) -> dict:
        response = await quiet.put(f"/api/articles/{article_id}/position", json={"position": fraction, **more})
        assert response.status_code == 200, response.text
        return response.json()

    async def article(article_id: int) -> dict:
        return (await quiet.get(f"/api/articles/{article_id}")).json()

    for article_id in (a, b, c, e):
        assert (await quiet.get(f"/articles/{article_id}")).status_code == 200  # a person opens it: read
    await place(b, 0.4)
    await place(c, 0.5)
    await place(e, 0.3)
    # opened and left, moved in or not: read, and every one still on the list
    assert await ids_of(quiet, state="ready", unread=1) == [a, b, c, d, e]
    assert [(await article(i))["read"] for i in (a, b, c, e)] == [True] * 4
    assert [(await article(i))["done"] for i in (a, b, c, d, e)] == [False] * 5
    assert await ids_of(quiet, unread=1) == [d]  # read keeps its meaning elsewhere: the unread filter,
    [feed] = (await quiet.get("/api/feeds")).json()["feeds"]
    assert feed["unread"] == 1  # the feed's count
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    assert card_ids(page) == [a, b, c, d, e] and "40% read" in page and "half read" in page
    assert re.search(r'Ready<span class="nav-long">&nbsp;to read</span> <span class="count">5</span>', page)
    assert [x["id"] for x in (await quiet.get("/api/offline")).json()["articles"]] == [a, b, c, d, e]
    # reading through it, c's neighbours are in the list
    opened = (await quiet.get(f"/articles/{c}", params={"list": "state=ready&unread=1"})).text
    assert rel_link(opened, "prev").startswith(f"/articles/{b}") and rel_link(opened, "next").startswith(f"/articles/{d}")

    reached = await place(b, 1.0)  # reached the end: done
    assert reached["done"] is True and reached["done_at"] is not None
    await quiet.post(f"/api/articles/{c}/read")  # marked read by hand: still on the list, its place kept
    assert (await article(c))["read_position"] == 0.5 and (await article(c))["done"] is False
    await place(d, 1.0)  # the end reached before the open was heard of (a device that was offline)
    assert (await article(d))["read"] is True and (await article(d))["done"] is True
    said = await quiet.post(f"/api/articles/{a}/done")  # said done, never moved in
    assert said.status_code == 200 and said.json()["done"] is True
    assert await ids_of(quiet, state="ready", unread=1) == [c, e]
    # no place sent later brings a done article back: neither one from before, by the
    # device's clock, nor a newer one short of the end
    late = await place(b, 0.6, at=1_000_000.0)
    assert late["read_position"] == 1.0 and late["done"] is True
    assert (await place(a, 0.2))["done"] is True
    assert await ids_of(quiet, state="ready", unread=1) == [c, e]
    # not done: back on the list, in its place; one read to the end starts over
    back = await quiet.delete(f"/api/articles/{b}/done")
    assert back.status_code == 200 and back.json()["done"] is False and back.json()["read_position"] is None
    await quiet.delete(f"/api/articles/{a}/done")
    assert (await article(a))["read_position"] == 0.2  # a place short of the end is kept
    assert await ids_of(quiet, state="ready", unread=1) == [a, b, c, e]
    # mark unread leaves done alone
    await quiet.delete(f"/api/articles/{d}/read")
    assert (await article(d))["read"] is False and (await article(d))["done"] is True

    # a bulk read of the list leaves every article on it, its place where it was
    await quiet.delete(f"/api/articles/{c}/read")
    marked = await quiet.post("/api/articles/read", json={"state": "ready", "unread": True, "until": e})
    assert marked.json() == {"changed": 1, "ids": [c]}
    assert await ids_of(quiet, state="ready", unread=1) == [a, b, c, e]
    assert (await article(c))["read_position"] == 0.5
    # a bulk done of the list takes all of it off; DELETE with the ids it answered undoes it
    done = await quiet.post("/api/articles/done", json={"state": "ready", "unread": True, "until": e})
    assert done.status_code == 200 and done.json() == {"changed": 4, "ids": sorted([a, b, c, e])}
    assert await ids_of(quiet, state="ready", unread=1) == []
    again = await quiet.post("/api/articles/done", json={"ids": [a, b]})
    assert again.json()["changed"] == 0
    undone = await quiet.request("DELETE", "/api/articles/done", json={"ids": done.json()["ids"]})
    assert undone.json()["changed"] == 4
    assert await ids_of(quiet, state="ready", unread=1) == [a, b, c, e]
    for body in ({}, {"ids": "1,2"}, {"unread": 1}, {"until": 5, "state": "odd"}):
        refused = await quiet.post("/api/articles/done", json=body)
        assert refused.status_code == 422 and "error" in refused.json(), body
    assert (await quiet.post("/api/articles/999999/done")).status_code == 404
    # sent with a device's id, done is applied once: a replay after a not done elsewhere is a no-op
    key = {"Idempotency-Key": "done-on-the-train-1"}
    first = await quiet.post(f"/api/articles/{a}/done", headers=key)
    assert first.status_code == 200 and first.json()["done"] is True
    await quiet.delete(f"/api/articles/{a}/done")
    again = await quiet.post(f"/api/articles/{a}/done", headers=key)
    assert again.json() == first.json() and (await article(a))["done"] is False


async def test_opening_an_article_and_going_back_keeps_it_on_the_reading_list(quiet, pages):
    _, (a, b) = await subscribe_slugs(quiet, pages, SLUGS[:2])
    await tap_and_clean(quiet, [a, b])
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    [link] = re.findall(rf'<a href="(/articles/{a}\?list=[^"]+)">', page)
    opened = await quiet.get(html.unescape(link))  # opened, read for a moment, and back
    assert opened.status_code == 200 and ">done</button>" in opened.text
    assert (await quiet.get(f"/api/articles/{a}")).json()["read"] is True
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    assert card_ids(page) == [a, b]
    assert re.search(r'Ready<span class="nav-long">&nbsp;to read</span> <span class="count">2</span>', page)


async def test_a_headline_opened_without_a_tap_is_on_the_list_only_while_it_is_being_read(quiet, pages):
    _, (a, b) = await subscribe_slugs(quiet, pages, SLUGS[:2])
    await tap_and_clean(quiet, [b])

    async def reading_list():
        return card_ids((await quiet.get("/", params={"state": "ready", "unread": 1})).text)

    async def place(fraction, at):
        answer = await quiet.put(f"/api/articles/{a}/position", json={"position": fraction, "at": at})
        assert answer.status_code == 200, answer.text

    opened = await quiet.get(f"/articles/{a}")  # straight from the headlines: cleaned now, never tapped
    assert opened.status_code == 200 and ">done</button>" in opened.text  # nobody finished it
    shown = (await quiet.get(f"/api/articles/{a}")).json()
    assert shown["state"] == "ready" and shown["done"] is False
    assert await reading_list() == [b]  # a glance is not a tap: it does not fill the list
    await place(0.4, 1_000)
    assert set(await reading_list()) == {a, b}  # read in and left part-way: in progress, on the list
    await place(1.0, 2_000)
    assert await reading_list() == [b]  # read to the end: done
    await place(0.5, 3_000)
    assert await reading_list() == [b]  # scrolling back up later does not bring it back
    assert (await quiet.get(f"/api/articles/{a}")).json()["done"] is True

    # a glance, then "done": done for real (reading in later does not bring it back)
    _, (d,) = await subscribe_slugs(quiet, pages, ["delta"], path="/fourth.xml", title="Fourth")
    await quiet.get(f"/articles/{d}")
    assert (await quiet.post(f"/api/articles/{d}/done")).json()["done"] is True
    assert (await quiet.put(f"/api/articles/{d}/position", json={"position": 0.3, "at": 4_000})).json()["done"] is True
    assert d not in await reading_list()

    # a glance at another, then "mark unread": on the list again, as a person asked
    _, (c,) = await subscribe_slugs(quiet, pages, ["gamma"], path="/third.xml", title="Third")
    await quiet.get(f"/articles/{c}")
    assert c not in await reading_list()
    assert (await quiet.delete(f"/api/articles/{c}/read")).status_code == 200
    assert c in await reading_list()


async def test_marking_a_feed_read_keeps_its_ready_articles_on_the_reading_list(quiet, pages):
    feed_id, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await tap_and_clean(quiet, [b, d])
    newest = max(await ids_of(quiet))
    marked = await quiet.post("/articles/read", data={"feed": feed_id, "until": newest, "next": f"/?feed={feed_id}"})
    assert marked.status_code == 303 and "marked=5" in marked.headers["location"]
    assert await ids_of(quiet, unread=1) == []
    assert await ids_of(quiet, state="ready", unread=1) == [b, d]
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    assert card_ids(page) == [b, d] and "Mark these read" not in page  # nothing on it is unread
    assert "Mark these done" in page


async def test_done_and_not_done_from_the_reader_view_and_a_card(quiet, pages):
    _, (a, b) = await subscribe_slugs(quiet, pages, SLUGS[:2])
    await tap_and_clean(quiet, [a, b])
    view = (await quiet.get(f"/articles/{a}")).text
    tools = re.search(r'<div class="reading-tools".*?</div>', view, re.S).group(0)
    assert f'action="/articles/{a}/done"' in tools and 'name="done" value="1"' in tools
    assert '<button type="submit" class="secondary" data-key="e">done</button>' in tools
    # htmx in the reader view: the tools again, saying "not done"
    swapped = await quiet.post(f"/articles/{a}/done", data={"done": "1", "view": "article"},
                               headers={"HX-Request": "true"})
    assert swapped.status_code == 200 and 'id="reading-tools"' in swapped.text
    assert 'data-key="e">not done</button>' in swapped.text and 'name="done" value="0"' in swapped.text
    assert await ids_of(quiet, state="ready", unread=1) == [b]
    # without JavaScript: a 303 back where the person was
    back = await quiet.post(f"/articles/{a}/done", data={"done": "0", "next": f"/articles/{a}"})
    assert back.status_code == 303 and back.headers["location"] == f"/articles/{a}"
    assert await ids_of(quiet, state="ready", unread=1) == [a, b]  # back in its place
    # a card's menu on the reading list: done, then the card says so and offers not done
    card = await quiet.post(f"/articles/{b}/done", data={"done": "1", "next": "/?state=ready&unread=1"},
                            headers={"HX-Request": "true"})
    assert card.status_code == 200 and f'id="card-{b}"' in card.text
    # (its menu, the page's one, is filled from data-done: "not done")
    assert f'id="card-{b}" data-read="no" data-done ' in card.text
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    assert card_ids(page) == [a]
    # the page's one menu offers done (key e) to its ready cards; this one is not done
    assert 'data-do="done"' in page and 'data-key="e">done</button>' in page
    assert re.search(rf'id="card-{a}" data-read="\w+" data-url', page)
    # reading through the reading list: "Done and next" takes it off on the way
    through = (await quiet.get(f"/articles/{a}", params={"list": "state=ready&unread=1"})).text
    assert "Done and next" not in through  # nothing after it on the list
    await quiet.post(f"/articles/{b}/done", data={"done": "0"})
    through = (await quiet.get(f"/articles/{a}", params={"list": "state=ready&unread=1"})).text
    form = re.search(r'<form method="post" action="/articles/\d+/done">.*?</form>', through, re.S).group(0)
    assert "Done and next" in form and f'action="/articles/{a}/done"' in form
    went = await quiet.post(f"/articles/{a}/done", data={"done": "1", "next": re.search(
        r'name="next" value="([^"]+)"', form).group(1)})
    assert went.status_code == 303 and went.headers["location"].startswith(f"/articles/{b}")
    assert await ids_of(quiet, state="ready", unread=1) == [b]
    assert (await quiet.post("/articles/999999/done", data={"done": "1"})).status_code == 404


async def test_mark_these_done_and_undo_brings_exactly_them_back_in_their_place(quiet, pages):
    _, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await tap_and_clean(quiet, [a, b, c])
    assert (await quiet.get(f"/articles/{b}")).status_code == 200  # read: still on the list
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    form = re.search(r'<form method="post" action="/articles/done">.*?</form>', page, re.S).group(0)
    assert f'name="ids" value="{a},{b},{c}"' in form and "Mark these done" in form
    response = await quiet.post("/articles/done", data={"ids": f"{a},{b}", "next": "/?state=ready&unread=1"})
    assert response.status_code == 303
    assert response.headers["location"].startswith("/?state=ready&unread=1&done=2&undo=")
    page = (await quiet.get(response.headers["location"])).text
    assert "Marked 2 articles done." in page and card_ids(page) == [c]
    assert re.search(r'Ready<span class="nav-long">&nbsp;to read</span> <span class="count">1</span>', page)
    undo = re.search(r'<form method="post" action="/articles/done/undo">.*?</form>', page, re.S).group(0)
    stamp = re.search(r'name="stamp" value="([^"]+)"', undo).group(1)
    assert "done=" not in re.search(r'name="next" value="([^"]*)"', page).group(1)
    # b is made not done and done again meanwhile: that later done is not the bulk one's to undo
    await quiet.delete(f"/api/articles/{b}/done")
    await quiet.post(f"/api/articles/{b}/done")
    restored = await quiet.post("/articles/done/undo", data={"stamp": stamp, "next": "/?state=ready&unread=1"})
    assert restored.status_code == 303 and restored.headers["location"] == "/?state=ready&unread=1&back=1"
    page = (await quiet.get(restored.headers["location"])).text
    assert "1 article is back on the reading list." in page and card_ids(page) == [a, c]  # in its place
    again = await quiet.post("/articles/done/undo", data={"stamp": stamp, "next": "/"})
    assert again.headers["location"].endswith("back=0")
    for bad in ({"ids": "1,x"}, {"until": "soon"}, {}):
        refused = await quiet.post("/articles/done", data=bad)
        assert refused.status_code == 422 and "Traceback" not in refused.text, bad
    assert (await quiet.post("/articles/done/undo", data={"stamp": "x"})).status_code == 422
    assert "Mark these done" not in (await quiet.get("/")).text  # the reading list's own


async def test_an_open_reported_later_marks_read_and_keeps_the_place(quiet, pages):
    _, (a, b) = await subscribe_slugs(quiet, pages, SLUGS[:2])
    await tap_and_clean(quiet, [a, b])
    await quiet.put(f"/api/articles/{a}/position", json={"position": 0.5})
    key = "opened-on-the-train-1"
    first = await quiet.post(f"/api/articles/{a}/opened", headers={"Idempotency-Key": key})
    assert first.status_code == 200 and first.json()["read"] is True and first.json()["read_position"] == 0.5
    assert await ids_of(quiet, state="ready", unread=1) == [a, b]  # in progress: still on the list
    await quiet.delete(f"/api/articles/{a}/read")
    again = await quiet.post(f"/api/articles/{a}/opened", headers={"Idempotency-Key": key})
    assert again.json() == first.json()  # a replay answers the same and changes nothing
    assert (await quiet.get(f"/api/articles/{a}")).json()["read"] is False
    assert (await quiet.post("/api/articles/999999/opened")).status_code == 404


# -- pages ------------------------------------------------------------------------------


def rel_link(page: str, rel: str) -> str | None:
    found = re.search(rf'<a class="button[^"]*" rel="{rel}" data-key="[^"]+" href="([^"]+)"', page)
    return html.unescape(found.group(1)) if found else None


async def test_the_nav_counts_the_reading_list_and_the_page_shows_it(quiet, pages):
    _, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    page = (await quiet.get("/queue")).text
    assert re.search(r'class="nav-ready"[^>]*>Ready<span class="nav-long">&nbsp;to read</span> <span class="count">0</span>', page)
    await tap_and_clean(quiet, [d, b, a])
    for path in ("/", "/queue", "/feeds", "/stats"):
        page = (await quiet.get(path)).text
        assert re.search(r'class="nav-ready has-count"[^>]*>Ready<span class="nav-long">&nbsp;to read</span> <span class="count">3</span>', page), path
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    assert card_ids(page) == [d, b, a]
    assert '<h1 class="page-title">Ready to read</h1>' in page
    assert re.search(r'class="nav-ready has-count" aria-current="page"', page)


async def test_reading_through_follows_the_list_it_was_opened_from(quiet, pages):
    _, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await tap_and_clean(quiet, [d, b, a])
    # from the reading list's page: the links carry the list; opening marks each read,
    # and next goes on to the next unread one in tap order
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    [first] = re.findall(rf'<a href="(/articles/{d}\?list=[^"]+)">', page)
    opened = (await quiet.get(html.unescape(first))).text
    assert rel_link(opened, "prev") is None
    nxt = rel_link(opened, "next")
    assert nxt is not None and nxt.startswith(f"/articles/{b}?list=")
    opened = (await quiet.get(nxt)).text
    assert rel_link(opened, "next").startswith(f"/articles/{a}?")
    opened = (await quiet.get(rel_link(opened, "next"))).text
    assert rel_link(opened, "next") is None and "The end of ready to read." in opened
    # without a list named: the reading list; with one: that filter's order (newest first)
    await quiet.request("DELETE", "/api/articles/read", json={"ids": [a, b, d]})
    plain = (await quiet.get(f"/articles/{b}")).text
    assert rel_link(plain, "next") == f"/articles/{a}" and rel_link(plain, "prev") == f"/articles/{d}"
    listed = (await quiet.get(f"/articles/{c}", params={"list": ""})).text
    assert rel_link(listed, "next") == f"/articles/{b}?list=" and rel_link(listed, "prev") == f"/articles/{d}?list="
    # a search: its ranked results
    searched = (await quiet.get(f"/articles/{b}", params={"list": "q=marker-beta"})).text
    assert rel_link(searched, "next") is None and rel_link(searched, "prev") is None
    # where the article is still unread (marked unread since), reading on can mark it read
    await quiet.request("DELETE", "/api/articles/read", json={"ids": [c]})
    response = await quiet.get(f"/articles/{c}", params={"list": ""})
    assert "Mark read and next" not in response.text  # opening marked it read
    # a list parameter that is nonsense is a list without filters, never an error
    odd = await quiet.get(f"/articles/{c}", params={"list": "state=%zz&feed=x&unread=maybe"})
    assert odd.status_code == 200 and rel_link(odd.text, "next") is not None


async def test_filter_links_keep_the_other_filters_and_the_search(quiet, pages):
    feed_id, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await tap_and_clean(quiet, [a, b])
    page = (await quiet.get("/", params={"q": "paragraph", "feed": feed_id})).text
    assert set(card_ids(page)) == {a, b}
    links = {m.group(2): html.unescape(m.group(1)) for m in
             re.finditer(r'<nav class="filters".*?</nav>', page, re.S) for m in
             re.finditer(r'<a href="([^"]+)" (?:aria-current="page")?>(\w+)', m.group(0))}
    assert links["unread"] == f"/?feed={feed_id}&unread=1&q=paragraph"
    assert links["ready"] == f"/?state=ready&feed={feed_id}&q=paragraph"
    await quiet.post(f"/api/articles/{a}/read")
    page = (await quiet.get(links["unread"])).text
    assert card_ids(page) == [b]
    # the search box on a filtered page searches within it
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    form = re.search(r'<form class="search".*?</form>', page, re.S).group(0)
    assert '<input type="hidden" name="state" value="ready">' in form
    assert '<input type="hidden" name="unread" value="1">' in form


async def test_bulk_forms_post_and_come_back_with_an_undo(quiet, pages):
    _, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await quiet.post(f"/api/articles/{c}/read")
    response = await quiet.post("/articles/read", data={"ids": f"{a},{b},{c}", "next": "/?unread=1"})
    assert response.status_code == 303
    target = response.headers["location"]
    assert target.startswith("/?unread=1&marked=2&undo=")
    page = (await quiet.get(target)).text
    assert "Marked 2 articles read." in page and card_ids(page) == [e, d]
    stamp = re.search(r'name="stamp" value="([^"]+)"', page).group(1)
    # the page's own links and forms do not carry the notice on
    assert "marked=" not in re.search(r'name="next" value="([^"]*)"', page).group(1)
    undo = await quiet.post("/articles/read/undo", data={"stamp": stamp, "next": "/?unread=1"})
    assert undo.status_code == 303 and undo.headers["location"] == "/?unread=1&restored=2"
    page = (await quiet.get(undo.headers["location"])).text
    assert "2 articles are unread again." in page and card_ids(page) == [e, d, b, a]
    for bad in ({"ids": "1,x"}, {"until": "soon"}, {"until": "5", "state": "odd"}):
        refused = await quiet.post("/articles/read", data=bad)
        assert refused.status_code == 422 and "Traceback" not in refused.text, bad
    assert (await quiet.post("/articles/read/undo", data={"stamp": "x"})).status_code == 422


async def test_a_card_swapped_after_a_tap_keeps_naming_its_list(quiet, pages):
    _, (a, *_) = await subscribe_slugs(quiet, pages, SLUGS[:2])
    swapped = await quiet.post(f"/articles/{a}/queue", data={"next": "/?unread=1&feed=x"},
                               headers={"HX-Request": "true"})
    assert swapped.status_code == 200
    assert f'<a href="/articles/{a}?list=unread%3D1">' in swapped.text


async def test_the_live_poll_keeps_naming_the_pages_list_on_the_cards_it_swaps_in(quiet, pages):
    _, (a, b, *_) = await subscribe_slugs(quiet, pages, SLUGS[:2])
    assert (await quiet.post(f"/api/articles/{a}/queue", json={})).status_code == 200
    page = (await quiet.get("/", params={"unread": "1"})).text
    # the page's poller, as the browser would call it: its URL plus the pending card's id
    poll = html.unescape(re.search(r'<div id="live"[^>]* hx-get="([^"]+)"', page).group(1))
    assert re.search(rf'name="id" value="{a}"', page), "the queued card is not pending on the page"
    assert poll.startswith("/live?list=")
    swapped = await quiet.get(f"{poll}&id={a}")
    assert swapped.status_code == 200
    assert f'<a href="/articles/{a}?list=unread%3D1">' in swapped.text
    # a page with no list (the queue) still polls without one: its cards open the reading list
    # (and keep the lane moves the line's page shows)
    queue_page = (await quiet.get("/queue")).text
    assert 'hx-get="/live?lanes=1"' in queue_page
    polled = (await quiet.get("/live", params={"id": a, "lanes": "1"})).text
    assert f'<a href="/articles/{a}">' in polled and f'formaction="/articles/{a}/queue"' in polled


async def test_undoing_a_bulk_read_restores_each_articles_state_before_it_place_included(quiet, pages):
    _, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await tap_and_clean(quiet, [a, b, c, d, e])
    for article_id in (a, b):
        assert (await quiet.get(f"/articles/{article_id}")).status_code == 200  # opened: read
    await quiet.put(f"/api/articles/{a}/position", json={"position": 0.4})  # left part-way
    await quiet.put(f"/api/articles/{d}/position", json={"position": 0.25})
    await quiet.delete(f"/api/articles/{d}/read")  # unread again, its place kept

    async def state(article_id: int) -> tuple:
        article = (await quiet.get(f"/api/articles/{article_id}")).json()
        return article["read"], article["read_position"], article["done"]

    before = {i: await state(i) for i in (a, b, c, d, e)}
    assert before[a] == (True, 0.4, False) and before[b] == (True, None, False) and before[d] == (False, 0.25, False)
    marked = await quiet.post("/articles/read", data={"ids": f"{a},{b},{c},{d}", "next": "/?state=ready&unread=1"})
    assert marked.status_code == 303 and "marked=2" in marked.headers["location"]  # c and d were unread
    page = (await quiet.get(marked.headers["location"])).text
    assert card_ids(page) == [a, b, c, d, e]  # read, not done: all still on the reading list
    assert await state(a) == (True, 0.4, False) and await state(d) == (True, 0.25, False)  # places kept
    # c is opened meanwhile (opening keeps the bulk read's stamp: the undo still covers it)
    assert (await quiet.get(f"/articles/{c}")).status_code == 200
    stamp = re.search(r'name="stamp" value="([^"]+)"', page).group(1)
    undo = await quiet.post("/articles/read/undo", data={"stamp": stamp, "next": "/?state=ready&unread=1"})
    assert undo.status_code == 303 and undo.headers["location"].endswith("restored=2")
    assert {i: await state(i) for i in (a, b, c, d, e)} == before
    page = (await quiet.get("/", params={"state": "ready", "unread": 1})).text
    assert card_ids(page) == [a, b, c, d, e] and "40% read" in page
    # undone once: a second undo of the same stamp changes nothing
    again = await quiet.post("/articles/read/undo", data={"stamp": stamp, "next": "/"})
    assert again.headers["location"].endswith("restored=0")
