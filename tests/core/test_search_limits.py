"""One GET must not freeze the app: a search is capped in words and characters, runs
on a read connection of its own (a slow one holds up no other read), and is stopped
once over its time budget with a clear "too broad" answer. Real SQLite, the real app."""

from __future__ import annotations

import asyncio
import sqlite3

from reader.store import Store

from ..helpers import app_client

# FTS5 matches a phrase of n copies of a word against a text of m copies in about n * m
# steps: a real way to make one search slow, with no change to reader.
SLOW_PHRASE = '"' + " ".join(["a"] * 200) + '"'


async def _slow_library(path) -> None:
    """Three cleaned articles of 5,000 copies of "a", written straight into the file."""
    store = await Store.open(path)
    await store.close()
    with sqlite3.connect(path) as db:
        for i in range(3):
            (aid,) = db.execute(
                "INSERT INTO articles (feed_id, guid, url, title, sort_at, added_at)"
                " VALUES (NULL, ?, ?, 'letters', 0, 0) RETURNING id", (f"g{i}", f"http://example.org/{i}")
            ).fetchone()
            db.execute("INSERT INTO contents (article_id, html, text, words, cleaned_at) VALUES (?, '<p>a</p>', ?, 5000, 0)",
                       (aid, " ".join(["a"] * 5000)))


async def test_eight_hundred_terms_are_refused_with_a_message(settings):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        many = " ".join(f"w{i}" for i in range(800))
        response = await client.get("/api/articles", params={"q": many})
        assert response.status_code == 422
        assert "too long" in response.json()["error"]
        page = await client.get("/", params={"q": many})
        assert page.status_code < 500 and "too long" in page.text
        distinct = " ".join(f"w{i}" for i in range(40))
        response = await client.get("/api/articles", params={"q": distinct})
        assert response.status_code == 422 and "too many words" in response.json()["error"]


async def test_a_repeated_word_counts_once(settings):
    async with app_client(settings.replace(serve_workers=0, extract_processes=0)) as client:
        response = await client.get("/api/articles", params={"q": " ".join(["a"] * 100)})
        assert response.status_code == 200, response.text


async def test_a_slow_search_does_not_hold_up_stats(settings):
    await _slow_library(settings.db)
    async with app_client(settings.replace(serve_workers=0, extract_processes=0, search_budget=120)) as client:
        search = asyncio.create_task(client.get("/api/articles", params={"q": SLOW_PHRASE}))
        await asyncio.sleep(0)  # let the search reach its read connection first
        stats = await client.get("/api/stats")
        assert stats.status_code == 200
        assert not search.done(), "stats waited for the search"
        found = await search
        assert found.status_code == 200 and len(found.json()["items"]) == 3


async def test_a_search_over_its_budget_is_answered_as_too_broad(settings):
    await _slow_library(settings.db)
    async with app_client(settings.replace(serve_workers=0, extract_processes=0, search_budget=0.01)) as client:
        response = await client.get("/api/articles", params={"q": SLOW_PHRASE})
        assert response.status_code == 422
        assert "too broad" in response.json()["error"]
        page = await client.get("/", params={"q": SLOW_PHRASE})
        assert page.status_code < 500 and "too broad" in page.text
        assert (await client.get("/api/stats")).status_code == 200
