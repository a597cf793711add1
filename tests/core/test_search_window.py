"""How search orders its matches: by relevance among the most recently added ones (a
bounded number, so a common word costs the same in a large library as in a small one),
then the older matches newest first, page after page without repeats or gaps. Real SQLite."""

from __future__ import annotations

from reader.store import Store, fts_query


async def _library(store: Store) -> dict[str, int]:
    """Eight articles saying "lantern": the oldest in its title (the best match), the
    others only in their summaries; and one that does not say it."""
    feed_id, _ = await store.add_feed("http://127.0.0.1:9/feed.xml", "Lanterns")
    entries = [{"guid": "best", "url": "http://127.0.0.1:9/best", "title": "The lantern", "author": None,
                "summary": "A note.", "summary_text": "A note.", "published": 1_700_000_000.0}]
    entries += [{"guid": f"s{k}", "url": f"http://127.0.0.1:9/s{k}", "title": f"Note {k}", "author": None,
                 "summary": f"<p>Somewhere in a long note about many things, number {k}, a lantern.</p>",
                 "summary_text": f"Somewhere in a long note about many things, number {k}, a lantern.",
                 "published": 1_700_000_100.0 + k} for k in range(7)]
    entries.append({"guid": "none", "url": "http://127.0.0.1:9/none", "title": "Nothing", "author": None,
                    "summary": "No light here.", "summary_text": "No light here.", "published": 1_700_000_200.0})
    for entry in entries:  # one at a time: ids follow the order of arrival
        await store.store_feed_entries(feed_id, title="Lanterns", site_url=None, etag=None, last_modified=None,
                                       entries=[entry])
    return {a["guid"]: a["id"] for a in await store.list_articles(limit=50)}


async def test_the_best_match_leads_when_it_is_among_the_newest_ranked(tmp_path):
    async with await Store.open(tmp_path / "reader.db") as store:
        ids = await _library(store)
        found = await store.search(fts_query("lantern"), limit=50)
        assert found[0]["id"] == ids["best"] and len(found) == 8 and ids["none"] not in [a["id"] for a in found]


async def test_older_matches_than_the_ranked_ones_follow_newest_first(tmp_path):
    async with await Store.open(tmp_path / "reader.db") as store:
        ids = await _library(store)
        found = [a["id"] for a in await store.search(fts_query("lantern"), limit=50, ranked=3)]
        newest = sorted((v for k, v in ids.items() if k != "none"), reverse=True)
        assert sorted(found[:3], reverse=True) == newest[:3]  # the newest three, by relevance
        assert found[3:] == newest[3:]  # then the rest newest first: the old title match last
        assert found[-1] == ids["best"]
        # page by page (two a page, across the ranked/older boundary): the same order
        paged = []
        for offset in range(0, 10, 2):
            paged += [a["id"] for a in await store.search(fts_query("lantern"), limit=2, offset=offset, ranked=3)]
        assert paged == found
