"""The presentation choices the pages remember in cookies (list or cards, the first-run
sentence put away): set only by a checked form, only to known values, and the next page is
rendered with them, no JavaScript needed."""

from __future__ import annotations

from ..helpers import app_client, rss


async def test_choices_are_remembered_and_nothing_else_is_set(settings, pages):
    feed = pages.add("/feed.xml", rss([{"title": "One", "link": pages.add_article("one")}]),
                     headers={"Content-Type": "application/rss+xml"})
    async with app_client(settings.replace(serve_workers=0)) as client:
        assert (await client.post("/api/feeds", json={"url": feed})).status_code == 201
        page = (await client.get("/")).text
        assert 'class="card row' in page and "How reader works" in page

        answer = await client.post("/prefs", data={"view": "cards", "intro": "off", "next": "/?unread=1"})
        assert (answer.status_code, answer.headers["location"]) == (303, "/?unread=1")
        page = (await client.get("/")).text
        assert 'class="card roomy' in page and "How reader works" not in page

        # Unknown values and names change nothing; a foreign "next" goes home, not away.
        answer = await client.post("/prefs", data={"view": "<script>", "theme": "x", "next": "//evil.example/"})
        assert (answer.status_code, answer.headers["location"]) == (303, "/")
        assert "reader_theme" not in answer.headers.get("set-cookie", "")
        assert 'class="card roomy' in (await client.get("/")).text

        await client.post("/prefs", data={"view": "list"})
        assert 'class="card row' in (await client.get("/")).text

    async with app_client(settings, csrf=False) as bare:  # no token: refused, nothing set
        await bare.get("/")
        answer = await bare.post("/prefs", data={"view": "cards"})
        assert answer.status_code == 403
        assert "reader_view" not in answer.headers.get("set-cookie", "")
