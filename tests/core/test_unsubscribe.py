"""Unsubscribing never destroys what a person kept: starred articles and articles read
with their cleaned text stay, as library items under the feed's name; the rest go, and
the pages ask first. Real feed and page servers, real extraction, real SQLite."""

from __future__ import annotations

from ..helpers import subscribe_slugs


async def test_unsubscribing_keeps_starred_and_read_articles_under_the_feeds_name(quiet, pages):
    feed_id, ids = await subscribe_slugs(quiet, pages, ["starred", "read", "other", "more"])
    by_title = {a["title"]: a["id"] for a in (await quiet.get("/api/articles")).json()["items"]}
    starred, read = by_title["Item starred"], by_title["Item read"]
    assert (await quiet.post(f"/api/articles/{starred}/star")).status_code == 200
    opened = await quiet.get(f"/articles/{read}")  # cleaned now, and marked read
    assert opened.status_code == 200
    text = (await quiet.get(f"/api/articles/{read}/content")).json()
    [feed] = [f for f in (await quiet.get("/api/feeds")).json()["feeds"] if f["id"] == feed_id]

    asked = await quiet.post(f"/feeds/{feed_id}/delete")
    assert asked.status_code == 200
    assert "2 articles you starred, read or highlighted will be kept" in asked.text
    assert "2 other articles will be removed" in asked.text
    assert len((await quiet.get("/api/articles")).json()["items"]) == 4  # asking removed nothing

    response = await quiet.delete(f"/api/feeds/{feed_id}")
    assert response.json() == {"kept": 2, "removed": 2}
    assert (await quiet.get("/api/feeds")).json() == {"feeds": []}
    left = {a["id"]: a for a in (await quiet.get("/api/articles")).json()["items"]}
    assert set(left) == {starred, read}
    assert (await quiet.get(f"/api/articles/{read}/content")).json() == text  # the cleaned text too
    page = await quiet.get(f"/articles/{starred}")
    assert page.status_code == 200
    browse = (await quiet.get("/")).text
    assert feed["title"] and browse.count(feed["title"]) >= 2  # each kept card shows its source


async def test_the_confirmed_form_unsubscribes_and_keeps_the_starred(quiet, pages):
    feed_id, _ = await subscribe_slugs(quiet, pages, ["a", "b"])
    first = (await quiet.get("/api/articles")).json()["items"][0]["id"]
    await quiet.post(f"/api/articles/{first}/star")
    response = await quiet.post(f"/feeds/{feed_id}/delete", data={"confirm": "yes"})
    assert response.status_code == 303
    assert [a["id"] for a in (await quiet.get("/api/articles")).json()["items"]] == [first]


async def test_unsubscribing_keeps_a_highlighted_article_even_unread(quiet, pages):
    feed_id, _ = await subscribe_slugs(quiet, pages, ["marked", "plain"])
    by_title = {a["title"]: a["id"] for a in (await quiet.get("/api/articles")).json()["items"]}
    marked = by_title["Item marked"]
    assert (await quiet.get(f"/api/articles/{marked}/content")).status_code == 200  # cleaned, never opened: unread
    made = await quiet.post(f"/api/articles/{marked}/highlights", json={"quote": "marker-marked"})
    assert made.status_code == 200, made.text
    assert (await quiet.delete(f"/api/feeds/{feed_id}")).json() == {"kept": 1, "removed": 1}
    assert [a["id"] for a in (await quiet.get("/api/articles")).json()["items"]] == [marked]
    assert len((await quiet.get(f"/api/articles/{marked}/highlights")).json()["items"]) == 1
