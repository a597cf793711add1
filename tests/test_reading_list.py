"""The reading list (ready and unread, in tap order), filters that combine, bulk triage
with its undo, and unread counts: through the JSON API, against a real SQLite file and
real pages served on 127.0.0.1."""

from __future__ import annotations

from .helpers import subscribe_slugs

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


async def test_the_reading_list_is_ready_and_unread_in_tap_order(quiet, pages):
    _, (a, b, c, d, e) = await subscribe_slugs(quiet, pages, SLUGS)
    await tap_and_clean(quiet, [c, a, e, b])  # tapped out of publication order
    assert await ids_of(quiet, state="ready", unread=1) == [c, a, e, b]
    assert await ids_of(quiet, state="ready") == [c, a, e, b]
    assert (await quiet.post(f"/api/articles/{a}/read")).status_code == 200
    assert await ids_of(quiet, state="ready", unread=1) == [c, e, b]
    assert await ids_of(quiet, state="ready") == [c, a, e, b]  # read ones stay in the ready list
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
